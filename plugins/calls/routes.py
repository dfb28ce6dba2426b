"""/v1/applications/:id/instant-call, /v1/calls (read, list, recording), /v1/call-settings and
the telephony providers' callback and incoming-message routes (Twilio's, Telnyx's)."""

from flask import Response, request
from flask.views import MethodView

from app.http.api import Blueprint, page_schema
from app.security.auth import current_tenant_id
from plugins.calls import callbacks, recording_routes, recordings, rescheduling, screening, services
from plugins.calls.schemas import (
    CallListArgsSchema,
    CallSchema,
    CallSettingsSchema,
    CallWithRemindersSchema,
    CancelBodySchema,
    FaqBodySchema,
    FaqSchema,
    InstantCallArgsSchema,
    RescheduleBodySchema,
    RubricBodySchema,
    RubricSchema,
)

blp = Blueprint(
    "calls",
    __name__,
    url_prefix="/v1",
    template_folder="templates",
    description="Screening calls to candidates: instant or scheduled",
)
callbacks_blp = Blueprint(
    "calls_callbacks",
    __name__,
    url_prefix="/v1/calls/callbacks",
    auth=None,
    description="Telephony provider callbacks (authenticated by the provider's signature)",
)

# Telnyx's callbacks: the same family of routes, under its own blueprint because Telnyx's setting
# (HIREKIT_TELNYX_PUBLIC_KEY) is what admits their forms
telnyx_callbacks_blp = Blueprint(
    "calls_callbacks_telnyx",
    __name__,
    url_prefix="/v1/calls/callbacks",
    auth=None,
    description="Telnyx's call callbacks (authenticated by Telnyx's Ed25519 signature)",
)


@blp.route("/calls")
class Calls(MethodView):
    @blp.arguments(CallListArgsSchema, location="query")
    @blp.response(200, page_schema(CallSchema))
    @blp.doc(
        operationId="list_calls",
        summary="List calls, oldest first, filtered by job, candidate, application (ids or source "
        "ids) or status",
    )
    def get(self, args):
        return services.list_calls(current_tenant_id(), **args)


@blp.route("/calls/<call_id>")
class CallItem(MethodView):
    @blp.response(200, CallWithRemindersSchema)
    @blp.doc(operationId="get_call")
    def get(self, call_id):
        """Read a call: status, summary, assessment, transcript, timing and its reminders"""
        return services.get_call_with_reminders(current_tenant_id(), call_id)


@blp.route("/applications/<application_id>/instant-call")
class InstantCall(MethodView):
    @blp.arguments(InstantCallArgsSchema, location="query")
    @blp.response(202, CallSchema)
    @blp.errors(409, 503)
    @blp.doc(operationId="start_instant_call")
    def post(self, args, application_id):
        """Call the application's candidate now: answers the queued call

        409 while one is queued, ringing or in progress; when the candidate withdrew consent to
        calls or their number is on the do-not-call list; and outside the candidate's calling hours
        in their zone (or past the tenant's daily cap of calls to the number), with `next_allowed`
        ({utc, local, timezone}) in the error, unless `outside_calling_hours=queue` asks to queue
        the call for that moment instead."""
        return services.start_instant_call(
            current_tenant_id(), application_id, outside_calling_hours=args["outside_calling_hours"]
        )


@blp.route("/calls/<call_id>/reschedule")
class CallReschedule(MethodView):
    @blp.arguments(RescheduleBodySchema)
    @blp.response(200, CallSchema)
    @blp.errors(409, 422)
    @blp.doc(operationId="reschedule_call")
    def post(self, body, call_id):
        """Move a queued call to another time

        The time must fall in the job's window and days and the calling hours, in the candidate's
        zone (422 naming scheduled_for and the next allowed moment otherwise), and the candidate
        must consent to calls (409). A call ringing, in progress or finished answers 409. The call
        becomes a `callback`, announced by a call_activity event."""
        return rescheduling.reschedule_request(current_tenant_id(), call_id, body["scheduled_for"])


@blp.route("/calls/<call_id>/cancel")
class CallCancel(MethodView):
    @blp.arguments(CancelBodySchema, required=False)
    @blp.response(200, CallSchema)
    @blp.errors(409)
    @blp.doc(operationId="cancel_call")
    def post(self, body, call_id):
        """Cancel a queued call, with its reminders; a scheduled series it belongs to stops

        A call ringing, in progress or finished answers 409. The cancel is a call_activity event
        (status canceled)."""
        return rescheduling.cancel(
            current_tenant_id(),
            call_id,
            reason=(body or {}).get("reason") or "canceled by the client",
        )


@blp.route("/calls/<call_id>/recording")
class CallRecordingAudio(MethodView):
    @blp.doc(operationId="get_call_recording")
    @blp.response(
        200,
        content_type="application/octet-stream",
        description=(
            "The recording's audio, both channels, streamed from the telephony provider: MP3 "
            "(Content-Type audio/mpeg), with Content-Disposition naming the file"
        ),
    )
    @blp.errors(404, 502)
    def get(self, call_id):
        """Download a call's recording (when the tenant records its calls); 404 when there is none"""  # noqa: E501
        return recording_routes.stream_recording(current_tenant_id(), call_id)


@blp.route("/call-settings")
class CallSettingsResource(MethodView):
    @blp.doc(operationId="get_call_settings")
    @blp.response(200, CallSettingsSchema)
    def get(self):
        """Read the tenant's call settings: whether calls are recorded"""
        return recordings.settings_for(current_tenant_id())

    @blp.doc(operationId="update_call_settings")
    @blp.arguments(CallSettingsSchema)
    @blp.response(200, CallSettingsSchema)
    def put(self, body):
        """Set the tenant's call settings

        `recording` true records both channels of every call placed from now on."""
        return recordings.update_settings(current_tenant_id(), recording=body["recording"])


