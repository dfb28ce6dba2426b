"""Logs an operator can query: JSON lines with request id, tenant (never the key), route, status and
duration; API keys in URLs redacted."""

from __future__ import annotations

import json
import logging
import random
import re
import time

from urllib.parse import unquote_plus

from flask import g, has_request_context, request
from gunicorn.glogging import Logger as GunicornLogger

from app.data.tenancy import KEY_PREFIX, MIN_KEY_BODY_LENGTH

request_log = logging.getLogger("hirekit.request")

REQUEST_ID_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,64}$")

STANDARD_ATTRIBUTES = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "request_id",
}


class RequestContextFilter(logging.Filter):
    """Stamps every record with the request id and tenant of the request it was logged in."""

    def filter(self, record):
        if has_request_context():
            record.request_id = g.get("request_id", "-")
            caller = g.get("caller")
            record.tenant_id = caller.tenant_id if caller else None
        else:
            record.request_id = getattr(record, "request_id", "-")
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line; extra attributes passed with `extra=` become fields. Times are UTC
    (the Z says so)."""

    converter = time.gmtime

    def format(self, record):
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
        }
        for key, value in record.__dict__.items():
            if key not in STANDARD_ATTRIBUTES and key not in entry and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            # exc_text: as a filter left it
            entry["exception"] = record.exc_text or self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


# An API key sent in a URL (PDL's SDKs send `api_key=` on GET) must not reach a log line: the access
# log's request line, query and referer, gunicorn's error log (a malformed request line is quoted
# whole), and the development server's request line are redacted; the request log above records the
# path only. A parameter is known by its name as the app reads it, percent-decoded ('+' a space):
# `%61pi_key=` and `api_k%65y=` authenticate as `api_key=` does. Anything shaped like a Hirekit key
# (app.data.tenancy: hk_ and 32+ URL-safe characters) is redacted wherever it stands.
URL_PARAMETER = re.compile(r"(?<![^?&;\s'\"])([^=&;#?\s'\"]+)=([^&;#\s\"]*)")
KEY_PARAMETER_NAME = "api_key"
KEY_SHAPED = re.compile(re.escape(KEY_PREFIX) + r"[A-Za-z0-9_-]{%d,}" % MIN_KEY_BODY_LENGTH)
REDACTED = "[redacted]"
KEY_HEADER_ATOMS = (
    "{x-api-key}i",
    "{authorization}i",
    "{http_x_api_key}e",
    "{http_authorization}e",
)
URL_ATOMS = ("r", "q", "f", "{query_string}e", "{raw_uri}e", "{http_referer}e")


def _redact_key_parameter(match: re.Match) -> str:
    name = match.group(1)
    return (
        f"{name}={REDACTED}" if unquote_plus(name).lower() == KEY_PARAMETER_NAME else match.group(0)
    )


def redact_keys(text: str) -> str:
    """The text with the value of every api_key parameter (however its name is percent-encoded), and
    every key-shaped token, replaced by [redacted]."""
    if "=" in text:
        text = URL_PARAMETER.sub(_redact_key_parameter, text)
    if KEY_PREFIX in text:
        text = KEY_SHAPED.sub(REDACTED, text)
    return text


# What would break the JSON access line (deploy/gunicorn.conf.py) inside a string, besides the `"`
# gunicorn escapes: a backslash (a User-Agent ending in `\` would escape the closing quote) and
# control characters.
JSON_UNSAFE = re.compile(r'[\\\x00-\x1f\x7f]')
JSON_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class RedactingGunicornLogger(GunicornLogger):
    """gunicorn's logger whose access-log atoms and error-log messages never carry an API key
    (deploy/gunicorn.conf.py sets it as logger_class)."""

    def setup(self, cfg):
        # (re)configures gunicorn's loggers, also on a reload: the filter goes on again if lost
        super().setup(cfg)
        if not any(isinstance(f, KeyRedactingFilter) for f in self.error_log.filters):
            self.error_log.addFilter(KeyRedactingFilter())

    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        for name in URL_ATOMS:
            if isinstance(atoms.get(name), str):
                atoms[name] = redact_keys(atoms[name])
        for name in KEY_HEADER_ATOMS:
            if name in atoms:
                atoms[name] = REDACTED
        # gunicorn escapes `"` itself (SafeAtoms): the rest of JSON's escaping here
        for name, value in atoms.items():
            if isinstance(value, str) and JSON_UNSAFE.search(value):
                atoms[name] = JSON_UNSAFE.sub(
                    lambda found: JSON_ESCAPES.get(found[0], f"\\u{ord(found[0]):04x}"), value
                )
        return atoms


class KeyRedactingFilter(logging.Filter):
    """Redacts keys from a record's message, arguments and traceback (werkzeug's development server
    logs request lines; gunicorn's error log quotes a malformed request line, or an exception naming
    the request's URI)."""

    def filter(self, record):
        if isinstance(record.msg, str):
            record.msg = redact_keys(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(
                redact_keys(str(a)) if isinstance(a, (str, BaseException)) else a
                for a in record.args
            )
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_keys(logging.Formatter().formatException(record.exc_info))
        return True


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"


def configure_logging(app) -> None:
    """One handler on the `hirekit` logger, JSON by default (HIREKIT_LOG_FORMAT=text for a
    terminal)."""
    root = logging.getLogger("hirekit")
    for handler in list(root.handlers):
        if getattr(handler, "hirekit", False):
            root.removeHandler(handler)
    handler = logging.StreamHandler()
    handler.hirekit = True
    handler.setFormatter(
        JsonFormatter() if app.config["LOG_FORMAT"] == "json" else logging.Formatter(TEXT_FORMAT)
    )
    handler.addFilter(RequestContextFilter())
    root.addHandler(handler)
    root.setLevel(app.config["LOG_LEVEL"])
    root.propagate = app.config.get("LOG_PROPAGATE", True)
    server_log = logging.getLogger("werkzeug")
    if not any(isinstance(f, KeyRedactingFilter) for f in server_log.filters):
        server_log.addFilter(KeyRedactingFilter())


def new_request_id() -> str:
    """32 random hex digits, as uuid4().hex reads. A request id names a request in logs and is no
    secret (clients send their own), so it comes from the process's PRNG (reseeded in each forked
    worker), not os.urandom: that is a system call, which releases the GIL and, with the worker's
    other threads waiting for it, costs a thread switch."""
    return f"{random.getrandbits(128):032x}"


def install_request_context(app) -> None:
    """Every request gets an id (the client's X-Request-Id when sane), echoed in the response and on
    one log line with route, status, duration and tenant."""

    @app.before_request
    def _start_request():
        ctx = g._get_current_object()
        incoming = request.environ.get("HTTP_X_REQUEST_ID", "")
        ctx.request_id = (
            incoming if incoming and REQUEST_ID_PATTERN.match(incoming) else new_request_id()
        )
        ctx.started_at = time.perf_counter()

    @app.after_request
    def _finish_request(response):
        # no view sets it: add, not replace
        response.headers.add("X-Request-Id", g.get("request_id") or new_request_id())
        if request_log.isEnabledFor(logging.INFO):
            started = g.get("started_at")
            request_log.info(
                "%s %s %s",
                request.method,
                request.path,
                response.status_code,
                extra={
                    "method": request.method,
                    "route": request.url_rule.rule if request.url_rule else None,
                    "path": request.path,
                    "status": response.status_code,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 2)
                    if started
                    else None,
                    "remote_addr": request.remote_addr,
                },
            )
        return response
