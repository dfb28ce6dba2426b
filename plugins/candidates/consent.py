"""A candidate's consent to be contacted, per channel (voice, sms, email), each granted or revoked
with its source and time; kept on the candidate row (`consent`), checked before every call, text and
email, and announced by a candidate.consent event (feed and webhooks) whenever it changes. Opting
out revokes every channel."""

from __future__ import annotations

from flask import current_app

from app.data import events
from app.data.db import database, utcnow
from app.http.listing import shown_instant

VOICE, SMS, EMAIL = "voice", "sms", "email"
CHANNELS = (VOICE, SMS, EMAIL)
ATS, API, CANDIDATE_SMS, CANDIDATE_PAGE, CANDIDATE_CALL = (
    "ats",
    "api",
    "candidate_sms",
    "candidate_page",
    "candidate_call",
)
SOURCES = (ATS, API, CANDIDATE_SMS, CANDIDATE_PAGE, CANDIDATE_CALL)
CONSENT_LISTENERS = "hirekit_consent_listeners"
CANDIDATE_CONSENT = "candidate.consent"  # the event of a change to a candidate's consent


def initial_consent(now=None) -> dict:
    """A new candidate's consent: every channel granted by the ATS that sent them, now."""
    at = shown_instant(now or utcnow())
    return {channel: {"granted": True, "source": ATS, "changed_at": at} for channel in CHANNELS}


def consent_of(candidate) -> dict:
    """The candidate's consent per channel (a row from before consent was kept: granted by the ATS
    at creation)."""
    stored = candidate.consent or {}
    fallback = initial_consent(candidate.created_at)
    return {channel: dict(stored.get(channel) or fallback[channel]) for channel in CHANNELS}


def has_consent(candidate, channel: str) -> bool:
    """Whether the candidate may be contacted on `channel` now."""
    return bool(consent_of(candidate)[channel]["granted"])


def add_consent_listener(app, listener) -> None:
    """listener(tenant_id, candidate_id, revoked: tuple of channels) runs inside the transaction
    that revokes consent (calls cancels what is pending on those channels)."""
    app.extensions.setdefault(CONSENT_LISTENERS, []).append(listener)


def change_consent(candidate, changes: dict[str, bool], source: str) -> list[dict]:
    """Grant or revoke the channels in `changes` for the candidate (a row read in this tenant), from
    `source`. A channel already in that state keeps its source and time. Answers the changes made;
    each batch of them is one candidate.consent event, and contact_opt_out follows (true when no
    channel is granted)."""
    now = utcnow()
    consent = consent_of(candidate)
    made = []
    for channel, granted in changes.items():
        if consent[channel]["granted"] != bool(granted):
            consent[channel] = {
                "granted": bool(granted),
                "source": source,
                "changed_at": shown_instant(now),
            }
            made.append({"channel": channel, **consent[channel]})
    if not made:
        return []
    opted_out = not any(entry["granted"] for entry in consent.values())
    columns = {"consent": consent, "updated_at": now}
    if opted_out != bool(candidate.contact_opt_out):
        columns.update(contact_opt_out=opted_out, contact_opted_out_at=now if opted_out else None)
    with database.atomic():
        type(candidate).update(**columns).where(type(candidate).id == candidate.id).execute()
        for name, value in columns.items():
            setattr(candidate, name, value)
        events.emit(
            candidate.tenant_id, CANDIDATE_CONSENT, consent_event_record(candidate, made, now)
        )
        revoked = tuple(change["channel"] for change in made if not change["granted"])
        if revoked:
            for listener in current_app.extensions.get(CONSENT_LISTENERS, ()):
                listener(candidate.tenant_id, candidate.id, revoked)
    return made


def consent_event_record(candidate, made: list[dict], now) -> dict:
    """The candidate.consent event's record (and what its webhooks may select)."""
    return {
        "id": str(candidate.id),
        "candidate_id": str(candidate.id),
        "candidate_source_id": candidate.source_id,
        "changes": made,
        "consent": consent_of(candidate),
        "contact_opt_out": bool(candidate.contact_opt_out),
        "changed_at": shown_instant(now),
    }
