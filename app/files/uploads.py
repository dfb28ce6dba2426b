"""A resume as received and as stored: size and type checks (413, 415, 422), storing it in its
tenant's files, streaming it back as a download a browser will not render or keep."""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app, send_file

from app.errors import ApiError, NotFound, ValidationFailed
from app.files.sniffing import (
    ACCEPTED,
    WHAT_EACH_TYPE_IS,
    attachment_disposition,
    safe_file_name,
    sniff_content_type,
)
from app.files.storage import storage


@dataclass(frozen=True)
class ResumeUpload:
    """Resume bytes as received, with the name the client gave (if any); nothing checked yet."""

    data: bytes
    file_name: str | None = None


@dataclass(frozen=True)
class StoredResume:
    """A checked, stored resume: what a record keeps about it (its ResumeColumns)."""

    file_name: str
    content_type: str
    size: int
    sha256: str

    def columns(self) -> dict:
        return {
            "resume_file_name": self.file_name,
            "resume_content_type": self.content_type,
            "resume_size": self.size,
            "resume_sha256": self.sha256,
        }


def max_resume_bytes() -> int:
    return int(current_app.config["MAX_RESUME_BYTES"])


def too_large() -> ApiError:
    limit = max_resume_bytes()
    return ApiError(
        413, f"The resume is larger than the {limit} bytes ({limit / 1048576:g} MiB) allowed."
    )


def accept(upload: ResumeUpload, tenant_id: str) -> StoredResume:
    """Check an upload (empty 422, too big 413, not a resume type 415) and store it among the
    tenant's files."""
    if not upload.data:
        raise ValidationFailed({"file": ["The resume is empty."]})
    if len(upload.data) > max_resume_bytes():
        raise too_large()
    content_type = sniff_content_type(upload.data)
    if content_type is None:
        raise ApiError(
            415,
            f"The resume is not a {ACCEPTED} file (the type is read from its content, not its "
            "name: "
            f"{WHAT_EACH_TYPE_IS}).",
        )
    digest = storage().save(tenant_id, upload.data)
    return StoredResume(
        safe_file_name(upload.file_name, content_type), content_type, len(upload.data), digest
    )


def take_from(values: dict, tenant_id: str) -> dict:
    """Pop a loaded body's `resume` and `resume_reference`, check and store the tenant's resume; the
    record columns to set."""
    upload = values.pop("resume", None)
    columns = accept(upload, tenant_id).columns() if upload is not None else {}
    reference = values.pop("resume_reference", None)
    if reference is not None:
        columns["resume_reference"] = reference
    return columns


DOWNLOAD_HEADERS = {
    # the stored type holds: no browser guesses HTML or script from the bytes
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",  # personal data: kept by no browser or proxy cache
}

# What a resume download route documents for its 200 (with content_type application/octet-stream)
DOWNLOAD_DESCRIPTION = (
    "The resume bytes with the type read from them at upload (PDF, DOC, DOCX, RTF or plain text), "
    "always as a download: `Content-Disposition: attachment` with a file name ending in that "
    "type's extension (ASCII `filename` and UTF-8 `filename*`, RFC 6266; no path, quote or control "
    "character), `X-Content-Type-Options: nosniff` and `Cache-Control: no-store`"
)


def download(record, what: str):
    """Stream a record's stored resume back as an attachment (its name ending in its type's
    extension), never sniffed by a browser nor stored by a cache; 404 when it has none."""
    if not record.resume_sha256:
        raise NotFound(f"resume of {what}", record.id)
    try:
        stream = storage().open(record.tenant_id, record.resume_sha256)
    except FileNotFoundError:
        raise NotFound(f"resume of {what}", record.id) from None
    response = send_file(stream, mimetype=record.resume_content_type, etag=record.resume_sha256)
    response.headers["Content-Disposition"] = attachment_disposition(
        record.resume_file_name, record.resume_content_type
    )
    response.headers.update(DOWNLOAD_HEADERS)
    return response


def upload_from(part) -> ResumeUpload:
    """A multipart file part (werkzeug FileStorage) as an upload, reading at most the limit plus one
    byte (413 beyond)."""
    data = part.stream.read(max_resume_bytes() + 1)
    if len(data) > max_resume_bytes():
        raise too_large()
    return ResumeUpload(data, part.filename or None)
