"""The JSON-or-multipart body decorator: one schema read from JSON (base64file) or
multipart/form-data (a file part)."""

from __future__ import annotations

import functools

import marshmallow as ma
from flask import request
from flask_smorest.fields import Upload

from app.errors import ApiError, ValidationFailed
from app.http.request_json import loads_form_value
from app.files.sniffing import ACCEPTED, WHAT_EACH_TYPE_IS
from app.files.uploads import ResumeUpload, upload_from


_form_schemas: dict[type, type] = {}


def form_schema(schema_cls: type[ma.Schema]) -> type[ma.Schema]:
    """The multipart/form-data twin of a JSON body schema, for OpenAPI: `file` is the resume part,
    no base64."""
    if schema_cls not in _form_schemas:
        fields = {
            name: field
            for name, field in schema_cls().fields.items()
            if name not in ("file", "base64file")
        }
        fields["file"] = Upload(
            metadata={
                "description": f"The resume file ({ACCEPTED}, read from its bytes: "
                f"{WHAT_EACH_TYPE_IS})"
            }
        )
        name = schema_cls.__name__.removesuffix("Schema") + "FormSchema"
        _form_schemas[schema_cls] = ma.Schema.from_dict(fields, name=name)
    return _form_schemas[schema_cls]


JSON_TEXT_FIELDS = (
    ma.fields.List,
    ma.fields.Nested,
    ma.fields.Dict,
    ma.fields.Number,
    ma.fields.Boolean,
)


def form_values(schema: ma.Schema) -> dict:
    """The text fields of a multipart body; list, object, number and boolean fields may be sent as
    JSON text (the schema then reads them as it reads a JSON body)."""
    values: dict = {}
    for key in request.form:
        value = request.form.get(key)
        field = schema.fields.get(key)
        if isinstance(field, JSON_TEXT_FIELDS) and isinstance(value, str):
            try:
                value = loads_form_value(key, value)
            except ValueError:
                pass  # the schema reports the wrong type
        values[key] = value
    return values


def read_file_part(name: str = "file") -> ResumeUpload | None:
    """The request's multipart file part `name` as an upload, or None when absent."""
    part = request.files.get(name)
    return upload_from(part) if part is not None else None


def load_body(schema: ma.Schema) -> dict:
    """Validate a JSON or multipart/form-data body with `schema` (a ResumeBodyMixin); the file part
    becomes `resume`."""
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
    """Route decorator: the body as JSON (base64file) or multipart/form-data (file part), both
    documented in OpenAPI.

    The view receives the loaded values like flask-smorest's @arguments passes them (after self,
    before path args)."""
    # "required": false, as a missing body is answered like {} (422 naming the required fields):
    # openapi-python-client 0.29 types a two-content-type body as optional whatever this says, and
    # imports its Unset only when it is documented optional (a generated module would not import
    # otherwise)
    request_body = {
        "required": False,
        "description": description or None,
        "content": {
            "application/json": {"schema": schema_cls},
            "multipart/form-data": {"schema": form_schema(schema_cls)},
        },
    }
    if not description:
        del request_body["description"]

    # one instance for every request, as flask-smorest's @arguments keeps its schema
    schema = schema_cls()

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, load_body(schema), **kwargs)

        wrapper = blp.doc(requestBody=request_body)(wrapper)
        return blp.errors(413, 415, 422)(wrapper)

    return decorator
