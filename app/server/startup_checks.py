"""What stops a server, a worker or an operator command before it starts, said in one `Error:` line
instead of a traceback: the port already taken, no server secret, a database URL of an unknown
scheme, a database that does not exist or refuses connections, plugins that cannot be enabled
together, held MCP confirmations that would take every request thread."""

from __future__ import annotations

import errno
import os
import socket
from urllib.parse import urlsplit, urlunsplit

from app.data.db import DatabaseUrlError, check_database_url
from app.plugins import PluginError
from app.security.secret_key import MissingSecretKey

# raised while the app is built (wsgi.py, app.server.console_scripts): reported as their message
# alone
STARTUP_ERRORS = (MissingSecretKey, DatabaseUrlError, PluginError)


def without_password(url: str) -> str:
    """A database or Redis URL as it may be printed: its password replaced by ***."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def database_unusable(error: Exception, url: str) -> str:
    """One line for a database that does not exist, refuses connections or refuses the
    credentials."""
    reason = " ".join(str(error).split()).rstrip(".") or type(error).__name__
    return (
        f"cannot use the database {without_password(url)} ({reason}): check HIREKIT_DATABASE_URL "
        "(unset, the "
        "embedded SQLite file under the instance directory is used), and that the database exists "
        "(createdb NAME) and its server is running; see docs/operating-troubleshooting.md"
    )


def port_in_use(address: tuple[str, int]) -> str | None:
    """The one-line error when another process listens on `address`, else None."""
    host, port = address
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # as gunicorn binds: a TIME_WAIT port is free
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                return None  # gunicorn reports anything else itself
            return (
                f"{host}:{port} is already in use (another `make run` or server?): stop it, or "
                "serve on another "
                f"port with HIREKIT_PORT={port + 1} (or HIREKIT_BIND)"
            )
    return None


def before_serving(server) -> None:
    """gunicorn's on_starting hook: the arbiter checks, once and before any worker forks, what every
    worker would otherwise fail on one by one (a traceback each): the listening port, the server
    secret, the database URL, the plugins. RuntimeError is what gunicorn prints as a single `Error:`
    line before exiting with status 1."""
    from app.config import load_config
    from app.plugins import resolve
    from app.security.secret_key import require

    # re-exec or systemd socket: bound
    inherited = os.environ.get("GUNICORN_FD") or os.environ.get("LISTEN_FDS")
    if not inherited and not server.cfg.reuse_port:
        for address in server.cfg.address:
            problem = port_in_use(address) if isinstance(address, tuple) else None
            if problem:
                raise RuntimeError(problem)
    try:
        config = load_config()
        check_database_url(config["DATABASE_URL"])
        require(config)
        plugins = resolve(config["PLUGINS"])
    except STARTUP_ERRORS as error:
        raise RuntimeError(str(error)) from None
    for plugin in plugins:
        for check in plugin.serving_checks:
            problem = check(config, server.cfg.threads)
            if problem:
                raise RuntimeError(problem)
