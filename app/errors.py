"""One JSON error body for every failure: {"status": N, "error": {"type", "message", "fields"?}}."""

from __future__ import annotations

import logging

import marshmallow as ma
import peewee as pw
from playhouse.pool import MaxConnectionsExceeded
from flask import g, jsonify
from werkzeug.exceptions import HTTPException

log = logging.getLogger("hirekit.errors")

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "rate_limit_error",
    502: "upstream_error",
    503: "service_unavailable",
}

RETRY_AFTER_SECONDS = {503: "5"}


class ApiError(Exception):
    """A failure a route or service raises on purpose; rendered as the one error body."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        fields: dict | None = None,
        type: str | None = None,
        headers: dict | None = None,
        extra: dict | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.fields = fields
        self.type = type or ERROR_TYPES.get(status, "api_error")
        self.headers = headers or {}
        self.extra = extra or {}


class NotFound(ApiError):
    def __init__(self, what: str, ident=None):
        message = f"{what} {ident} not found" if ident is not None else f"{what} not found"
        super().__init__(404, message)


class Conflict(ApiError):
    def __init__(self, message: str, *, existing_id=None):
        super().__init__(
            409,
            message,
            extra={"existing_id": str(existing_id)} if existing_id is not None else None,
        )


class ExistingRecordConflict(Conflict):
    """What the database refused as a duplicate (a unique index: another write got there first), as
    REST, batch items and MCP tools answer it."""

    def __init__(self):
        super().__init__("The record conflicts with one that already exists.")


class ValidationFailed(ApiError):
    def __init__(self, fields: dict, message: str | None = None):
        super().__init__(422, message or summarize_fields(fields), fields=fields)

    @classmethod
    def of(cls, error: ma.ValidationError) -> "ValidationFailed":
        """marshmallow's errors as the 422 REST answers (a schema-level list goes under
        `_schema`)."""
        return cls(
            error.messages if isinstance(error.messages, dict) else {"_schema": error.messages}
        )


def summarize_fields(fields: dict) -> str:
    """'title: Missing data for required field.' for the first few fields: the message a person
    reads."""
    flat = flatten_fields(fields)
    parts = [f"{name}: {' '.join(messages)}" for name, messages in list(flat.items())[:3]]
    more = len(flat) - len(parts)
    text = "; ".join(parts) or "Invalid input."
    return text + (f" (and {more} more)" if more > 0 else "")


def flatten_fields(messages, prefix: str = "") -> dict[str, list[str]]:
    """Nested marshmallow messages -> {"a.b": ["..."]}; webargs' location level (json, query, form)
    is dropped."""
    flat: dict[str, list[str]] = {}
    if isinstance(messages, list):
        if all(isinstance(m, str) for m in messages):
            flat[prefix or "_schema"] = list(messages)
            return flat
        for index, item in enumerate(messages):
            flat.update(flatten_fields(item, f"{prefix}.{index}" if prefix else str(index)))
        return flat
    if isinstance(messages, dict):
        for key, value in messages.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            flat.update(flatten_fields(value, name))
        return flat
    flat[prefix or "_schema"] = [str(messages)]
    return flat


def strip_locations(messages: dict) -> dict:
    """webargs keys its messages by location ({"json": {...}}); clients want the field names."""
    merged: dict = {}
    for location in (
        "json",
        "query",
        "form",
        "files",
        "view_args",
        "path",
        "headers",
        "json_or_form",
    ):
        value = messages.get(location) if isinstance(messages, dict) else None
        if isinstance(value, dict):
            merged.update(value)
        elif value is not None:
            merged.setdefault("_schema", []).extend(value if isinstance(value, list) else [value])
    if not merged and isinstance(messages, dict):
        merged = messages
    return merged


def error_response(
    status: int,
    message: str,
    *,
    type: str | None = None,
    fields: dict | None = None,
    headers: dict | None = None,
    extra: dict | None = None,
):
    """The one error body, with Retry-After on 503 unless the caller set it."""
    response = jsonify(
        {
            "status": status,
            "error": error_detail(status, message, type=type, fields=fields, extra=extra),
        }
    )
    response.status_code = status
    for name, value in (headers or {}).items():
        response.headers[name] = value
    if status in RETRY_AFTER_SECONDS and "Retry-After" not in response.headers:
        response.headers["Retry-After"] = RETRY_AFTER_SECONDS[status]
    if (
        status == 401
        and "WWW-Authenticate" not in response.headers
        and g.get("auth_scheme") == "bearer"
    ):
        response.headers["WWW-Authenticate"] = 'Bearer realm="hirekit"'
    return response


def error_detail(
    status: int,
    message: str,
    *,
    type: str | None = None,
    fields: dict | None = None,
    extra: dict | None = None,
) -> dict:
    """The `error` object of the one error body: type, message, flattened fields, extras
    (existing_id)."""
    error = {"type": type or ERROR_TYPES.get(status, "api_error"), "message": message}
    if fields:
        error["fields"] = flatten_fields(fields)
    if extra:
        error.update(extra)
    return error


def handle_http_exception(error: HTTPException):
    """werkzeug and flask-smorest aborts; webargs puts validation messages in error.data."""
    data = getattr(error, "data", None) or {}
    status = error.code or 500
    fields = None
    messages = data.get("errors") or data.get("messages")
    if messages:
        fields = strip_locations(messages)
    message = data.get("message")
    if status == 400 and fields and "_schema" in fields and not message:
        message = " ".join(fields.pop("_schema"))
    if not message:
        message = (
            summarize_fields(fields)
            if fields and status == 422
            else (error.description or error.name)
        )
    headers = dict(data.get("headers") or {})
    if status == 405 and getattr(error, "valid_methods", None):
        headers["Allow"] = ", ".join(sorted(error.valid_methods))
    return error_response(status, message, fields=fields or None, headers=headers)


def handle_api_error(error: ApiError):
    return error_response(
        error.status,
        error.message,
        type=error.type,
        fields=error.fields,
        headers=error.headers,
        extra=error.extra,
    )


def handle_marshmallow_error(error: ma.ValidationError):
    return handle_api_error(ValidationFailed.of(error))


def handle_integrity_error(error: pw.IntegrityError):
    log.info("integrity error: %s", error)
    return handle_api_error(ExistingRecordConflict())


# PostgreSQL's SQLSTATEs for a transaction rolled back because it raced another: deadlock_detected
# and serialization_failure. The database answered: it is a conflict to retry, not a database out of
# reach.
TRANSACTION_ROLLBACK_CODES = frozenset({"40P01", "40001"})


def driver_error_code(error: Exception) -> str | None:
    """The SQLSTATE of the driver's error a peewee error wraps (peewee passes it as its first
    argument)."""
    original = (
        error.args[0] if error.args and isinstance(error.args[0], Exception) else error.__context__
    )
    return getattr(original, "pgcode", None)


def handle_database_unavailable(error: Exception):
    if driver_error_code(error) in TRANSACTION_ROLLBACK_CODES:
        log.warning(
            "transaction rolled back by a concurrent one [%s]: %s", g.get("request_id"), error
        )
        return error_response(
            409,
            "This write conflicted with a concurrent write to the same records and was rolled "
            "back; nothing of it was kept. Retry it.",
            headers={"Retry-After": "1"},
        )
    log.error("database unavailable [%s]: %s", g.get("request_id"), error)
    return error_response(503, "The database is not reachable right now; retry shortly.")


def handle_redis_unavailable(error: Exception):
    log.error("redis unavailable [%s]: %s", g.get("request_id"), error)
    return error_response(
        503, "The queue or rate-limit store (Redis) is not reachable right now; retry shortly."
    )


def handle_unexpected(error: Exception):
    if isinstance(error, HTTPException):
        return handle_http_exception(error)
    log.exception("unhandled error [%s]", g.get("request_id"))
    return error_response(
        500, f"Internal error; quote request id {g.get('request_id')} to support."
    )


def init_app(app) -> None:
    app.register_error_handler(ApiError, handle_api_error)
    app.register_error_handler(ma.ValidationError, handle_marshmallow_error)
    app.register_error_handler(pw.IntegrityError, handle_integrity_error)
    app.register_error_handler(pw.OperationalError, handle_database_unavailable)
    app.register_error_handler(pw.InterfaceError, handle_database_unavailable)
    # every pooled connection busy 10 s
    app.register_error_handler(MaxConnectionsExceeded, handle_database_unavailable)
    app.register_error_handler(HTTPException, handle_http_exception)
    try:
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError
    except ImportError:  # pragma: no cover - redis is a dependency
        pass
    else:
        app.register_error_handler(RedisConnectionError, handle_redis_unavailable)
        app.register_error_handler(RedisTimeoutError, handle_redis_unavailable)
    app.register_error_handler(Exception, handle_unexpected)
