"""URL rules that compile their URL builders once per process: werkzeug turns every rule into two builder functions
with `ast` and `compile()` each time an app is made, most of `create_app`'s time (each CLI command, worker and test
builds an app)."""

from __future__ import annotations

from werkzeug.routing import Rule


class SharedBuilderRule(Rule):
    """A werkzeug Rule whose builder functions are kept per process, keyed by what werkzeug makes them from: the rule's
    text and its parsed trace (host or subdomain part included). A builder takes its rule as its first argument and
    looks the converters up on it, so rules of different apps share one safely. A rule with defaults folds them into
    its builder, so it is compiled as werkzeug does."""

    _builders: dict[tuple, object] = {}

    def _compile_builder(self, append_unknown: bool = True):
        if self.defaults:
            return super()._compile_builder(append_unknown)
        key = (self.rule, tuple(self._trace), append_unknown)
        builder = self._builders.get(key)
        if builder is None:
            builder = self._builders[key] = super()._compile_builder(append_unknown)
        return builder
