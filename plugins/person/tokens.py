"""Opaque scroll tokens: a backend's continuation cursor, signed with the server secret
(app/security/tokens.py), expiring after SCROLL_TOKEN_TTL seconds, bound to the query and sort it
came from and to the published dataset that answered it (its generation; on Elasticsearch, the point
in time the cursor carries), and held to the same result window as `from`."""

from __future__ import annotations

import hashlib

import orjson
from flask import current_app

from app.security import tokens
from app.errors import ApiError
from plugins.person.backends import MAX_RESULT_WINDOW, SEARCH_AFTER_CURSOR

KIND = "person-scroll"
# a cursor that re-ranks from the top: the backend ranks offset + size hits, as `from` does
OFFSET_CURSOR = "offset"


def query_fingerprint(query: dict, sort: list, dataset: str) -> str:
    """Same query, sort and dataset -> same fingerprint, whatever the key order of the JSON."""
    canonical = orjson.dumps([query, sort, dataset], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()[:24]


def encode(cursor: list, fingerprint: str, generation: str | None = None) -> str:
    return tokens.sign(KIND, [fingerprint, cursor, generation])


def decode(token: str, fingerprint: str, size: int) -> tuple[list, str | None]:
    """(cursor, dataset generation) inside `token` for a next page of `size`; 400 when it is not one
    of ours, has expired, belongs to another query, or would reach past the result window."""
    try:
        bound_to, cursor, *generation = tokens.verify(
            KIND, token, max_age=current_app.config["SCROLL_TOKEN_TTL"]
        )
    except tokens.ExpiredToken:
        raise ApiError(
            400,
            "scroll_token has expired (a token is valid for "
            f"{current_app.config['SCROLL_TOKEN_TTL']} "
            "seconds): start the scroll again without it.",
            fields={"scroll_token": ["Expired token."]},
        ) from None
    except (tokens.InvalidToken, ValueError, TypeError):
        raise _invalid() from None
    if bound_to != fingerprint:
        raise ApiError(
            400,
            "scroll_token belongs to another query or sort: resend the query it came from, or drop "
            "the token.",
            fields={"scroll_token": ["Issued for another query."]},
        )
    # tokens signed before generations were bound carry none
    generation = generation[0] if generation else None
    if (
        not (
            isinstance(cursor, list)
            and len(cursor) >= 2
            and isinstance(cursor[0], str)
            and _is_count(cursor[1])
        )
        or not isinstance(generation, (str, type(None)))
        or not _search_after_well_formed(cursor)
    ):
        raise _invalid()
    if cursor[0] == OFFSET_CURSOR and cursor[1] + size > MAX_RESULT_WINDOW:
        raise ApiError(
            400,
            f"This scroll has reached the {MAX_RESULT_WINDOW:,}-hit window for its sort (relevance "
            "or "
            "keyword order continue by offset): narrow the query, or sort by a number or date "
            "field, or "
            "by index order (a filter-only query), to walk further.",
            fields={"scroll_token": [f"Past the {MAX_RESULT_WINDOW} result window."]},
        )
    return cursor, generation


def check_generation(issued_by: str | None, answered_by: str | None) -> None:
    """400 when the dataset was republished (a delta or a reload) between a scroll's pages: its next
    page would come from another version of the dataset, so the client starts again rather than get
    a walk mixing two."""
    if issued_by is not None and answered_by is not None and issued_by != answered_by:
        raise ApiError(
            400,
            "The person dataset was updated since this scroll began, so its next page would mix "
            "two "
            "versions of the dataset: start the scroll again without scroll_token.",
            fields={"scroll_token": ["The dataset was updated since this scroll began."]},
        )


def _search_after_well_formed(cursor: list) -> bool:
    """An Elasticsearch cursor holds sort values, then the id of the point in time its walk searches
    in, if any; the backend would send anything else to the cluster as is."""
    if cursor[0] != SEARCH_AFTER_CURSOR:
        return True
    return (
        len(cursor) in (3, 4)
        and isinstance(cursor[2], list)
        and all(isinstance(pit, str) and pit for pit in cursor[3:])
    )


def _is_count(value) -> bool:
    return type(value) is int and value >= 0


def _invalid() -> ApiError:
    return ApiError(
        400,
        "scroll_token is not a token this service issued.",
        fields={"scroll_token": ["Invalid token."]},
    )
