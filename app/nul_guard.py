"""Refuse NUL characters in request text: PostgreSQL text cannot store them, so every backend answers the same 422."""

from __future__ import annotations

from flask import current_app, request

from app.errors import ValidationFailed

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


def refuse_nul_characters():
    """before_request: query string, form fields and JSON body; blueprints that parse their own body opt out."""
    req = request._get_current_object()
    environ = req.environ
    has_body = environ.get("CONTENT_LENGTH", "0") not in ("", "0") or "HTTP_TRANSFER_ENCODING" in environ
    if not has_body and not environ.get("QUERY_STRING"):
        return  # most GETs: nothing to look at
    blueprint = current_app.blueprints.get(req.blueprint or "")
    if getattr(blueprint, "reads_raw_body", False):
        return
    found = [key for key, value in req.args.items(multi=True) if NUL in key or NUL in value] if req.query_string else []
    if has_body and req.mimetype in ("multipart/form-data", "application/x-www-form-urlencoded"):
        found += [key for key, value in req.form.items(multi=True) if NUL in key or NUL in value]
    elif has_body and req.is_json and req.content_length and NUL_ESCAPE in req.get_data(cache=True):
        # valid JSON carries a NUL only as this escape: the route decodes the body anyway, so decode here only then
        found += paths_with_nul(req.get_json(silent=True))
    if found:
        raise ValidationFailed({name: [MESSAGE] for name in found})


def init_app(app) -> None:
    app.before_request(refuse_nul_characters)
