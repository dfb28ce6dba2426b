"""Resumes: read them from JSON (base64) or multipart bodies, check type by content and size, store them by sha256, stream them back."""

from __future__ import annotations

import abc
import base64
import binascii
import functools
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import marshmallow as ma
from flask import current_app, request, send_file
from flask_smorest.fields import Upload

from app.api import FullAnswerSchema
from app.errors import ApiError, NotFound, ValidationFailed
from app.office_files import CFB_SIGNATURE, ZIP_SIGNATURE, is_word_compound_file, is_word_package

PDF = "application/pdf"
DOC = "application/msword"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
RTF = "application/rtf"
TEXT = "text/plain"
EXTENSIONS = {PDF: ".pdf", DOC: ".doc", DOCX: ".docx", RTF: ".rtf", TEXT: ".txt"}
ACCEPTED = "PDF, DOC, DOCX, RTF or plain text"

TEXT_SNIFF_BYTES = 64 * 1024
DATA_URL = re.compile(r"^data:[\w.+/-]*;base64,", re.IGNORECASE)
UNSAFE_NAME_CHARACTERS = re.compile(r"[^\w.() -]+")


# ---- what a resume is ------------------------------------------------------

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


def sniff_content_type(data: bytes) -> str | None:
    """The resume type the bytes are (PDF, DOC, DOCX, RTF, plain text), or None; the file name plays no part.

    A compound file is a DOC only with the WordDocument stream, a zip a DOCX only with the Word parts (app.office_files)."""
    if b"%PDF-" in data[:1024]:
        return PDF
    if data.startswith(CFB_SIGNATURE):
        return DOC if is_word_compound_file(data) else None
    if data.startswith(ZIP_SIGNATURE):
        return DOCX if is_word_package(data) else None
    if data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf"):
        return RTF
    return TEXT if _is_plain_text(data) else None


def _is_plain_text(data: bytes) -> bool:
    """UTF-8 (or BOM-marked UTF-16) text of printable characters: no NULs, almost no control codes."""
    sample = data[:TEXT_SNIFF_BYTES]
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding, sample = "utf-16", sample
    else:
        encoding = "utf-8"
        if b"\x00" in sample:
            return False
    try:
        text = sample.decode(encoding)
    except UnicodeDecodeError as error:
        # a multi-byte character cut at the sample's end is still text
        if len(data) <= TEXT_SNIFF_BYTES or error.start < len(sample) - 4:
            return False
        text = sample[:error.start].decode(encoding)
    control = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\f\v")
    return bool(text.strip()) and control <= len(text) // 100


def safe_file_name(name: str | None, content_type: str) -> str:
    """A file name fit for a Content-Disposition header; the type's extension when none was given."""
    base = os.path.basename((name or "").replace("\\", "/")).strip()
    base = UNSAFE_NAME_CHARACTERS.sub("_", base)[:200].strip(" .")
    return base or f"resume{EXTENSIONS[content_type]}"


# ---- storage ---------------------------------------------------------------

class ResumeStorage(abc.ABC):
    """Where resume bytes live, addressed by their sha256 (the same bytes are stored once)."""

    @abc.abstractmethod
    def save(self, data: bytes) -> str:
        """Store the bytes and return their sha256 hex digest."""

    @abc.abstractmethod
    def open(self, sha256: str) -> BinaryIO:
        """A readable binary stream of the stored bytes; FileNotFoundError when absent."""


class LocalResumeStorage(ResumeStorage):
    """A directory on local disk: <root>/<first two hex digits>/<sha256>, written atomically."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path_for(self, sha256: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{64}", sha256 or ""):
            raise FileNotFoundError(sha256)
        return self.root / sha256[:2] / sha256

    def save(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self.path_for(digest)
        if path.exists():
            return digest
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".upload-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return digest

    def open(self, sha256: str) -> BinaryIO:
        return self.path_for(sha256).open("rb")


def storage() -> ResumeStorage:
    """The app's resume storage (a local directory at RESUME_DIR unless a test or deployment installed another)."""
    extensions = current_app.extensions
    if "hirekit_resume_storage" not in extensions:
        extensions["hirekit_resume_storage"] = LocalResumeStorage(current_app.config["RESUME_DIR"])
    return extensions["hirekit_resume_storage"]


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


# ---- request bodies --------------------------------------------------------

class Base64Resume(ma.fields.String):
    """A base64 resume (a data: URL prefix and line breaks are allowed); bad base64 is 422, too large 413."""

    default_error_messages = {"invalid_base64": "Not valid base64."}

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs).strip()
        prefix = DATA_URL.match(text)
        if prefix:
            text = text[prefix.end():]
        text = "".join(text.split())  # line breaks of wrapped base64; str.split is far faster than a regex here
        if len(text) * 3 // 4 > max_resume_bytes() + 3:
            raise too_large()
        if "=" not in text:
            text += "=" * (-len(text) % 4)  # unpadded base64 is common; a length of 4n+1 stays invalid below
        if len(text) % 4:
            raise self.make_error("invalid_base64")
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise self.make_error("invalid_base64") from None


