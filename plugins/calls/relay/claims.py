"""Which relay socket holds which call, kept in the database so every relay process sees it: one
socket per call (a second is refused), a heartbeat while it lives, the sweep that ends calls
whose relay never connected or whose relay process died, so no call stays in progress, and what
the provider's report that the line closed means for a relay call."""

from __future__ import annotations

import datetime as dt
import logging
import uuid

import peewee as pw

from app.data.db import BaseModel, database, utcnow
from plugins.calls.lifecycle import advance, complete_end, end_call
from plugins.calls.models import ACTIVE_STATUSES, FAILED, FINAL_STATUSES, IN_PROGRESS, Call

log = logging.getLogger("hirekit.calls.relay")

RELAY_PROVIDERS = ("twilio", "telnyx")  # the providers whose calls talk through the relay process
SWEEP_BATCH = 200


class CallRelay(BaseModel):
    """The relay socket of a call: taken once at the handshake; released when the socket closes."""

    call = pw.ForeignKeyField(Call, primary_key=True, on_delete="CASCADE", column_name="call_id")
    connected_at = pw.DateTimeField(default=utcnow)
    heartbeat_at = pw.DateTimeField(
        default=utcnow
    )  # renewed by the holding process while the socket lives
    released_at = pw.DateTimeField(null=True)
    released_reason = pw.CharField(max_length=64, null=True)

    class Meta:
        table_name = "call_relays"
        indexes = ((("released_at", "heartbeat_at"), False),)


