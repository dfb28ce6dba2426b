"""/v1/applications/:id/instant-call, /v1/calls (read, list) and Twilio's callback routes (SPEC 4.1)."""

from flask import Response, request
from flask.views import MethodView

from app.http.api import Blueprint
from app.security.auth import current_tenant_id
from app.http.record_routes import add_list_route, add_read_route
from plugins.calls import callbacks, rescheduling, screening, services
from plugins.calls.models import Call
from plugins.calls.schemas import (
    CallListArgsSchema,
    CallSchema,
    CallWithRemindersSchema,
    CancelBodySchema,
    FaqBodySchema,
    FaqSchema,
    InstantCallArgsSchema,
    RescheduleBodySchema,
    RubricBodySchema,
    RubricSchema,
)

blp = Blueprint("calls", __name__, url_prefix="/v1", template_folder="templates",
                description="Screening calls to candidates: instant or scheduled")
callbacks_blp = Blueprint("calls_callbacks", __name__, url_prefix="/v1/calls/callbacks", auth=None,
                          description="Telephony provider callbacks (authenticated by the provider's signature)")

add_list_route(blp, Call, CallSchema, rule="/calls", args_schema=CallListArgsSchema, query_for=services.calls_query, list_name="calls",
               summary="List calls, oldest first, filtered by job, candidate, application (ids or source ids) or status")
add_read_route(blp, "/calls/<call_id>", Call, CallWithRemindersSchema, read=services.get_call_with_reminders,
               summary="Read a call: status, summary, assessment, transcript, timing and its reminders")


@blp.route("/applications/<application_id>/instant-call")
class InstantCall(MethodView):
    @blp.arguments(InstantCallArgsSchema, location="query")
    @blp.response(202, CallSchema)
    @blp.errors(409, 503)
    def post(self, args, application_id):
        """Call the application's candidate now: answers the queued call

        409 while one is queued, ringing or in progress; when the candidate withdrew consent to calls or their number
        is on the do-not-call list; and outside the candidate's calling hours in their zone (or past the tenant's
        daily cap of calls to the number), with `next_allowed` ({utc, local, timezone}) in the error, unless
        `outside_calling_hours=queue` asks to queue the call for that moment instead."""
        return services.start_instant_call(current_tenant_id(), application_id,
                                           outside_calling_hours=args["outside_calling_hours"])


@blp.route("/calls/<call_id>/reschedule")
class CallReschedule(MethodView):
    @blp.arguments(RescheduleBodySchema)
    @blp.response(200, CallSchema)
    @blp.errors(409, 422)
    @blp.doc(operationId="reschedule_call")
    def post(self, body, call_id):
        """Move a queued call to another time

        The time must fall in the job's window and days and the calling hours, in the candidate's zone (422 naming
        scheduled_for and the next allowed moment otherwise), and the candidate must consent to calls (409). A call
        ringing, in progress or finished answers 409. The call becomes a `callback`, announced by a call_activity
        event."""
        return rescheduling.reschedule_request(current_tenant_id(), call_id, body["scheduled_for"])


@blp.route("/calls/<call_id>/cancel")
class CallCancel(MethodView):
    @blp.arguments(CancelBodySchema, required=False)
    @blp.response(200, CallSchema)
    @blp.errors(409)
    @blp.doc(operationId="cancel_call")
    def post(self, body, call_id):
        """Cancel a queued call, with its reminders; a scheduled series it belongs to stops

        A call ringing, in progress or finished answers 409. The cancel is a call_activity event (status canceled)."""
        return rescheduling.cancel(current_tenant_id(), call_id,
                                   reason=(body or {}).get("reason") or "canceled by the client")


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
    @callbacks_blp.response(200, description="TwiML for Twilio to run next", content_type="text/xml")
    @callbacks_blp.errors(403, 404, 422)
    def post(self):
        """Twilio status and speech callbacks (X-Twilio-Signature required); not for API clients"""
        twiml = callbacks.handle(callbacks.public_url(request.full_path.rstrip("?"), request.url),
                                 request.form.to_dict(), request.headers.get("X-Twilio-Signature"),
                                 call_id=request.args.get("call_id", ""), question=request.args.get("question"),
                                 silent=bool(request.args.get("silent")))
        return Response(twiml, mimetype="text/xml")


@callbacks_blp.route("/twilio/sms")
class TwilioIncomingMessage(MethodView):
    @callbacks_blp.doc(operationId="receive_twilio_message")
    @callbacks_blp.response(200, description="TwiML: empty (Twilio answers opt-out keywords itself), or a Message "
                                             "answering a reply about a pending call", content_type="text/xml")
    @callbacks_blp.errors(403, 404, 422)
    def post(self):
        """Twilio's incoming-message webhook (X-Twilio-Signature required); not for API clients

        STOP (or another of Twilio's opt-out keywords) opts every candidate with the sender's number out of contact,
        START opts them back in. Any other text is a reply about the sender's pending call: a time ("tomorrow
        10am", in the candidate's zone), NOW, LATER, OK or "wrong number" move, confirm or stop it, answered with a
        short text; anything else gets one help text per call; a number with no pending call gets no answer."""
        twiml = callbacks.handle_incoming_message(callbacks.public_url(request.full_path.rstrip("?"), request.url),
                                                  request.form.to_dict(), request.headers.get("X-Twilio-Signature"))
        return Response(twiml, mimetype="text/xml")