@blp.route("/jobs/<job_id>/faq")
class JobFaq(MethodView):
    @blp.response(200, FaqSchema)
    def get(self, job_id):
        """The job's FAQ: what a call may answer to candidates' questions (empty until PUT)"""
        return screening.get_faq(current_tenant_id(), job_id)

    @blp.arguments(FaqBodySchema)
    @blp.response(200, FaqSchema)
    def put(self, values, job_id):
        """Replace the job's FAQ (at most 100 question and answer pairs)"""
        return screening.replace_faq(current_tenant_id(), job_id, values)


@blp.route("/jobs/<job_id>/questions/<question_id>/rubric")
class QuestionRubric(MethodView):
    @blp.response(200, RubricSchema)
    def get(self, job_id, question_id):
        """How the question's answer is judged on a call (the inferred defaults until one is PUT)"""
        return screening.get_rubric(current_tenant_id(), job_id, question_id)

    @blp.arguments(RubricBodySchema)
    @blp.response(200, RubricSchema)
    def put(self, values, job_id, question_id):
        """Replace the question's rubric: answer type, expected or minimum, knockout, weight"""
        return screening.replace_rubric(current_tenant_id(), job_id, question_id, values)


@callbacks_blp.route("/twilio")
class TwilioCallback(MethodView):
    @callbacks_blp.response(
        200, description="TwiML for Twilio to run next", content_type="text/xml"
    )
    @callbacks_blp.errors(403, 404, 422)
    @callbacks_blp.doc(operationId="receive_twilio_callback")
    def post(self):
        """Twilio status, machine-detection and recording callbacks (X-Twilio-Signature required);
        not for API clients"""
        twiml = callbacks.handle(
            callbacks.public_url(request.full_path.rstrip("?"), request.url),
            request.form.to_dict(),
            request.headers.get("X-Twilio-Signature"),
            call_id=request.args.get("call_id", ""),
            event=request.args.get("event"),
            voicemail=request.args.get("voicemail") == "1",
        )
        return Response(twiml, mimetype="text/xml")


@telnyx_callbacks_blp.route("/telnyx")
class TelnyxCallback(MethodView):
    @telnyx_callbacks_blp.doc(operationId="receive_telnyx_callback")
    @telnyx_callbacks_blp.response(
        200,
        description="Empty TeXML (these callbacks do not steer the call)",
        content_type="text/xml",
    )
    @telnyx_callbacks_blp.errors(403, 404, 422)
    def post(self):
        """Telnyx's signed TeXML call callbacks (status, machine detection, recording)

        Each carries telnyx-signature-ed25519 and telnyx-timestamp (Ed25519 over
        `timestamp|body`, within 5 minutes of now); not for API clients."""
        texml = callbacks.handle_telnyx(
            request.get_data(cache=True),
            request.form.to_dict(),
            request.headers,
            call_id=request.args.get("call_id", ""),
            event=request.args.get("event"),
            voicemail=request.args.get("voicemail") == "1",
        )
        return Response(texml, mimetype="text/xml")


@callbacks_blp.route("/twilio/sms")
class TwilioIncomingMessage(MethodView):
    @callbacks_blp.doc(operationId="receive_twilio_message")
    @callbacks_blp.response(
        200,
        description="TwiML: empty (Twilio answers opt-out keywords itself), or a Message "
        "answering a reply about a pending call",
        content_type="text/xml",
    )
    @callbacks_blp.errors(403, 404, 422)
    def post(self):
        """Twilio's incoming-message webhook (X-Twilio-Signature required); not for API clients

        STOP (or another of Twilio's opt-out keywords) opts every candidate with the sender's
        number out of contact, START opts them back in. Any other text is a reply about the
        sender's pending call: a time ("tomorrow 10am", in the candidate's zone), NOW, LATER, OK or
        "wrong number" move, confirm or stop it, answered with a short text (in the candidate's
        quiet hours, once their calling hours open); anything else gets one help text per call; a
        number with no pending call gets no answer."""
        twiml = callbacks.handle_incoming_message(
            callbacks.public_url(request.full_path.rstrip("?"), request.url),
            request.form.to_dict(),
            request.headers.get("X-Twilio-Signature"),
        )
        return Response(twiml, mimetype="text/xml")


@telnyx_callbacks_blp.route("/telnyx/sms")
class TelnyxIncomingMessage(MethodView):
    @telnyx_callbacks_blp.doc(operationId="receive_telnyx_message")
    @telnyx_callbacks_blp.response(
        204,
        description="Taken; an answer, when one may go now, is sent as a message of its own",
    )
    @telnyx_callbacks_blp.errors(403, 404, 422)
    def post(self):
        """Telnyx's messaging webhook (telnyx-signature-ed25519 required); not for API clients

        The messaging profile's webhook: a signed JSON event (Ed25519 over `timestamp|body`, within
        5 minutes of now). A `message.received` event is a text to the number, read as Twilio's
        incoming messages are: STOP (or another of Telnyx's opt-out keywords) opts every candidate
        with the sender's number out of contact, START or UNSTOP opts them back in (Telnyx answers
        those itself); any other text is a reply about the sender's pending call, answered with a
        message through Telnyx's Messaging API (in the candidate's quiet hours, once their calling
        hours open). Other events (an outbound message's status) are taken and ignored."""
        callbacks.handle_telnyx_message(request.get_data(cache=True), request.headers)
        return Response(status=204)
