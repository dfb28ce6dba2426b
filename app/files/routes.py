"""The GET route that streams a record's stored resume back, the same for every family whose records carry one."""

from __future__ import annotations

from typing import Callable

from app.security.auth import current_tenant_id

DOWNLOAD_DESCRIPTION = (
    "The resume bytes with the type read from them at upload (PDF, DOC, DOCX, RTF or plain text), always as a download: "
    "`Content-Disposition: attachment` with a file name ending in that type's extension (ASCII `filename` and UTF-8 "
    "`filename*`, RFC 6266; no path, quote or control character), `X-Content-Type-Options: nosniff` and "
    "`Cache-Control: no-store`")


def add_download_route(blp, rule: str, view_name: str, what: str, resume_of: Callable) -> None:
    """GET `rule` (one path argument, the record's id) answers `resume_of(tenant_id, record_id)`: the bytes with their
    stored type and name (app.files.uploads.download), 404 when the record has none. `view_name` names the endpoint
    (and so the operationId, e.g. CandidateResume -> get_candidate_resume)."""

    def get(self, **path):
        (record_id,) = path.values()
        return resume_of(current_tenant_id(), record_id)

    get.__doc__ = f"Download the {what}'s resume"
    get = blp.response(200, content_type="application/octet-stream", description=DOWNLOAD_DESCRIPTION)(get)
    blp.add_view(rule, view_name, get=get)
