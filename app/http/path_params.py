"""Path parameters are refused unless their percent-decoded bytes are UTF-8 text without NUL, on
every route.

werkzeug decodes the request path as UTF-8 with errors="replace": `/by-source-id/%FF%FE` reached the
view as two U+FFFD characters, so different byte sequences named the same record (and were stored
so), and `%00` reached the database (PostgreSQL cannot store NUL: a 500; SQLite stored it). So the
path's bytes are checked before any view, from the raw request target when the server gives it
(RAW_URI under gunicorn, werkzeug's server and test client; REQUEST_URI elsewhere), else from
PATH_INFO, whose characters are the path's bytes (PEP 3333's latin-1 string). A refused path answers
422 naming the parameter (or `path` outside a route's variables).
"""

from __future__ import annotations

import re
from urllib.parse import unquote_to_bytes, urlsplit

from app.errors import ValidationFailed

NUL_MESSAGE = "Must not contain NUL (%00) characters."
UTF8_MESSAGE = "Must be UTF-8 text once percent-decoded (a byte such as %FF alone is not)."
BOUNDS_DESCRIPTION = (
    "Path parameters percent-decode to UTF-8 text without NUL (%00); others are "
    "422 naming the parameter."
)
_VARIABLE = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")


def raw_path(environ) -> bytes:
    """The request path's bytes, percent-decoded, as the client sent them."""
    target = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if target:
        path = target.split("?", 1)[0] if target.startswith("/") else urlsplit(target).path
        try:
            return unquote_to_bytes(path.encode("latin-1"))
        # a server that decoded the target itself: its PATH_INFO is the better source
        except UnicodeEncodeError:
            pass
    return environ.get("PATH_INFO", "").encode("latin-1", "replace")


def _is_plain(target: str) -> bool:
    """Nothing to decode: ASCII without escapes or NUL (nearly every request)."""
    return target.isascii() and "%" not in target and "\x00" not in target


def segment_problem(segment: bytes) -> str | None:
    if b"\x00" in segment:
        return NUL_MESSAGE
    try:
        segment.decode("utf-8")
    except UnicodeDecodeError:
        return UTF8_MESSAGE
    return None


def parameter_names(rule: str | None, segments_from_end: int, segment_count: int) -> list[str]:
    """The variables of the route's rule at a segment counted from the path's end, or ["path"] when
    the segment is not one of a rule's variables (no route matched). A rule ending in a `path:`
    variable (a source id may hold `/`) is read from the start: the segments from that variable's on
    are that variable's."""
    if rule is None:
        return ["path"]
    rule_segments = rule.split("/")
    if "<path:" in rule_segments[-1]:
        index = segment_count - 1 - segments_from_end
        return _VARIABLE.findall(rule_segments[min(index, len(rule_segments) - 1)]) or ["path"]
    if "<path:" in rule or segments_from_end >= len(rule_segments):
        return ["path"]
    return _VARIABLE.findall(rule_segments[-1 - segments_from_end]) or ["path"]


def refuse_undecodable_path(req) -> None:
    """422 naming each path parameter whose bytes hold a NUL or are not UTF-8."""
    environ = req.environ
    target = environ.get("RAW_URI") or environ.get("REQUEST_URI") or environ.get("PATH_INFO", "")
    if _is_plain(target.split("?", 1)[0]):
        return
    segments = raw_path(environ).split(b"/")
    rule = req.url_rule.rule if req.url_rule is not None else None
    fields: dict[str, list[str]] = {}
    for index, segment in enumerate(segments):
        problem = segment_problem(segment)
        if problem:
            for name in parameter_names(rule, len(segments) - 1 - index, len(segments)):
                messages = fields.setdefault(name, [])
                if problem not in messages:
                    messages.append(problem)
    if fields:
        raise ValidationFailed(fields)
