"""The application factory: config, database, auth, limits, queue, OpenAPI, plugins, CLI and error
handlers."""

from __future__ import annotations

from flask import Flask
from flask.sessions import NullSession, SessionInterface
from werkzeug.exceptions import NotFound
from werkzeug.routing import Map, RequestRedirect

from app import errors
from app.background import queue
from app.config import load_config
from app.data import db, events
from app.http import idempotency, metrics, nul_guard
from app.http.api import init_api
from app.http.json import OrjsonProvider
from app.plugins import default_queues, register, resolve
from app.security import auth, fair_share, limits, secret_key
from app.server.observability import configure_logging, install_request_context


class ExactPathMap(Map):
    """Paths are matched as sent: werkzeug's default merges `//` into `/` by answering an HTML 308
    redirect, before authentication; here `/v1/jobs//scheduling` matches no route (the one JSON
    404)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("merge_slashes", False)
        super().__init__(*args, **kwargs)


class NoSessionInterface(SessionInterface):
    """No cookie session at all: no route keeps state between requests (callers authenticate with a
    key on every request), so every request gets the one shared, empty, read-only NullSession, a
    cookie it sends is never decoded and no answer sets one. Flask's signed-cookie session opened,
    and checked after the view, an object per request: 3 % of a GET by id's CPU in-process."""

    null_session = NullSession()

    def open_session(self, app, request):
        return self.null_session

    def is_null_session(self, obj) -> bool:
        return obj is self.null_session

    def save_session(self, app, session, response) -> None:
        return None


class HirekitFlask(Flask):
    """Flask with paths matched exactly, no cookie session and no routing redirects (each through
    the attribute or method Flask documents for it)."""

    url_map_class = ExactPathMap
    session_interface = NoSessionInterface()

    def raise_routing_exception(self, request):
        """No routing redirect ever reaches a client: Flask answers werkzeug's RequestRedirect (a
        `strict_slashes` rule asked for without its trailing slash) as an HTML 308 without the error
        handlers; it is a 404 here."""
        if isinstance(request.routing_exception, RequestRedirect):
            raise NotFound()
        super().raise_routing_exception(request)


def _serves_or_works() -> bool:
    """Whether this process will serve requests or run jobs, so it needs the server secret: gunicorn
    (wsgi:app), worker.py, `flask run`, tests. The flask CLI's other commands (demo setup, db
    upgrade, tenants, keys, person) sign nothing, and demo setup is what generates the embedded
    secret, so they run without one."""
    import click

    context = click.get_current_context(silent=True)
    return context is None or context.command.name == "run"


def create_app(config: dict | None = None) -> Flask:
    """Build the app; `config` (a mapping) wins over environment and files, which is how tests
    configure it."""
    app = HirekitFlask(__name__, instance_relative_config=False)
    app.json = OrjsonProvider(app)
    settings = load_config(config)
    app.config.update(settings)
    if _serves_or_works():
        secret_key.require(app.config)
    app.config["MAX_CONTENT_LENGTH"] = max(
        app.config["MAX_CONTENT_LENGTH"], app.config["MAX_RESUME_BYTES"] * 2
    )
    configure_logging(app)
    plugins = resolve(app.config["PLUGINS"])
    if app.config["QUEUES"] is None:
        app.config["QUEUES"] = default_queues(plugins)

    if app.config["BEHIND_PROXY"]:
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=1, x_proto=1, x_host=1, x_prefix=1)

    install_request_context(app)
    errors.init_app(app)
    db.init_app(app)
    auth.init_app(app)  # before the limiter: limits are keyed by the resolved caller
    limits.build_limiter(app)
    # after the limiter: a tenant over its rate is refused without waiting for a thread
    fair_share.init_app(app)
    # after auth and limits: a bad key is 401 and a flood 429 before the body is read
    nul_guard.init_app(app)
    # after nul_guard: the key's fingerprint reads the de-chunked, guarded body
    idempotency.init_app(app)
    events.init_app(app)
    queue.init_app(app)
    metrics.init_app(app)
    api = init_api(app)
    app.extensions["hirekit_api"] = api
    # for commands that build another app (openapi write) without importing app
    app.extensions["hirekit_factory"] = create_app

    from app.http.health import blp as health_blp

    api.register_blueprint(health_blp)
    limits.exempt(app, health_blp)
    register(app, api, plugins)

    from app.cli import register_commands

    register_commands(app)
    return app
