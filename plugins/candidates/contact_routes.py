"""Contact settings: a candidate's time zone and consent (sub-resources, so the candidate bodies
stay as they are), the tenant's contact policy (default zone, calling hours, daily call cap) and its
do-not-call list."""

from __future__ import annotations

import marshmallow as ma
from flask.views import MethodView

from app.data.db import database
from app.http.api import Blueprint, PageArgsSchema, UtcDateTime, page_schema
from app.http.fields import StrictSchema
from app.security.auth import current_tenant_id
from plugins.candidates import consent as contact_consent
from plugins.candidates import contact_policy, do_not_call, services, zones
from plugins.candidates.schemas import (
    CandidateConsentBodySchema,
    CandidateSchema,
    CandidateTimezoneBodySchema,
    ConsentSchema,
    PhoneNumber,
)

contact_blp = Blueprint(
    "contact",
    __name__,
    url_prefix="/v1",
    description="When and how candidates may be contacted: their zones and consent, the tenant's "
    "calling hours and do-not-call list",
)


@contact_blp.route("/candidates/<candidate_id>/timezone")
class CandidateTimezone(MethodView):
    @contact_blp.arguments(CandidateTimezoneBodySchema)
    @contact_blp.response(200, CandidateSchema)
    @contact_blp.doc(operationId="set_candidate_timezone")
    def put(self, body, candidate_id):
        """Set the candidate's own time zone (an IANA name), or null to go back to the inferred one

        Answers the candidate with `timezone` and `timezone_source` (explicit, or as inferred)."""
        with database.atomic():
            candidate = services.get_candidate(current_tenant_id(), candidate_id)
            zones.set_explicit_zone(candidate, body["timezone"])
        return candidate


@contact_blp.route("/candidates/<candidate_id>/consent")
class CandidateConsent(MethodView):
    @contact_blp.response(200, ConsentSchema)
    @contact_blp.doc(operationId="get_candidate_consent")
    def get(self, candidate_id):
        """The candidate's consent per channel (voice, sms, email), each with its source and time"""
        return contact_consent.consent_of(services.get_candidate(current_tenant_id(), candidate_id))

    @contact_blp.arguments(CandidateConsentBodySchema)
    @contact_blp.response(200, CandidateSchema)
    @contact_blp.doc(operationId="set_candidate_consent")
    def put(self, body, candidate_id):
        """Grant or revoke consent on the channels sent

        Each change is a candidate.consent event (feed and webhooks). Revoking voice cancels the
        candidate's pending calls; with no channel left, the candidate counts as opted out
        (`contact_opt_out: true`)."""
        source = body.pop("source")
        with database.atomic():
            candidate = services.get_candidate(current_tenant_id(), candidate_id)
            contact_consent.change_consent(candidate, body, source)
        return candidate


class ContactPolicySchema(ma.Schema):
    timezone = ma.fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "The tenant's default zone for candidates whose zone is neither set nor "
            "inferred; null: the "
            "server's"
        },
    )
    effective_timezone = ma.fields.String(
        required=True, metadata={"description": "The default zone in force"}
    )
    calling_hours_start = ma.fields.String(
        required=True,
        metadata={
            "description": "Start of the calling hours in the candidate's local time (HH:MM): no "
            "call or text before"
        },
    )
    calling_hours_end = ma.fields.String(
        required=True,
        metadata={
            "description": "End of the calling hours (HH:MM, 24:00 for midnight): no call or text "
            "from then on"
        },
    )
    daily_call_limit = ma.fields.Integer(
        required=True,
        metadata={
            "description": "Calls placed to one phone number per local day across all the tenant's "
            "jobs; 0: no cap"
        },
    )


