"""Call recordings: the tenant's setting (off by default), the reference Hirekit keeps to each
recording the provider made (never the audio itself), and reading, listing and deleting them for the
tenant, its export and its erasures."""

from __future__ import annotations

import logging

import peewee as pw

from app.data.db import BaseModel, TimestampedModel, new_uuid, utcnow
from app.data.records import row_by_id
from app.data.tenancy import Tenant
from plugins.calls.models import Call

log = logging.getLogger("hirekit.calls")

COMPLETED, DELETED = "completed", "deleted"


class CallSettings(BaseModel):
    """A tenant's call settings; a tenant without a row has the defaults."""

    tenant = pw.ForeignKeyField(
        Tenant, primary_key=True, on_delete="CASCADE", column_name="tenant_id"
    )
    recording = pw.BooleanField(default=False)
    updated_at = pw.DateTimeField(default=utcnow)

    class Meta:
        table_name = "call_settings"


class CallRecording(TimestampedModel):
    """A recording the provider holds for a call: its id there and where its audio is fetched."""

    id = pw.UUIDField(primary_key=True, default=new_uuid)
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    call = pw.ForeignKeyField(Call, on_delete="CASCADE", column_name="call_id", unique=True)
    provider = pw.CharField(max_length=32)
    provider_recording_id = pw.CharField(max_length=64)
    media_url = (
        pw.TextField()
    )  # the provider's URL of the audio, fetched with the account's credentials
    channels = pw.IntegerField(default=2)
    duration_seconds = pw.IntegerField(null=True)
    status = pw.CharField(max_length=16, default=COMPLETED)

    class Meta:
        table_name = "call_recordings"


def recording_enabled(tenant_id: str) -> bool:
    settings = row_by_id(CallSettings, tenant_id)  # read as every conversation opens
    return bool(settings and settings.recording)


def settings_for(tenant_id: str) -> dict:
    return {"recording": recording_enabled(tenant_id)}


def update_settings(tenant_id: str, *, recording: bool) -> dict:
    (
        CallSettings.insert(tenant=tenant_id, recording=recording, updated_at=utcnow())
        .on_conflict(
            conflict_target=[CallSettings.tenant],
            update={CallSettings.recording: recording, CallSettings.updated_at: utcnow()},
        )
        .execute()
    )
    return settings_for(tenant_id)


def keep_recording(
    call: Call,
    *,
    provider: str,
    provider_recording_id: str,
    media_url: str,
    channels: int,
    duration_seconds: int | None,
) -> CallRecording:
    """Store (or refresh: the provider may report the same recording twice) the reference to a
    call's recording."""
    (
        CallRecording.insert(
            tenant=call.tenant_id,
            call=call.id,
            provider=provider,
            provider_recording_id=provider_recording_id,
            media_url=media_url,
            channels=channels,
            duration_seconds=duration_seconds,
            status=COMPLETED,
        )
        .on_conflict(
            conflict_target=[CallRecording.call],
            update={
                CallRecording.provider_recording_id: provider_recording_id,
                CallRecording.media_url: media_url,
                CallRecording.channels: channels,
                CallRecording.duration_seconds: duration_seconds,
                CallRecording.updated_at: utcnow(),
            },
        )
        .execute()
    )
    Call.update(updated_at=utcnow()).where(
        Call.id == call.id
    ).execute()  # the call's record shows it: a new version
    return CallRecording.get(CallRecording.call == call.id)


def recording_of(call_id) -> CallRecording | None:
    return CallRecording.get_or_none(
        (CallRecording.call == call_id) & (CallRecording.status == COMPLETED)
    )


def recording_record(call_id) -> dict | None:
    """The call record's `recording`: null, or what the tenant needs to fetch it."""
    recording = recording_of(call_id)
    if recording is None:
        return None
    return {
        "url": f"/v1/calls/{call_id}/recording",
        "channels": recording.channels,
        "duration_seconds": recording.duration_seconds,
        "created_at": recording.created_at,
    }


def recordings_for_calls(call_ids) -> list[CallRecording]:
    if not call_ids:
        return []
    return list(
        CallRecording.select()
        .where(CallRecording.call.in_(list(call_ids)))
        .order_by(CallRecording.created_at, CallRecording.id)
    )


def forget_recordings(call_ids) -> list[tuple[str, str]]:
    """Drop the references to these calls' recordings (inside the caller's transaction); answers
    (provider, id at the provider) of each, for delete_at_provider once the transaction commits."""
    rows = recordings_for_calls(call_ids)
    if rows:
        CallRecording.delete().where(CallRecording.id.in_([row.id for row in rows])).execute()
    return [(row.provider, row.provider_recording_id) for row in rows]


def delete_at_provider(recordings: list[tuple[str, str]], provider) -> None:
    """Delete the audio at `provider` (the configured one), which holds it. A failure is logged with
    the recording's id there: nothing here points at it any longer, and the operator deletes it by
    hand."""
    for provider_name, recording_id in recordings:
        try:
            if provider_name != provider.name:
                raise RuntimeError(f"this server now uses {provider.name}")
            provider.delete_recording(recording_id)
        except Exception:  # noqa: BLE001 - the erasure has committed; the log names what is left
            log.exception(
                "deleting recording %s at %s failed: delete it there by hand",
                recording_id,
                provider_name,
            )