class ResumeBodyMixin(ma.Schema):
    """The resume fields of a JSON body: `file` is a reference kept as given (never fetched), or `base64file`."""

    file = ma.fields.String(load_default=None, allow_none=True, validate=ma.validate.Length(max=4096),
                            metadata={"description": "A reference to the resume in your system (a URL or id); "
                                                     "stored as resume.reference, never fetched"})
    base64file = Base64Resume(load_default=None, allow_none=True,
                              metadata={"description": f"The resume, base64 encoded ({ACCEPTED})"})
    file_name = ma.fields.String(load_default=None, allow_none=True, validate=ma.validate.Length(max=255),
                                 metadata={"description": "Name of the base64 resume, e.g. jane-doe.pdf"})

    @ma.post_load
    def gather_resume(self, data, **kwargs):
        """Replace the three wire fields by `resume` (a ResumeUpload) and `resume_reference`."""
        reference, payload, name = data.pop("file", None), data.pop("base64file", None), data.pop("file_name", None)
        data["resume"] = ResumeUpload(payload, name) if payload is not None else None
        data["resume_reference"] = (reference.strip() or None) if reference is not None else None
        return data


class ResumeSchema(FullAnswerSchema):
    """Resume metadata on a record; the bytes are at the record's /resume route."""

    # null when the record has only a `file` reference and no stored bytes
    file_name = ma.fields.String(attribute="resume_file_name", allow_none=True)
    content_type = ma.fields.String(attribute="resume_content_type", allow_none=True)
    size = ma.fields.Integer(attribute="resume_size", allow_none=True)
    sha256 = ma.fields.String(attribute="resume_sha256", allow_none=True)
    reference = ma.fields.String(attribute="resume_reference", allow_none=True,
                                 metadata={"description": "The `file` reference the client sent, if any"})


class ResumeField(ma.fields.Nested):
    """A record's `resume`: its metadata, or null when it has neither stored bytes nor a reference."""

    def __init__(self, **kwargs):
        super().__init__(ResumeSchema, dump_only=True, allow_none=True, **kwargs)

    def _serialize(self, nested_obj, attr, obj, **kwargs):
        """Built directly (this runs once per row of every list): the same keys ResumeSchema documents."""
        if not (getattr(obj, "resume_sha256", None) or getattr(obj, "resume_reference", None)):
            return None
        return {"file_name": obj.resume_file_name, "content_type": obj.resume_content_type, "size": obj.resume_size,
                "sha256": obj.resume_sha256, "reference": obj.resume_reference}

    def get_value(self, obj, attr, accessor=None, default=ma.missing):
        return obj


_form_schemas: dict[type, type] = {}


def form_schema(schema_cls: type[ma.Schema]) -> type[ma.Schema]:
    """The multipart/form-data twin of a JSON body schema, for OpenAPI: `file` is the resume part, no base64."""
    if schema_cls not in _form_schemas:
        fields = {name: field for name, field in schema_cls().fields.items() if name not in ("file", "base64file")}
        fields["file"] = Upload(metadata={"description": f"The resume file ({ACCEPTED})"})
        name = schema_cls.__name__.removesuffix("Schema") + "FormSchema"
        _form_schemas[schema_cls] = ma.Schema.from_dict(fields, name=name)
    return _form_schemas[schema_cls]


JSON_TEXT_FIELDS = (ma.fields.List, ma.fields.Nested, ma.fields.Dict, ma.fields.Number, ma.fields.Boolean)


def form_values(schema: ma.Schema) -> dict:
    """The text fields of a multipart body; list, object, number and boolean fields may be sent as JSON text (the
    schema then reads them as it reads a JSON body)."""
    values: dict = {}
    for key in request.form:
        value = request.form.get(key)
        field = schema.fields.get(key)
        if isinstance(field, JSON_TEXT_FIELDS) and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                pass  # the schema reports the wrong type
        values[key] = value
    return values


def upload_from(part) -> ResumeUpload:
    """A multipart file part (werkzeug FileStorage) as an upload, reading at most the limit plus one byte (413 beyond)."""
    data = part.stream.read(max_resume_bytes() + 1)
    if len(data) > max_resume_bytes():
        raise too_large()
    return ResumeUpload(data, part.filename or None)


def read_file_part(name: str = "file") -> ResumeUpload | None:
    """The request's multipart file part `name` as an upload, or None when absent."""
    part = request.files.get(name)
    return upload_from(part) if part is not None else None


def load_body(schema: ma.Schema) -> dict:
    """Validate a JSON or multipart/form-data body with `schema` (a ResumeBodyMixin); the file part becomes `resume`."""
    if request.mimetype == "multipart/form-data":
        values = form_values(schema)
        upload = read_file_part("file")
        data = schema.load(values)
        if upload is not None:
            data["resume"] = ResumeUpload(upload.data, values.get("file_name") or upload.file_name)
        return data
    if not request.mimetype and not request.content_length:
        return schema.load({})  # no body: the 422 names its required fields
    if request.mimetype != "application/json":
        raise ApiError(415, "Send the body as application/json or multipart/form-data.")
    body = request.get_json(silent=False)
    if not isinstance(body, dict):
        raise ValidationFailed({"_schema": ["The body must be a JSON object."]})
    return schema.load(body)


def json_or_multipart(blp, schema_cls: type[ma.Schema], *, description: str = ""):
    """Route decorator: the body as JSON (base64file) or multipart/form-data (file part), both documented in OpenAPI.

    The view receives the loaded values like flask-smorest's @arguments passes them (after self, before path args)."""
    # "required": false, as a missing body is answered like {} (422 naming the required fields): openapi-python-client
    # 0.29 types a two-content-type body as optional whatever this says, and imports its Unset only when it is
    # documented optional (a generated module would not import otherwise)
    request_body = {"required": False, "description": description or None, "content": {
        "application/json": {"schema": schema_cls},
        "multipart/form-data": {"schema": form_schema(schema_cls)},
    }}
    if not description:
        del request_body["description"]

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, load_body(schema_cls()), **kwargs)

        wrapper = blp.doc(requestBody=request_body)(wrapper)
        return blp.errors(413, 415, 422)(wrapper)

    return decorator
