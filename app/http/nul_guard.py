"""Request bodies meet the same guards however they are framed, and NUL characters in request text
are refused: PostgreSQL text cannot store them, so every backend answers the same 422. Path
parameters are checked in the same hook (app.http.path_params: NUL or bytes that are not UTF-8).

A chunked body (Transfer-Encoding: chunked, no Content-Length) is de-chunked by the WSGI server
(gunicorn, Werkzeug's server), which sets `wsgi.input_terminated`. Werkzeug then reads such a body
through a stream bounded by MAX_CONTENT_LENGTH whose `readall` stops at the bound without an error:
`get_data` answers the first MAX_CONTENT_LENGTH bytes of a longer body, silently cut (a 400 "invalid
JSON" at best). So a chunked body is read here, once, up to the bound plus one byte: past the bound
it is 413; otherwise it is handed on as a body of known length, and every later check (this NUL
scan, werkzeug's limits, form parsing, the resume limits) sees the same request as if it had been
sent with Content-Length.
"""

from __future__ import annotations

import io

from flask import current_app, request
from werkzeug.exceptions import ClientDisconnected
from werkzeug.http import parse_set_header

from app.http.api import Blueprint
from app.errors import ApiError, ValidationFailed
from app.http.path_params import refuse_undecodable_path

NUL = "\x00"
NUL_ESCAPE = b"\\u0000"
MESSAGE = "Must not contain NUL (\\u0000) characters."


def paths_with_nul(value, path: str = "") -> list[str]:
    """Dotted paths of the strings (and keys) holding a NUL in a decoded JSON value."""
    if isinstance(value, str):
        return [path or "_schema"] if NUL in value else []
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{path}.{key}" if path else str(key)
            if NUL in str(key):
                found.append(name)
            found += paths_with_nul(item, name)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths_with_nul(item, f"{path}.{index}" if path else str(index))
    return found


READ_PIECE = 64 * 1024
try:  # gunicorn's chunk-framing errors (InvalidChunkSize, ChunkMissingTerminator) are not OSErrors
    from gunicorn.http.errors import ParseException as _ServerParseError
except ImportError:  # pragma: no cover - another server
    _ServerParseError = ValueError
BROKEN_BODY = (OSError, ValueError, _ServerParseError)


def is_chunked(environ) -> bool:
    encoding = environ.get("HTTP_TRANSFER_ENCODING")
    return bool(encoding) and "chunked" in parse_set_header(encoding.lower())


def body_too_large(limit: int) -> ApiError:
    return ApiError(
        413, f"The request body is larger than the {limit} bytes ({limit / 1048576:g} MiB) allowed."
    )


def guard_body():
    """before_request: path parameters that are not UTF-8 or hold a NUL refused
    (app.http.path_params), a chunked body de-chunked within its bound, then NULs refused (one hook,
    one request lookup)."""
    req = request._get_current_object()
    refuse_undecodable_path(req)
    buffer_chunked_body(req)
    refuse_nul_characters(req)


def buffer_chunked_body(req) -> None:
    """Read a chunked body through the MAX_CONTENT_LENGTH bound (413 past it) and hand it on with a
    Content-Length. A server that does not de-chunk (no `wsgi.input_terminated`) gets an empty body
    from werkzeug, so nothing of it is read by anyone; that is left as it is."""
    environ = req.environ
    if not is_chunked(environ) or not environ.get("wsgi.input_terminated"):
        return
    limit = req.max_content_length
    source = environ["wsgi.input"]
    pieces: list[bytes] = []
    size = 0
    while True:
        try:
            piece = source.read(READ_PIECE if limit is None else min(READ_PIECE, limit + 1 - size))
        # a malformed chunk, or the client gone mid-body: 400, as werkzeug answers it
        except BROKEN_BODY:
            raise ClientDisconnected() from None
        if not piece:
            break
        pieces.append(piece)
        size += len(piece)
        if limit is not None and size > limit:
            raise body_too_large(limit)
    body = b"".join(pieces)
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    # de-chunked: the header no longer describes wsgi.input
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    # werkzeug caches these on the request; drop any read before now
    for cached in ("content_length", "stream"):
        req.__dict__.pop(cached, None)


def refuse_nul_characters(req) -> None:
    """Query string, form fields and JSON body; blueprints built with reads_raw_body=True opt
    out."""
    environ = req.environ
    # a chunked body has one by now (buffer_chunked_body)
    has_body = environ.get("CONTENT_LENGTH", "0") not in ("", "0")
    if not has_body and not environ.get("QUERY_STRING"):
        return  # most GETs: nothing to look at
    blueprint = current_app.blueprints.get(req.blueprint or "")
    # declared where the blueprint is built
    if isinstance(blueprint, Blueprint) and blueprint.reads_raw_body:
        return
    found = (
        [key for key, value in req.args.items(multi=True) if NUL in key or NUL in value]
        if req.query_string
        else []
    )
    if has_body and req.mimetype in ("multipart/form-data", "application/x-www-form-urlencoded"):
        found += [key for key, value in req.form.items(multi=True) if NUL in key or NUL in value]
    elif has_body and req.is_json and req.content_length and NUL_ESCAPE in req.get_data(cache=True):
        # valid JSON carries a NUL only as this escape: the route decodes the body anyway, so decode
        # here only then
        found += paths_with_nul(req.get_json(silent=True))
    if found:
        raise ValidationFailed({name: [MESSAGE] for name in found})


def init_app(app) -> None:
    app.before_request(guard_body)
