"""The plugin registry: each endpoint family is a package exposing PLUGIN, selected by
HIREKIT_PLUGINS."""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from typing import Callable

# the package whose subpackages are the families; its CORE and FAMILIES name them in order
PACKAGE = "plugins"


@dataclass(frozen=True)
class Tasks:
    """A family's background work, as the worker reads it: the queues its jobs go to, and the
    periodic passes (app.background.periodic.PeriodicJob, e.g. reapers) a worker serving their queue
    starts."""

    queues: tuple = ()
    periodic: tuple = ()


@dataclass(frozen=True)
class EventType:
    """An event a family emits (app.data.events.emit): its type, the schema its record is dumped
    with (whose fields a webhook may select), and a sample record's values where a field's type
    alone would say little (a test event's)."""

    name: str
    record_schema: type | None = None
    samples: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True)
class Plugin:
    """What a family brings: blueprints (auth scheme on each), models for migrations, needs,
    background work."""

    name: str
    blueprints: tuple = ()
    models: tuple = ()
    needs: tuple = ()
    tasks: Tasks = Tasks()
    # config name of the family's own limit, else the default limit applies
    rate_limit: str | None = None
    init_app: Callable | None = None
    cli: tuple = field(default=())
    # lists whose totals the database keeps (app.data.row_counts): (list name, the one filter its
    # buckets answer or None); a list named here is its table's rows of the tenant, and a migration
    # keeps the table's counts
    counted_lists: tuple[tuple[str, str | None], ...] = ()
    event_types: tuple[EventType, ...] = ()  # the events the family emits
    # what gunicorn's arbiter checks before any worker starts: check(config, request threads per
    # worker) -> the one-line error that stops the server, or None
    serving_checks: tuple[Callable[[dict, int], str | None], ...] = ()


class PluginError(RuntimeError):
    """A configuration mistake that must stop start-up with a clear message."""


def module_path(name: str) -> str:
    return f"{PACKAGE}.{name}"


def _declared(attribute: str) -> tuple[str, ...]:
    return tuple(getattr(importlib.import_module(PACKAGE), attribute, ()))


def core() -> tuple[str, ...]:
    """The families always on, registered first whatever HIREKIT_PLUGINS selects (the package's
    CORE)."""
    return _declared("CORE")


def selectable() -> tuple[str, ...]:
    """The families HIREKIT_PLUGINS selects from, in their registration order (the package's
    FAMILIES)."""
    return _declared("FAMILIES")


def available() -> list[str]:
    """The families whose packages are present, in their canonical order: the default selection."""
    found = []
    for name in selectable():
        spec = importlib.util.find_spec(module_path(name))
        # a folder without __init__.py is not a plugin yet
        if spec is not None and spec.origin is not None:
            found.append(name)
    return found


def load_plugin(name: str) -> Plugin:
    if name not in selectable() and name not in core():
        raise PluginError(
            f"unknown plugin {name!r} in HIREKIT_PLUGINS; available: {', '.join(selectable())}"
        )
    plugin = importlib.import_module(module_path(name)).PLUGIN
    if plugin.name != name:
        raise PluginError(f"plugin module {name!r} declares the name {plugin.name!r}")
    return plugin


def resolve(names) -> list[Plugin]:
    """The core plugins, then the selected ones in dependency order; an unknown name or a missing
    need is a PluginError."""
    selected = [n.strip() for n in names if n and n.strip()]
    plugins = {name: load_plugin(name) for name in (*core(), *selected)}
    for plugin in plugins.values():
        missing = [need for need in plugin.needs if need not in plugins]
        if missing:
            raise PluginError(
                f"plugin {plugin.name!r} needs {', '.join(repr(m) for m in missing)}: add it to "
                "HIREKIT_PLUGINS"
            )
    ordered: list[Plugin] = []

    def visit(plugin: Plugin):
        if plugin in ordered:
            return
        for need in plugin.needs:
            visit(plugins[need])
        ordered.append(plugin)

    for plugin in plugins.values():
        visit(plugin)
    return ordered


def default_queues(plugins) -> list[str]:
    """The queues a worker serves when HIREKIT_QUEUES is unset: those the plugins send their jobs to
    (Tasks.queues), in the plugins' order, then the core's own."""
    from app.background.queue import DEFAULT_QUEUE

    named = [name for plugin in plugins for name in plugin.tasks.queues]
    return list(dict.fromkeys([*named, DEFAULT_QUEUE]))


def all_models() -> list:
    """Every model of every plugin, enabled or not: the schema that migrations describe."""
    from app.data import events, tenancy, tombstones
    from app.http import idempotency

    models = (
        list(tenancy.MODELS)
        + list(events.MODELS)
        + list(idempotency.MODELS)
        + list(tombstones.MODELS)
    )
    for name in (*core(), *available()):
        plugin = load_plugin(name)
        models.extend(m for m in plugin.models if m not in models)
    return models


def event_types(plugins) -> dict[str, EventType]:
    """The plugins' event types by name, those of the package's EVENT_ORDER families first in that
    order, then the others in the plugins' order; one type declared twice is a PluginError."""
    by_name = {plugin.name: plugin for plugin in plugins}
    first = [by_name[name] for name in _declared("EVENT_ORDER") if name in by_name]
    found: dict[str, EventType] = {}
    for plugin in [*first, *(plugin for plugin in plugins if plugin not in first)]:
        for event_type in plugin.event_types:
            if event_type.name in found:
                raise PluginError(
                    f"event type {event_type.name!r} is declared twice (plugin {plugin.name!r})"
                )
            found[event_type.name] = event_type
    return found


def register(app, api, plugins: list[Plugin]) -> None:
    """Register each plugin's blueprints with their auth scheme and limits, then its own init hook.
    The event types are known first, and a blueprint's documentation is built inside the app's
    context: a validator of event types (app.data.events.DeclaredEventType) gives the OpenAPI
    document its enum from them."""
    from app.security import auth, limits

    app.extensions["hirekit_event_types"] = event_types(plugins)
    for plugin in plugins:
        for blueprint in plugin.blueprints:
            scheme = getattr(blueprint, "auth", None)
            if scheme:
                auth.protect(app, blueprint.name, scheme)
            if plugin.rate_limit:
                limits.apply_limit(app, blueprint, plugin.rate_limit)
            if hasattr(blueprint, "register_views_in_doc"):
                with app.app_context():
                    api.register_blueprint(blueprint)
            else:
                app.register_blueprint(blueprint)
        if plugin.init_app:
            plugin.init_app(app)
    app.extensions["hirekit_plugins"] = {plugin.name: plugin for plugin in plugins}
    app.extensions["hirekit_counted_lists"] = {
        name: bucket for plugin in plugins for name, bucket in plugin.counted_lists
    }


def enabled(app, name: str) -> bool:
    return name in app.extensions.get("hirekit_plugins", {})