class RelayRefused(Exception):
    """The handshake is refused: `status` is the HTTP status the socket is answered with."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status


def claim(call_id: str, provider: str) -> str | None:
    """Take the call for this socket and answer the provider's id of it (the setup's callSid must
    be it): 404 when there is no such call of that provider, 409 when it is over or another socket
    holds (or held) it. Nothing is written unless the claim succeeds."""
    try:
        uuid.UUID(call_id)
    except ValueError:
        raise RelayRefused(404, f"no {provider} call {call_id[:64]!r}: not a call id") from None
    # the columns the claim needs: the conversation reads the whole call when it opens
    found = (
        Call.select(Call.status, Call.dialled_at, Call.provider_call_id)
        .where((Call.id == call_id) & (Call.provider == provider))
        .tuples()
        .first()
    )
    if found is None:
        raise RelayRefused(404, f"no {provider} call {call_id}")
    status, dialled_at, provider_call_id = found
    if status in FINAL_STATUSES or dialled_at is None:
        raise RelayRefused(409, f"call {call_id} is {status}, not being placed")
    try:
        with database.atomic():
            CallRelay.create(call=call_id)
    except pw.IntegrityError:
        raise RelayRefused(409, f"call {call_id} already has (or had) its relay socket") from None
    return provider_call_id


def heartbeat(call_ids: list[str]) -> None:
    """Renew the claims this process holds, in one statement."""
    if call_ids:
        CallRelay.update(heartbeat_at=utcnow()).where(
            CallRelay.call.in_(call_ids) & CallRelay.released_at.is_null()
        ).execute()


def release(call_id: str, reason: str) -> None:
    CallRelay.update(released_at=utcnow(), released_reason=reason[:64]).where(
        (CallRelay.call == call_id) & CallRelay.released_at.is_null()
    ).execute()


def line_closed(call_id) -> None:
    """The provider reports a relay call's phone line closed (Twilio's and Telnyx's `completed`).
    That is not a finished screening: a conversation that wrote its end is completed by its own
    job; one that did not (the candidate hung up before the relay saw its socket close, or the
    relay process died) ends as the dialogue ends a hang-up. A call whose socket never connected
    fails."""
    from plugins.calls.conversation.dialogue import end_status
    from plugins.calls.telephony import Progress

    call = Call.get_or_none(Call.id == call_id)
    if call is None or call.status in FINAL_STATUSES or call.end_reason is not None:
        return
    if not CallRelay.select().where(CallRelay.call == call.id).exists():
        advance(call.id, Progress(FAILED, error="the call ended before its relay socket connected"))
        return
    ended = (
        Call.update(end_reason="hung_up")
        .where((Call.id == call.id) & Call.end_reason.is_null())
        .execute()
    )
    if not ended:
        return  # the conversation wrote its own end meanwhile
    release(str(call.id), "line closed")
    status, error = end_status("hung_up", call.answers or [])
    advance(call.id, Progress(status, error=error))


def unclaim(call_id: str) -> None:
    CallRelay.delete().where(CallRelay.call == call_id).execute()


def sweep(
    *, connect_timeout: float, quiet_after: float, hang_up=None, now: dt.datetime | None = None
) -> int:
    """End every relay call that cannot go on: answered `connect_timeout` seconds ago with no socket
    yet, or held by a socket whose process stopped renewing it `quiet_after` seconds ago; and
    complete those whose written end went `quiet_after` seconds without its completion.
    `hang_up(call)` asks the provider to end the phone call too. Returns how many calls ended."""
    now = now or utcnow()
    never_connected = (
        Call.select()
        .join(CallRelay, pw.JOIN.LEFT_OUTER, on=(CallRelay.call == Call.id))
        .where(
            (Call.status == IN_PROGRESS)
            & Call.provider.in_(RELAY_PROVIDERS)
            & (Call.started_at < now - dt.timedelta(seconds=connect_timeout))
            & CallRelay.call.is_null()
        )
        .limit(SWEEP_BATCH)
    )
    orphaned = (
        Call.select()
        .join(CallRelay, on=(CallRelay.call == Call.id))
        .where(
            Call.status.in_(ACTIVE_STATUSES)
            & Call.end_reason.is_null()
            & CallRelay.released_at.is_null()
            & (CallRelay.heartbeat_at < now - dt.timedelta(seconds=quiet_after))
        )
        .limit(SWEEP_BATCH)
    )
    ended = complete_lost_ends(now - dt.timedelta(seconds=quiet_after))
    for calls, reason in (
        (
            list(never_connected),
            f"the provider's relay socket never connected within "
            f"{connect_timeout:g} s of the answer",
        ),
        (list(orphaned), f"the relay process holding the call stopped for over {quiet_after:g} s"),
    ):
        for call in calls:
            if end_call(call, FAILED, reason, now=now):
                ended += 1
                release(str(call.id), "swept")
                log.warning("call %s failed: %s", call.id, reason)
                if hang_up is not None:
                    _hang_up(hang_up, call)
    return ended


def complete_lost_ends(written_before: dt.datetime) -> int:
    """Complete the relay calls whose conversation wrote its end before `written_before` but whose
    completion never came (the relay process died before handing it on, or its job was lost): the
    end means what it meant to the conversation, as its own completion would have made it.
    Returns how many."""
    from plugins.calls.conversation.dialogue import STATUS_BY_END, end_status

    lost = (
        Call.select(Call.id, Call.end_reason, Call.answers)
        .where(
            Call.status.in_(ACTIVE_STATUSES)
            & Call.end_reason.in_(list(STATUS_BY_END))
            & Call.provider.in_(RELAY_PROVIDERS)
            & (Call.updated_at < written_before)
        )
        .limit(SWEEP_BATCH)
    )
    completed = 0
    for call in list(lost):
        status, error = end_status(call.end_reason, call.answers or [])
        if complete_end(call.id, status, error, call.end_reason == "voicemail_left"):
            completed += 1
            release(str(call.id), "swept")
            log.warning(
                "call %s: its end (%s) was completed by the sweep", call.id, call.end_reason
            )
    return completed


def _hang_up(hang_up, call: Call) -> None:
    try:
        hang_up(call)
    # the call has ended here; the provider ends its leg on its own timeout
    except Exception:  # noqa: BLE001
        log.exception("hanging up call %s at the provider failed", call.id)


def sweep_with_provider(config) -> int:
    """sweep() with the configured timeouts, hanging up at the configured provider: the relay
    process runs it every RELAY_SWEEP_INTERVAL, and the calls reaper on its own interval too, for
    when no relay process is running."""
    from plugins.calls.telephony import get_provider

    def hang_up(call: Call) -> None:
        provider = get_provider()
        if (
            call.provider_call_id
            and provider.name == call.provider
            and hasattr(provider, "hang_up")
        ):
            provider.hang_up(call.provider_call_id)

    return sweep(
        connect_timeout=float(config["RELAY_CONNECT_TIMEOUT"]),
        quiet_after=float(config["RELAY_QUIET_SECONDS"]),
        hang_up=hang_up,
    )
