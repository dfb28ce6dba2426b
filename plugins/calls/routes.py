"""/v1/applications/:id/instant-call, /v1/calls (read, list) and Twilio's callback route (SPEC 4.1)."""

from flask import Response, request
from flask.views import MethodView

from app.api import Blueprint
from app.auth import current_tenant_id
from app.record_routes import add_list_route, add_read_route
from plugins.calls import callbacks, services
from plugins.calls.models import Call
from plugins.calls.schemas import CallListArgsSchema, CallSchema

blp = Blueprint("calls", __name__, url_prefix="/v1", description="Screening calls to candidates: instant or scheduled")
callbacks_blp = Blueprint("calls_callbacks", __name__, url_prefix="/v1/calls/callbacks", auth=None,
                          description="Telephony provider callbacks (authenticated by the provider's signature)")

add_list_route(blp, Call, CallSchema, rule="/calls", args_schema=CallListArgsSchema, query_for=services.calls_query, list_name="calls",
               summary="List calls, oldest first, filtered by job, candidate, application (ids or source ids) or status")
add_read_route(blp, "/calls/<call_id>", Call, CallSchema, summary="Read a call: status, summary, assessment, transcript and timing")


@blp.route("/applications/<application_id>/instant-call")
class InstantCall(MethodView):
    @blp.response(202, CallSchema)
    @blp.errors(409, 503)
    def post(self, application_id):
        """Call the application's candidate now: answers the queued call; 409 while one is queued, ringing or in progress"""
        return services.start_instant_call(current_tenant_id(), application_id)


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
