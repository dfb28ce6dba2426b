"""A resume as received and as stored: size and type checks (413, 415, 422), storing it, streaming it back."""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app, send_file

from app.errors import ApiError, NotFound, ValidationFailed
from app.resumes.sniffing import ACCEPTED, safe_file_name, sniff_content_type
from app.resumes.storage import storage


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
        return {"resume_file_name": self.file_name, "resume_content_type": self.content_type,
                "resume_size": self.size, "resume_sha256": self.sha256}


def max_resume_bytes() -> int:
    return int(current_app.config["MAX_RESUME_BYTES"])


def too_large() -> ApiError:
    limit = max_resume_bytes()
    return ApiError(413, f"The resume is larger than the {limit} bytes ({limit / 1048576:g} MiB) allowed.")


def accept(upload: ResumeUpload) -> StoredResume:
    """Check an upload (empty 422, too big 413, not a resume type 415) and store it."""
    if not upload.data:
        raise ValidationFailed({"file": ["The resume is empty."]})
    if len(upload.data) > max_resume_bytes():
        raise too_large()
    content_type = sniff_content_type(upload.data)
    if content_type is None:
        raise ApiError(415, f"The resume is not a {ACCEPTED} file (the type is read from its content, not its name).")
    digest = storage().save(upload.data)
    return StoredResume(safe_file_name(upload.file_name, content_type), content_type, len(upload.data), digest)


def take_from(values: dict) -> dict:
    """Pop a loaded body's `resume` and `resume_reference`, check and store the resume; the record columns to set."""
    upload = values.pop("resume", None)
    columns = accept(upload).columns() if upload is not None else {}
    reference = values.pop("resume_reference", None)
    if reference is not None:
        columns["resume_reference"] = reference
    return columns


def download(record, what: str):
    """Stream a record's stored resume back with its type and name; 404 when it has none."""
    if not record.resume_sha256:
        raise NotFound(f"resume of {what}", record.id)
    try:
        stream = storage().open(record.resume_sha256)
    except FileNotFoundError:
        raise NotFound(f"resume of {what}", record.id) from None
    return send_file(stream, mimetype=record.resume_content_type, as_attachment=True,
                     download_name=record.resume_file_name, etag=record.resume_sha256, max_age=0)


def upload_from(part) -> ResumeUpload:
    """A multipart file part (werkzeug FileStorage) as an upload, reading at most the limit plus one byte (413 beyond)."""
    data = part.stream.read(max_resume_bytes() + 1)
    if len(data) > max_resume_bytes():
        raise too_large()
    return ResumeUpload(data, part.filename or None)
