"""The public job board's shapes (docs/integrating.md, Job board): a job as {id (its number), title,
description}, paging, the apply form."""

import marshmallow as ma
from flask_smorest.fields import Upload

from app.http.api import MAX_PAGE
from app.http.fields import BoundedInteger, Text
from app.files.sniffing import ACCEPTED


class BoardJobSchema(ma.Schema):
    id = ma.fields.Integer(
        attribute="number", metadata={"description": "The job's per-tenant number"}
    )
    title = ma.fields.String()
    description = ma.fields.String(allow_none=True)


class BoardPageArgsSchema(ma.Schema):
    page = BoundedInteger(
        1,
        MAX_PAGE,
        load_default=1,
        metadata={"description": f"1-based page (at most {MAX_PAGE:,})"},
    )
    limit = BoundedInteger(
        1, 100, load_default=20, metadata={"description": "Jobs per page, 1-100 (default 20)"}
    )


class ApplyBodySchema(ma.Schema):
    """The multipart/form-data body of an application: two text fields and the resume file part."""

    name = Text(required=True, max_length=511, metadata={"description": "Full name, e.g. Jane Doe"})
    email = ma.fields.Email(required=True, validate=ma.validate.Length(max=320))
    resume = Upload(required=True, metadata={"description": f"The resume file ({ACCEPTED})"})

    @ma.validates("resume")
    def is_a_file_part(self, value, **kwargs):
        if not hasattr(value, "stream"):
            raise ma.ValidationError("Send the resume as a file part.")


class ApplyResultSchema(ma.Schema):
    message = ma.fields.String(required=True)
    application_id = ma.fields.UUID(required=True)
