"""A person confirms a tool before it runs, on the handshake revisions (2025-06-18, 2025-11-25): the
tools/call is answered as an event stream that first carries an `elicitation/create` request to the
client; the client asks its person and POSTs the answer (to any worker, which writes it to
mcp_confirmations); the thread holding the stream sees it, runs the tool on a yes, and ends the
stream with the tool's result.

The stream holds one request thread while the person reads, so each worker holds at most
MCP_HELD_CONFIRMATIONS of them at once, each for at most MCP_CONFIRMATION_SECONDS, and no database
connection while it waits."""

from __future__ import annotations

import datetime as dt
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import orjson
from flask import current_app

from app.data.db import database, utcnow
from plugins.mcp.models import McpConfirmation
from plugins.mcp.protocol import INTERNAL_ERROR, RpcError, error_object, result_object
from plugins.mcp.sessions import principal
from plugins.mcp.tools import failure

log = logging.getLogger("hirekit.mcp")

# the elicitation requests' ids: the prefix and 32 random URL-safe characters
ID_PREFIX = "confirm-"
POLL_SECONDS = 0.25  # how often a held stream looks for the answer
KEEP_ALIVE_SECONDS = 15.0  # an SSE comment this often keeps proxies from closing a quiet stream
# rows of streams that died with their worker go this long after expiring
STALE_GRACE = dt.timedelta(minutes=5)


@dataclass(frozen=True)
class HeldConfirmation:
    """A tools/call waiting on a yes: the question, the schema of its form, and how to run the tool
    afterwards (`run` answers the tool result, or raises RpcError as tools/call would)."""

    message: str
    requested_schema: dict
    with_mode: bool  # 2025-11-25 names the elicitation mode ("form"); 2025-06-18 has no mode field
    accepted: Callable[[dict], bool]
    run: Callable[[], dict]

    def messages(self, request_id) -> Iterator[dict | None]:
        """What the stream sends: the question, None for each keep-alive, then the tools/call
        response."""
        seats = _seats()
        if not seats.acquire(blocking=False):
            yield result_object(
                request_id,
                failure(
                    "Too many confirmations are waiting on this server right now, so the person "
                    "cannot be asked: call "
                    "the tool again in a minute. Nothing was done."
                ),
            )
            return
        try:
            yield from self._ask(request_id)
        finally:
            seats.release()

    def _ask(self, request_id) -> Iterator[dict | None]:
        question_id = f"{ID_PREFIX}{secrets.token_urlsafe(24)}"
        seconds = current_app.config["MCP_CONFIRMATION_SECONDS"]
        _open_question(question_id, seconds)
        try:
            params = {"message": self.message, "requestedSchema": self.requested_schema}
            if self.with_mode:
                params = {"mode": "form", **params}
            yield {
                "jsonrpc": "2.0",
                "id": question_id,
                "method": "elicitation/create",
                "params": params,
            }
            answer = yield from _wait_for_answer(question_id, seconds)
        finally:
            _close_question(question_id)
        if answer is None:
            yield {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": question_id, "reason": "not answered in time"},
            }
            yield result_object(
                request_id,
                failure(
                    f"The person did not answer within {seconds:g} s: nothing was done. Call the "
                    "tool again to ask "
                    "them again."
                ),
            )
            return
        if not self.accepted(answer):
            yield result_object(
                request_id, failure("The person did not confirm: nothing was done.")
            )
            return
        yield _outcome(request_id, self.run)


def _seats() -> threading.BoundedSemaphore:
    """This app's (so this worker's) count of held streams."""
    seats = current_app.extensions.get("hirekit_mcp_held_confirmations")
    if seats is None:
        seats = current_app.extensions.setdefault(
            "hirekit_mcp_held_confirmations",
            threading.BoundedSemaphore(current_app.config["MCP_HELD_CONFIRMATIONS"]),
        )
    return seats


def _open_question(question_id: str, seconds: float) -> None:
    now = utcnow()
    with database.connection_context():
        McpConfirmation.delete().where(McpConfirmation.expires_at < now - STALE_GRACE).execute()
        McpConfirmation.create(
            id=question_id, principal=principal(), expires_at=now + dt.timedelta(seconds=seconds)
        )


def _close_question(question_id: str) -> None:
    with database.connection_context():
        McpConfirmation.delete().where(McpConfirmation.id == question_id).execute()


def _wait_for_answer(question_id: str, seconds: float) -> Iterator[None]:
    """Poll for the client's answer (a generator: it yields None as a keep-alive); returns the
    answer, None when the time ran out."""
    if not database.is_closed() and not database.in_transaction():
        database.close()  # no pooled connection is held while a person reads
    deadline = time.monotonic() + seconds
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))
        with database.connection_context():
            stored = (
                McpConfirmation.select(McpConfirmation.answer)
                .where(McpConfirmation.id == question_id)
                .scalar()
            )
        if stored is not None:
            return orjson.loads(stored)
        if time.monotonic() - quiet_since >= KEEP_ALIVE_SECONDS:
            quiet_since = time.monotonic()
            yield None
    return None


def _outcome(request_id, run: Callable[[], dict]) -> dict:
    try:
        return result_object(request_id, run())
    except RpcError as error:
        return error_object(request_id, error.code, error.message, error.data)
    except Exception:
        log.exception("MCP tool failed after its confirmation")
        return error_object(
            request_id,
            INTERNAL_ERROR,
            "Internal error after the confirmation; nothing is known to "
            "have been done. Quote the time of the call to support.",
        )


def deliver(message: dict) -> bool:
    """Keep a client's answer to one of the questions asked: True when it was ours to keep (an open
    question of this authorization, not answered before), False otherwise."""
    question_id = message.get("id")
    if (
        not isinstance(question_id, str)
        or not question_id.startswith(ID_PREFIX)
        or len(question_id) > 64
    ):
        return False
    answer = (
        message.get("result") if isinstance(message.get("result"), dict) else {"action": "error"}
    )
    kept = {"action": answer.get("action"), "content": answer.get("content")}
    with database.connection_context():
        updated = (
            McpConfirmation.update(answer=orjson.dumps(kept).decode())
            .where(
                (McpConfirmation.id == question_id)
                & (McpConfirmation.principal == principal())
                & McpConfirmation.answer.is_null()
                & (McpConfirmation.expires_at > utcnow())
            )
            .execute()
        )
    if not updated:
        log.info(
            "an answer to question %s matched no open confirmation of its caller", question_id[:16]
        )
    return bool(updated)


def held_confirmations_starve(config, threads: int) -> str | None:
    """The one-line error when a worker's held MCP confirmations could take all of its request
    threads, else None. Each held confirmation keeps a thread until its person answers, and the
    answer is a request of its own: a worker holding as many as it has threads never hears the
    answers. A check gunicorn's arbiter runs before serving (Plugin.serving_checks)."""
    held = int(config["MCP_HELD_CONFIRMATIONS"])
    if held < threads:
        return None
    return (
        f"HIREKIT_MCP_HELD_CONFIRMATIONS ({held}) must be below HIREKIT_WEB_THREADS ({threads}): "
        "each held "
        "confirmation keeps a request thread until its person's answer arrives, and the answer "
        "needs a thread "
        "of its own"
    )
