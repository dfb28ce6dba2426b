"""Sessions of handshake clients that can ask their person (elicitation), so that a tool needing a
confirmation can ask over the request's own event stream: the session id is a signed token of what
the client declared at initialize, bound to the authorization that made it, so every worker reads it
and nothing is stored.

Only OAuth callers that declare elicitation on a revision that has it are given one; every other
client stays sessionless, as before."""

from __future__ import annotations

from dataclasses import dataclass

from flask import g, request

from app.errors import ApiError
from app.security import tokens
from plugins.mcp import scopes

SESSION_HEADER = "Mcp-Session-Id"
SESSION_KIND = "mcp-session"
SESSION_SECONDS = 24 * 3600  # a host reconnects (initialize again) after a day
# the handshake revisions with elicitation/create
ELICITING_VERSIONS = frozenset({"2025-11-25", "2025-06-18"})


@dataclass(frozen=True)
class Session:
    """What a client declared at initialize: the revision it speaks and whether it takes form
    elicitations."""

    version: str
    form_elicitation: bool


def principal() -> str:
    """Who the current request's authorization is (an OAuth grant's family, an API key), "" for
    none."""
    caller = g.get("caller")
    return caller.principal if caller is not None else ""


def session_id_for(params: dict, negotiated: str) -> str | None:
    """The Mcp-Session-Id an initialize answer carries: only for an OAuth caller (API keys are never
    asked) whose client declares elicitation on a revision that has it; None for everyone else."""
    capabilities = params.get("capabilities")
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    if (
        scopes.granted() is None
        or negotiated not in ELICITING_VERSIONS
        or not isinstance(elicitation, dict)
    ):
        return None
    # 2025-06-18 has only form elicitation (an empty object); 2025-11-25 declares "form" or "url"
    # (empty: form)
    form = not elicitation or "form" in elicitation
    return tokens.sign(SESSION_KIND, {"v": negotiated, "by": principal(), "form": form})


def current_session(version: str) -> Session | None:
    """The session the request names, None when it names none. A session id that is not this
    server's, has expired, belongs to another authorization or another revision is answered 404, so
    that the client initializes again, as Streamable HTTP says."""
    raw = request.headers.get(SESSION_HEADER)
    if raw is None:
        return None
    try:
        payload = tokens.verify(SESSION_KIND, raw.strip(), SESSION_SECONDS)
    except tokens.InvalidToken:
        payload = None
    if (
        not isinstance(payload, dict)
        or payload.get("by") != principal()
        or payload.get("v") != version
    ):
        raise ApiError(
            404,
            f"Session not found: the {SESSION_HEADER} header names no live session of this "
            "authorization; send initialize again (without the header) to start one.",
            type="session_not_found",
        )
    return Session(version=payload["v"], form_elicitation=bool(payload.get("form")))