class ContactPolicyBodySchema(StrictSchema):
    """PUT /v1/tenant/contact-settings: the settings sent change, null returns one to the server's
    default."""

    timezone = ma.fields.String(allow_none=True, metadata={"example": "America/New_York"})
    calling_hours_start = ma.fields.String(allow_none=True, metadata={"example": "08:00"})
    calling_hours_end = ma.fields.String(allow_none=True, metadata={"example": "21:00"})
    daily_call_limit = ma.fields.Integer(allow_none=True, validate=ma.validate.Range(0, 100))

    @ma.validates_schema
    def usable(self, data, **kwargs):
        errors = {}
        if data.get("timezone") is not None and contact_policy.zone_problem(data["timezone"]):
            errors["timezone"] = [contact_policy.zone_problem(data["timezone"])]
        for name in ("calling_hours_start", "calling_hours_end"):
            if data.get(name) is not None and contact_policy.clock_problem(data[name]):
                errors[name] = [contact_policy.clock_problem(data[name])]
        if errors:
            raise ma.ValidationError(errors)


@contact_blp.route("/tenant/contact-settings")
class TenantContactSettings(MethodView):
    @contact_blp.response(200, ContactPolicySchema)
    @contact_blp.doc(operationId="get_contact_settings")
    def get(self):
        """The tenant's contact settings in force: default zone, calling hours, daily call cap per number"""  # noqa: E501
        return contact_policy.policy_record(contact_policy.policy_for(current_tenant_id()))

    @contact_blp.arguments(ContactPolicyBodySchema)
    @contact_blp.response(200, ContactPolicySchema)
    @contact_blp.doc(operationId="set_contact_settings")
    def put(self, body):
        """Change the tenant's contact settings (those sent; null: back to the server's default)

        The calling hours apply in each candidate's local time to every call (instant, scheduled,
        retried, called back) and text message, whatever a job's window says. The start must be
        before the end."""
        tenant_id = current_tenant_id()
        current = contact_policy.policy_for(tenant_id)
        start = (
            body.get("calling_hours_start", current.calling_hours_start)
            or current.calling_hours_start
        )
        end = body.get("calling_hours_end", current.calling_hours_end) or current.calling_hours_end
        if start == contact_policy.END_OF_DAY or not start < end:
            from app.errors import ValidationFailed

            raise ValidationFailed(
                {"calling_hours_start": [f"Must be before calling_hours_end ({end})."]}
            )
        with database.atomic():
            policy = contact_policy.set_policy(tenant_id, body)
            # candidates on the tenant's (or server's) zone follow the new default
            if "timezone" in body:
                zones.refresh_default_zones(tenant_id)
        return contact_policy.policy_record(policy)


class DoNotCallSchema(ma.Schema):
    phone_no = ma.fields.String(required=True, metadata={"description": "E.164"})
    note = ma.fields.String(required=True, allow_none=True)
    created_at = UtcDateTime(required=True)


class DoNotCallBodySchema(StrictSchema):
    phone_no = PhoneNumber(
        required=True,
        metadata={
            "description": "E.164 (international format with country code)",
            "example": "+14155552671",
        },
    )
    note = ma.fields.String(
        load_default=None, allow_none=True, validate=ma.validate.Length(max=do_not_call.MAX_NOTE)
    )


@contact_blp.route("/do-not-call")
class DoNotCallList(MethodView):
    @contact_blp.arguments(PageArgsSchema, location="query")
    @contact_blp.response(200, page_schema(DoNotCallSchema))
    @contact_blp.doc(operationId="list_do_not_call")
    def get(self, args):
        """The tenant's do-not-call list, oldest entry first"""
        return do_not_call.list_numbers(current_tenant_id(), args.get("page") or 1, args["size"])

    @contact_blp.arguments(DoNotCallBodySchema)
    @contact_blp.response(201, DoNotCallSchema)
    @contact_blp.doc(operationId="add_do_not_call")
    def post(self, body):
        """Add a number (E.164) to the do-not-call list: no call or text of the tenant's reaches it

        Pending calls to it are canceled when their time comes. Adding a listed number again answers
        its entry."""
        entry, _ = do_not_call.add_number(current_tenant_id(), body["phone_no"], body.get("note"))
        return entry


@contact_blp.route("/do-not-call/<phone_no>")
class DoNotCallEntry(MethodView):
    @contact_blp.response(204)
    @contact_blp.doc(operationId="remove_do_not_call")
    def delete(self, phone_no):
        """Remove a number (E.164, e.g. %2B14155552671) from the do-not-call list"""
        do_not_call.remove_number(current_tenant_id(), phone_no.strip())
