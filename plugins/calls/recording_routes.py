"""GET /v1/calls/{id}/recording: the tenant's recording streamed through from the provider that
holds it, with the account's credentials, so the provider's URL and credentials never reach the
client."""

from __future__ import annotations

import logging

import requests
from flask import Response, stream_with_context

from app.errors import ApiError, NotFound
from plugins.calls.recordings import recording_of
from plugins.calls.services import get_call
from plugins.calls.telephony import get_provider

log = logging.getLogger("hirekit.calls")

CHUNK_BYTES = 64 * 1024


def stream_recording(tenant_id: str, call_id) -> Response:
    call = get_call(tenant_id, call_id)
    recording = recording_of(call.id)
    if recording is None:
        raise NotFound(f"a recording of call {call.id}")
    provider = get_provider()
    if provider.name != recording.provider:
        raise ApiError(
            502, f"the recording is held by {recording.provider}, which this server no longer uses"
        )
    try:
        upstream = provider.open_recording(recording.provider_recording_id)
    except requests.RequestException as exc:
        log.warning(
            "fetching recording %s of call %s failed: %s",
            recording.provider_recording_id,
            call.id,
            exc,
        )
        raise ApiError(
            502, f"the telephony provider did not give the recording: {type(exc).__name__}"
        ) from None

    def chunks():
        with upstream:
            yield from upstream.iter_content(CHUNK_BYTES)

    headers = {"Content-Disposition": f'attachment; filename="call-{call.id}.mp3"'}
    if upstream.headers.get("Content-Length"):
        headers["Content-Length"] = upstream.headers["Content-Length"]
    return Response(
        stream_with_context(chunks()),
        status=200,
        headers=headers,
        mimetype=upstream.headers.get("Content-Type", "audio/mpeg").split(";")[0],
    )
