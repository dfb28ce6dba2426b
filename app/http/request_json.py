"""Request JSON is read in one place, within bounds every route shares, so no body reaches a 500.

Every JSON request body (Flask's `request.get_json` through app.http.json's provider, and webargs'
`@blp.arguments` through BoundedJsonParser), and the JSON text of a multipart form field
(`loads_form_value`), is decoded by `loads_request`:

- Objects and arrays nest at most MAX_JSON_DEPTH (100) levels: deeper is 400, before any code walks
  the value (Python's recursion limit is 1,000 frames; the standard library's json recursed past it
  at ~1,000 levels, and orjson's serializer stops at 254). Person queries nest at most 20 clauses
  (~66 JSON levels), well inside it.
- A number's magnitude is below 1.8e308 (a 64-bit float): a larger one (309 digits or more; 4,300
  made the standard library raise) is 422 naming its field. Integers past 64 bits are read as
  floats, and every integer field has its own range (app.http.fields.BoundedInteger).
- Text is Unicode: a lone UTF-16 surrogate (`"\\ud800"` outside a pair, or its raw bytes) cannot be
  stored by either database, so it is 422 naming its field.
- Anything else that is not JSON (NaN, Infinity, bad UTF-8, syntax) is orjson's JSONDecodeError,
  which callers answer as before (webargs: 400 "Invalid JSON body.").

orjson decodes (fast, and it refuses surrogates and infinite numbers itself); only when it refuses
one of those is the body decoded again by the standard library, to name the fields.
"""

from __future__ import annotations

import json
import math

import orjson
from marshmallow.utils import missing
from webargs.flaskparser import FlaskParser, abort, is_json_request

from app.errors import ApiError, ValidationFailed

# levels of objects and arrays in one JSON value; a request nesting deeper is refused (400)
MAX_JSON_DEPTH = 100
DEPTH_MESSAGE = (
    f"The JSON sent nests objects and arrays more than {MAX_JSON_DEPTH} levels deep; at most "
    f"{MAX_JSON_DEPTH} are accepted."
)
SURROGATE_MESSAGE = (
    "Must be valid Unicode text: a lone UTF-16 surrogate (\\ud800-\\udfff outside a pair) cannot "
    "be "
    "stored."
)
NUMBER_MESSAGE = (
    "Number out of range: a JSON number's magnitude must be below 1.8e308 (a 64-bit float)."
)
BOUNDS_DESCRIPTION = (
    f"JSON bodies nest at most {MAX_JSON_DEPTH} levels (400 beyond); a number of magnitude 1.8e308 "
    "or more, or text with a lone UTF-16 surrogate, is 422 naming its field."
)

# what orjson says when it refuses something the standard library reads, so that the fields can be
# named
_NAMED_REFUSALS = ("surrogate", "infinity")
_DEPTH_REFUSALS = ("depth limit", "recursion")


class _OutOfRange:
    """Stands for a number too large for a float while the standard library decodes a refused
    body."""


OUT_OF_RANGE = _OutOfRange()


def too_deep() -> ApiError:
    return ApiError(400, DEPTH_MESSAGE)


def loads_request(data: bytes | str):
    """The decoded JSON value of a request's text; ApiError past a bound, orjson.JSONDecodeError
    when not JSON."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        refusal = named_refusal(data, str(error))
        if refusal is not None:
            raise refusal from None
        raise
    if _container_count(data) > MAX_JSON_DEPTH and deeper_than(value, MAX_JSON_DEPTH):
        raise too_deep()
    return value


def _container_count(data: bytes | str) -> int:
    """Opening brackets in the text, strings included: an upper bound of the nesting depth, counted
    at C speed."""
    if isinstance(data, str):
        return data.count("{") + data.count("[")
    return data.count(b"{") + data.count(b"[")


def deeper_than(value, limit: int) -> bool:
    """Whether objects and arrays nest more than `limit` levels in a decoded value (walked without
    recursion)."""
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


def named_refusal(data: bytes | str, reason: str) -> ApiError | None:
    """The error naming what orjson refused, when it is a bound of this module; None for plain
    invalid JSON."""
    if any(word in reason for word in _DEPTH_REFUSALS):
        return too_deep()
    if not any(word in reason for word in _NAMED_REFUSALS):
        return None
    try:  # reads lone surrogates (escaped, or raw with surrogatepass) and numbers of any size
        value = json.loads(data, parse_int=_number, parse_float=_number)
    except RecursionError:  # raised cleanly by the C scanner at Python's recursion limit
        return too_deep()
    except ValueError:
        return None
    if deeper_than(value, MAX_JSON_DEPTH):
        return too_deep()
    fields = refused_fields(value)
    return ValidationFailed(fields) if fields else None


def _number(text: str):
    # the value is never used: the body is refused anyway
    return OUT_OF_RANGE if math.isinf(float(text)) else 0


def has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _printable(path: str) -> str:
    """A field path that can go in the answer's JSON: a lone surrogate in a key is shown escaped."""
    return path.encode("utf-8", "backslashreplace").decode("utf-8")


def refused_fields(value) -> dict[str, list[str]]:
    """{dotted path: [message]} for the numbers out of range and the texts (values or keys) with a
    lone surrogate."""
    fields: dict[str, list[str]] = {}
    stack = [(value, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            children = []
            for key, item in node.items():
                name = f"{path}.{key}" if path else str(key)
                if has_lone_surrogate(key):
                    fields[_printable(name)] = [SURROGATE_MESSAGE]
                children.append((item, name))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(
                reversed(
                    [
                        (item, f"{path}.{index}" if path else str(index))
                        for index, item in enumerate(node)
                    ]
                )
            )
        elif node is OUT_OF_RANGE:
            fields[_printable(path) or "_schema"] = [NUMBER_MESSAGE]
        elif isinstance(node, str) and has_lone_surrogate(node):
            fields[_printable(path) or "_schema"] = [SURROGATE_MESSAGE]
    return fields


def loads_form_value(name: str, text: str):
    """A form field's JSON text (a multipart body sends its lists and objects so) read by
    `loads_request`, with refused fields named from the form field (`questions.0.question_text`)."""
    try:
        return loads_request(text)
    except ValidationFailed as error:
        raise ValidationFailed(
            {
                name if path == "_schema" else f"{name}.{path}": messages
                for path, messages in error.fields.items()
            }
        ) from None


class BoundedJsonParser(FlaskParser):
    """webargs' Flask parser with JSON bodies read by `loads_request` rather than the standard
    library's json, which recursed past Python's limit on a deep body, raised ValueError on a
    4,300-digit integer, and passed lone surrogates on to the database (each a 500). Syntax errors
    stay webargs' 400 "Invalid JSON body.", and an empty body is still no body."""

    def load_json(self, req, schema):
        if not is_json_request(req):
            return missing
        data = req.get_data(cache=True)
        if not data:
            return missing
        try:
            return loads_request(data)
        except orjson.JSONDecodeError as error:
            abort(400, exc=error, messages={"json": ["Invalid JSON body."]})
