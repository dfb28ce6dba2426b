"""Candidate bodies (create, update), the candidate record and its list filters."""

import marshmallow as ma
import phonenumbers

from app.http.api import PageArgsSchema, RecordSchema, UtcDateTime
from app.http.fields import OnlySentFields, StrictSchema, Text, optional_text
from app.files.fields import ResumeBodyMixin, ResumeField
from plugins.candidates.consent import API as API_SOURCE
from plugins.candidates.consent import CHANNELS as CONSENT_CHANNELS
from plugins.candidates.consent import SOURCES as CONSENT_SOURCES
from plugins.candidates.contact_policy import zone_problem
from plugins.candidates.zones import SOURCES as ZONE_SOURCES

PHONE_EXAMPLE = "+1 415 555 2671"


# characters as sent: far more than any number with its spaces and extension
PHONE_NUMBER_MAX_LENGTH = 64


class PhoneNumber(ma.fields.String):
    """An international phone number with its country code, answered and stored in E.164
    (+14155552671); at most MAX_LENGTH characters as sent (spaces, dashes and an extension
    included), documented as maxLength."""

    MAX_LENGTH = PHONE_NUMBER_MAX_LENGTH

    def __init__(self, **kwargs):
        kwargs["validate"] = [
            *(kwargs.get("validate") or []),
            ma.validate.Length(max=self.MAX_LENGTH),
        ]
        super().__init__(**kwargs)

    default_error_messages = {
        "no_country_code": f"Include the country code in international format, e.g. {PHONE_EXAMPLE}"
        ".",
        "unparsable": f"Not a phone number; use international format, e.g. {PHONE_EXAMPLE}.",
        # "invalid" is String's: not a string
        "invalid_number": "Not a valid phone number for country code +{code}.",
    }

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str) and len(value) > self.MAX_LENGTH:  # refused before it is parsed
            raise ma.ValidationError(f"Longer than maximum length {self.MAX_LENGTH}.")
        text = super()._deserialize(value, attr, data, **kwargs).strip()
        if not text.startswith("+") and not text.startswith("00"):
            raise self.make_error("no_country_code")
        try:
            number = phonenumbers.parse("+" + text[2:] if text.startswith("00") else text, None)
        except phonenumbers.NumberParseException as error:
            if error.error_type == phonenumbers.NumberParseException.INVALID_COUNTRY_CODE:
                raise self.make_error("no_country_code") from None
            raise self.make_error("unparsable") from None
        if not phonenumbers.is_valid_number(number):
            raise self.make_error("invalid_number", code=number.country_code)
        return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


class CandidateCreateSchema(ResumeBodyMixin, StrictSchema):
    """The create body; the resume comes as `file` (a reference), `base64file` or a multipart file
    part."""

    first_name = Text(required=True, max_length=255)
    last_name = optional_text(max_length=255)
    email = ma.fields.Email(required=True, validate=ma.validate.Length(max=320))
    phone_no = PhoneNumber(
        required=True,
        metadata={
            "description": "International format with country code; stored as E.164",
            "example": PHONE_EXAMPLE,
        },
    )
    city = optional_text(max_length=255)
    state_name = optional_text(max_length=255)
    country = optional_text(max_length=255)
    source = Text(
        required=True,
        max_length=255,
        metadata={"description": "Where the candidate applied from", "example": "referral"},
    )
    source_id = Text(
        required=True,
        max_length=255,
        metadata={"description": "The candidate's id at the source; unique per tenant"},
    )


class CandidateUpdateSchema(OnlySentFields, StrictSchema):
    """The update body, recruiter and status fields included; unsent optional fields are kept."""

    first_name = Text(required=True, max_length=255)
    last_name = optional_text(max_length=255)
    email = ma.fields.Email(required=True, validate=ma.validate.Length(max=320))
    phone_no = PhoneNumber(required=True, metadata={"example": PHONE_EXAMPLE})
    city = optional_text(max_length=255)
    state_name = optional_text(max_length=255)
    country = optional_text(max_length=255)
    source = Text(required=True, max_length=255)
    source_id = Text(required=True, max_length=255)
    recruiter_name = optional_text(max_length=255)
    recruiter_email = ma.fields.Email(load_default=None, allow_none=True)
    recruiter_work_phone_no = optional_text(max_length=64)
    status = optional_text(max_length=100)


