"""A person confirms a tool that acts in the world (placing a phone call) before it runs, when an
OAuth client calls it. On MCP 2026-07-28, the multi round-trip flow: the first call answers
`input_required` with a form elicitation naming what will happen; the client asks the person and
calls again with their answer and the signed request state; only an accepted "yes" for the very same
arguments lets the tool run.

On 2025-06-18 and 2025-11-25, the server asks over the tools/call's own event stream
(plugins.mcp.held_confirmation), for a client whose session declared elicitation. A client that
cannot be asked (2025-03-26, no elicitation declared, no session, no event stream accepted) gets a
tool error saying how to connect so that the person can be asked. API keys are not asked (their
callers are programs, not agents of a person)."""

from __future__ import annotations

import hashlib

import orjson
from typing import Callable

from flask import g, request

from app.security import tokens
from plugins.mcp.held_confirmation import HeldConfirmation
from plugins.mcp.protocol import CLIENT_CAPABILITIES_META_KEY, MODERN_VERSIONS
from plugins.mcp.sessions import ELICITING_VERSIONS, principal
from plugins.mcp.tools import Tool, failure

CONFIRMATION_KEY = "confirm"  # the input request's key, and the form's one field
STATE_KIND = "mcp-confirmation"
STATE_SECONDS = 600  # a confirmation is answered within ten minutes, else asked again

CONFIRM_SCHEMA = {
    "type": "object",
    "required": [CONFIRMATION_KEY],
    "properties": {
        CONFIRMATION_KEY: {
            "type": "boolean",
            "title": "Yes, place this call",
            "description": "Nothing is placed unless you answer yes.",
        }
    },
}


def fingerprint(tool: Tool, arguments: dict) -> str:
    """What a confirmation is bound to: the tool, its arguments and the authorization calling it."""
    body = orjson.dumps(
        {"tool": tool.name, "arguments": arguments, "by": principal()}, option=orjson.OPT_SORT_KEYS
    )
    return hashlib.sha256(body).hexdigest()


def is_yes(answer) -> bool:
    """An elicitation result that accepts the form with confirm: true."""
    return (
        isinstance(answer, dict)
        and answer.get("action") == "accept"
        and isinstance(answer.get("content"), dict)
        and answer["content"].get(CONFIRMATION_KEY) is True
    )


def answer_before_running(
    tool: Tool,
    tenant_id: str,
    arguments: dict,
    params: dict,
    *,
    version: str,
    run: Callable[[], dict],
) -> dict | HeldConfirmation | None:
    """None when the person has confirmed this call; otherwise what tools/call answers instead: the
    input_required result asking them, the held stream that asks and then `run`s the tool, or a tool
    error (declined, expired, a client that cannot ask)."""
    calling = {key: value for key, value in arguments.items() if key != "idempotency_key"}
    if version not in MODERN_VERSIONS:
        return ask_on_stream(tool, tenant_id, calling, version=version, run=run)
    capabilities = (params.get("_meta") or {}).get(CLIENT_CAPABILITIES_META_KEY)
    if not isinstance(capabilities, dict) or "elicitation" not in capabilities:
        return failure(
            f"{tool.name} needs the confirmation of the person who connected this agent before it "
            "acts, and this "
            "client did not declare the elicitation capability, so it cannot ask them. Use a "
            "client that supports "
            "elicitation. Nothing was done."
        )
    bound_to = fingerprint(tool, calling)
    responses, state = params.get("inputResponses"), params.get("requestState")
    if responses is None and state is None:
        return {
            "resultType": "input_required",
            "inputRequests": {
                CONFIRMATION_KEY: {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": tool.confirm(tenant_id, calling),
                        "requestedSchema": CONFIRM_SCHEMA,
                    },
                }
            },
            "requestState": tokens.sign(STATE_KIND, {"for": bound_to}),
        }
    try:
        signed = tokens.verify(STATE_KIND, state if isinstance(state, str) else "", STATE_SECONDS)
    except tokens.InvalidToken:
        return failure(
            "The confirmation is missing, expired or not this server's: call the tool again "
            "without "
            "inputResponses to ask the person again. Nothing was done."
        )
    if not isinstance(signed, dict) or signed.get("for") != bound_to:
        return failure(
            "The confirmation was given for other arguments: call the tool again without "
            "inputResponses "
            "to ask the person about these. Nothing was done."
        )
    answer = responses.get(CONFIRMATION_KEY) if isinstance(responses, dict) else None
    if not is_yes(answer):
        return failure("The person did not confirm: nothing was done.")
    return None


def ask_on_stream(
    tool: Tool, tenant_id: str, calling: dict, *, version: str, run: Callable[[], dict]
) -> dict | HeldConfirmation:
    """A handshake revision's confirmation: the stream asking the person, when this client can be
    asked on one."""
    session = g.get("mcp_session")
    if (
        version not in ELICITING_VERSIONS
        or session is None
        or not session.form_elicitation
        or "text/event-stream" not in request.accept_mimetypes
    ):
        return failure(
            f"{tool.name} needs the confirmation of the person who connected this agent before it "
            "acts, and this "
            "client cannot be asked for it here. Connect with protocol version "
            f"{MODERN_VERSIONS[0]} (the input_required flow), or with "
            f"{' or '.join(sorted(ELICITING_VERSIONS))} "
            "from a client that declares the elicitation capability at initialize and accepts "
            "text/event-stream, "
            "and call the tool again. Nothing was done."
        )
    return HeldConfirmation(
        message=tool.confirm(tenant_id, calling),
        requested_schema=CONFIRM_SCHEMA,
        with_mode=version >= "2025-11-25",
        accepted=is_yes,
        run=run,
    )
