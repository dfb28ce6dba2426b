"""App construction compiles each route's URL builders once per process (app/http/url_rules.py), and the shared
builders build the URLs werkzeug's own would, on every route of the app."""

from __future__ import annotations

from werkzeug.routing import IntegerConverter, Rule

from app.http.url_rules import SharedBuilderRule


def sample_values(rule: Rule) -> dict:
    return {name: 7 if isinstance(converter, IntegerConverter) else "a b/é"
            for name, converter in rule._converters.items()}


def test_a_second_app_reuses_the_first_ones_builders(make_app):
    first, second = make_app(), make_app()
    firsts = {rule.rule: rule for rule in first.url_map.iter_rules()}
    shared = [rule for rule in second.url_map.iter_rules() if not rule.defaults]
    assert len(shared) > 50 and all(isinstance(rule, SharedBuilderRule) for rule in shared)
    for rule in shared:
        assert rule._build.__func__ is firsts[rule.rule]._build.__func__
        assert rule._build_unknown.__func__ is firsts[rule.rule]._build_unknown.__func__


def test_the_shared_builders_build_what_werkzeugs_own_build(make_app):
    app = make_app()
    make_app()  # the second app's rules take the cached builders
    for rule in app.url_map.iter_rules():
        for append_unknown, values in ((False, sample_values(rule)), (True, {**sample_values(rule), "q": "5 0&x"})):
            own = Rule._compile_builder(rule, append_unknown).__get__(rule, None)
            assert rule.build(values, append_unknown) == own(**values)