class CandidateSchema(RecordSchema):
    source_id = ma.fields.String()
    source = ma.fields.String()
    first_name = ma.fields.String()
    last_name = ma.fields.String(allow_none=True)
    email = ma.fields.String()
    phone_no = ma.fields.String(allow_none=True, metadata={"description": "E.164"})
    city = ma.fields.String(allow_none=True)
    state_name = ma.fields.String(allow_none=True)
    country = ma.fields.String(allow_none=True)
    recruiter_name = ma.fields.String(allow_none=True)
    recruiter_email = ma.fields.String(allow_none=True)
    recruiter_work_phone_no = ma.fields.String(allow_none=True)
    status = ma.fields.String(allow_none=True)
    resume = ResumeField(
        metadata={
            "description": "Resume metadata, or null; the bytes are at /v1/candidates/{id}/resume"
        }
    )
    contact_opt_out = ma.fields.Boolean(
        metadata={
            "description": "true once the candidate opted out of contact (POST "
            "/v1/candidates/{id}/opt-out, or STOP by "
            "SMS): no reminders, no scheduled or instant calls. Read-only: DELETE on the same path "
            "opts back in"
        }
    )
    contact_opted_out_at = UtcDateTime(
        allow_none=True, metadata={"description": "When the candidate opted out, or null"}
    )
    timezone = ma.fields.String(
        allow_none=True,
        metadata={
            "description": "The candidate's IANA time zone: calling windows, quiet hours and the "
            "times in reminders are "
            "theirs. Set it with PUT /v1/candidates/{id}/timezone",
            "example": "America/Chicago",
        },
    )
    timezone_source = ma.fields.String(
        allow_none=True,
        metadata={
            "description": "Where the zone comes from: "
            + ", ".join(ZONE_SOURCES)
            + " (set explicitly, the phone "
            "number, the candidate's location, the tenant's default zone, the server's)"
        },
    )
    consent = ma.fields.Nested(
        lambda: ConsentSchema(),
        allow_none=True,
        metadata={
            "description": "Consent to be contacted per channel, with its source and time; change "
            "it with PUT "
            "/v1/candidates/{id}/consent"
        },
    )


class ChannelConsentSchema(ma.Schema):
    granted = ma.fields.Boolean(required=True)
    source = ma.fields.String(required=True, metadata={"description": ", ".join(CONSENT_SOURCES)})
    changed_at = ma.fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "When it was last granted or revoked (ISO 8601 UTC)"},
    )


class ConsentSchema(ma.Schema):
    """Consent per channel."""

    voice = ma.fields.Nested(
        ChannelConsentSchema, required=True, metadata={"description": "Screening calls"}
    )
    sms = ma.fields.Nested(
        ChannelConsentSchema, required=True, metadata={"description": "Text messages"}
    )
    email = ma.fields.Nested(
        ChannelConsentSchema, required=True, metadata={"description": "Emails"}
    )


class ConsentChangeSchema(ChannelConsentSchema):
    """One change of a candidate.consent event."""

    channel = ma.fields.String(required=True, metadata={"description": ", ".join(CONSENT_CHANNELS)})


class CandidateConsentEventSchema(ma.Schema):
    """The record of a candidate.consent event (and what its webhooks may select)."""

    id = ma.fields.UUID(required=True, metadata={"description": "The candidate's id"})
    candidate_id = ma.fields.UUID(required=True)
    candidate_source_id = ma.fields.String(required=True)
    changes = ma.fields.List(ma.fields.Nested(ConsentChangeSchema), required=True)
    consent = ma.fields.Nested(ConsentSchema, required=True)
    contact_opt_out = ma.fields.Boolean(required=True)
    changed_at = ma.fields.String(required=True)


class CandidateConsentBodySchema(StrictSchema):
    """PUT /v1/candidates/{id}/consent: the channels to grant or revoke (those not sent are left as
    they are)."""

    voice = ma.fields.Boolean(
        metadata={"description": "true grants, false revokes screening calls"}
    )
    sms = ma.fields.Boolean(metadata={"description": "true grants, false revokes text messages"})
    email = ma.fields.Boolean(metadata={"description": "true grants, false revokes emails"})
    source = ma.fields.String(
        load_default=API_SOURCE,
        validate=ma.validate.OneOf(CONSENT_SOURCES),
        metadata={"description": "Where the change came from (default api)"},
    )

    @ma.validates_schema
    def a_channel(self, data, **kwargs):
        if not any(channel in data for channel in CONSENT_CHANNELS):
            raise ma.ValidationError({"voice": ["Send at least one of voice, sms, email."]})


class CandidateTimezoneBodySchema(StrictSchema):
    """PUT /v1/candidates/{id}/timezone."""

    # the longest IANA zone name is 32 characters
    timezone = ma.fields.String(
        required=True,
        allow_none=True,
        validate=ma.validate.Length(max=64),
        metadata={
            "description": "An IANA zone name; null goes back to the inferred zone",
            "example": "Europe/Paris",
        },
    )

    @ma.validates("timezone")
    def iana(self, value, **kwargs):
        problem = zone_problem(value) if value is not None else None
        if problem:
            raise ma.ValidationError(problem)


class CandidateTimezoneSchema(ma.Schema):
    timezone = ma.fields.String(required=True)
    timezone_source = ma.fields.String(
        required=True, metadata={"description": ", ".join(ZONE_SOURCES)}
    )


class CandidateListArgsSchema(PageArgsSchema):
    source_id = ma.fields.String()
    email = ma.fields.String(metadata={"description": "Case-insensitive exact match"})
