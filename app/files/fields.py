"""The marshmallow side of resumes: the base64 field, the body fields a record's create takes, the
metadata it answers."""

from __future__ import annotations

import base64
import binascii
import re

import marshmallow as ma

from app.http.api import FullAnswerSchema
from app.files.sniffing import ACCEPTED, WHAT_EACH_TYPE_IS
from app.files.uploads import ResumeUpload, max_resume_bytes, too_large

DATA_URL = re.compile(r"^data:[\w.+/-]*;base64,", re.IGNORECASE)


class Base64Resume(ma.fields.String):
    """A base64 resume (a data: URL prefix and line breaks are allowed); bad base64 is 422, too
    large 413."""

    default_error_messages = {"invalid_base64": "Not valid base64."}

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs).strip()
        prefix = DATA_URL.match(text)
        if prefix:
            text = text[prefix.end() :]
        # line breaks of wrapped base64; str.split is far faster than a regex here
        text = "".join(text.split())
        if len(text) * 3 // 4 > max_resume_bytes() + 3:
            raise too_large()
        if "=" not in text:
            # unpadded base64 is common; a length of 4n+1 stays invalid below
            text += "=" * (-len(text) % 4)
        if len(text) % 4:
            raise self.make_error("invalid_base64")
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise self.make_error("invalid_base64") from None


class ResumeBodyMixin(ma.Schema):
    """The resume fields of a JSON body: `file` is a reference kept as given (never fetched), or
    `base64file`."""

    file = ma.fields.String(
        load_default=None,
        allow_none=True,
        validate=ma.validate.Length(max=4096),
        metadata={
            "description": "A reference to the resume in your system (a URL or id); "
            "stored as resume.reference, never fetched"
        },
    )
    base64file = Base64Resume(
        load_default=None,
        allow_none=True,
        metadata={
            "description": f"The resume, base64 encoded ({ACCEPTED}, read from its "
            f"bytes: {WHAT_EACH_TYPE_IS})"
        },
    )
    file_name = ma.fields.String(
        load_default=None,
        allow_none=True,
        validate=ma.validate.Length(max=255),
        metadata={"description": "Name of the base64 resume, e.g. jane-doe.pdf"},
    )

    @ma.post_load
    def gather_resume(self, data, **kwargs):
        """Replace the three wire fields by `resume` (a ResumeUpload) and `resume_reference`."""
        reference, payload, name = (
            data.pop("file", None),
            data.pop("base64file", None),
            data.pop("file_name", None),
        )
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
    reference = ma.fields.String(
        attribute="resume_reference",
        allow_none=True,
        metadata={"description": "The `file` reference the client sent, if any"},
    )


class ResumeField(ma.fields.Nested):
    """A record's `resume`: its metadata, or null when it has neither stored bytes nor a
    reference."""

    def __init__(self, **kwargs):
        super().__init__(ResumeSchema, dump_only=True, allow_none=True, **kwargs)

    def _serialize(self, nested_obj, attr, obj, **kwargs):
        """Built directly (this runs once per row of every list): the same keys ResumeSchema
        documents."""
        value = self.root.get_attribute
        return resume_answer(lambda name: value(obj, name, None))

    def get_value(self, obj, attr, accessor=None, default=ma.missing):
        return obj

    def plain_from_record(self, record):
        """What serialize answers, read from the record itself (app.http.plain_dump)."""
        if type(record) is dict:
            return resume_answer(record.get)
        return resume_answer(lambda name: getattr(record, name, None))


def resume_answer(read) -> dict | None:
    """A record's `resume` from `read(column name)`: its metadata, or None with neither stored bytes
    nor a reference."""
    if not (read("resume_sha256") or read("resume_reference")):
        return None
    return {
        "file_name": read("resume_file_name"),
        "content_type": read("resume_content_type"),
        "size": read("resume_size"),
        "sha256": read("resume_sha256"),
        "reference": read("resume_reference"),
    }
