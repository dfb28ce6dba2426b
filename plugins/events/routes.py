"""GET /v1/events: the tenant's stored events, oldest first, so a receiver that missed webhook
deliveries can pull them.

An event's `id` is the webhook-id its deliveries carried. `after` is an opaque signed position
answered as `next_after` on every page, the last included, so a poller resumes from it. It names the
tenant and the id of the page's last event, nothing else: the store's sequence is shared by every
tenant, so a position carrying it would tell a tenant how many events the others have. The server
finds that event's place in the store; an event since purged resumes at the oldest one retained.
Like list cursors it never expires, and stops verifying once the key that signed it leaves
HIREKIT_SECRET_KEY (app.security.tokens). Events older than the retention
(HIREKIT_EVENT_RETENTION_DAYS, 30) are not served, and the worker purges them."""

from __future__ import annotations

import uuid

import marshmallow as ma

from flask.views import MethodView

from app.security import tokens
from app.http.api import Blueprint, UtcDateTime
from app.security.auth import current_tenant_id
from app.errors import ApiError
from app.data.events import DeclaredEventType, Event, retained_since
from app.http.fields import BoundedInteger

CURSOR_KIND = "event-cursor"

blp = Blueprint("events", __name__, url_prefix="/v1/events", description="The tenant's event feed")


class EventFeedArgsSchema(ma.Schema):
    after = ma.fields.String(
        metadata={
            "description": "A previous answer's next_after: only events after it. It never "
            "expires, is this tenant's only, and stops working when the server "
            "secret that signed it is rotated out"
        }
    )
    type = ma.fields.String(
        validate=DeclaredEventType(), metadata={"description": "Only events of this type"}
    )
    size = BoundedInteger(1, 100, load_default=50, metadata={"description": "1-100, default 50"})


class EventSchema(ma.Schema):
    id = ma.fields.UUID(
        required=True,
        attribute="event_id",
        metadata={"description": "The webhook-id of its deliveries"},
    )
    type = ma.fields.String(required=True)
    payload = ma.fields.Dict(
        required=True, metadata={"description": "The record as it was when the event happened"}
    )
    created_at = UtcDateTime(required=True)


class EventFeedSchema(ma.Schema):
    data = ma.fields.List(ma.fields.Nested(EventSchema), required=True)
    next_after = ma.fields.String(
        metadata={
            "description": "Pass as `after` to continue; present whenever data is not empty, the "
            "last page included"
        }
    )


def invalid_after() -> ApiError:
    return ApiError(
        400,
        "after: not an event cursor this server issued to this tenant",
        fields={"after": ["Not a valid event cursor."]},
        type="invalid_cursor",
    )


def read_after(after: str, tenant_id: str) -> int:
    """The store position (sequence) to continue after, from a `next_after` of this tenant: [tenant,
    event id], or [tenant, sequence] as positions were signed before they named the event. 400 for
    anything else."""
    try:
        bound_tenant, position = tokens.verify(CURSOR_KIND, after, max_age=tokens.NEVER_EXPIRES)
    except (tokens.InvalidToken, TypeError, ValueError):
        raise invalid_after() from None
    if bound_tenant != tenant_id:
        raise invalid_after()
    # a position signed before positions named their event: honoured, never issued again
    if type(position) is int:
        return position
    try:
        event_id = uuid.UUID(position)
    except (TypeError, ValueError, AttributeError):
        raise invalid_after() from None
    last = (
        Event.select(Event.sequence)
        .where((Event.event_id == event_id) & (Event.tenant == tenant_id))
        .first()
    )
    # purged since: the oldest retained events come next
    return last.sequence if last is not None else 0


def event_feed(
    tenant_id: str, *, size: int, after: str | None = None, type: str | None = None
) -> dict:
    """A page of the tenant's retained events in stored order, after `after`, of `type`."""
    query = Event.select().where(
        (Event.tenant == tenant_id) & (Event.created_at >= retained_since())
    )
    if after:
        query = query.where(Event.sequence > read_after(after, tenant_id))
    if type:
        query = query.where(Event.type == type)
    events = list(query.order_by(Event.sequence).limit(size))
    body = {"data": events}
    if events:
        body["next_after"] = tokens.sign(CURSOR_KIND, [tenant_id, str(events[-1].event_id)])
    return body


@blp.route("")
class Events(MethodView):
    @blp.arguments(EventFeedArgsSchema, location="query")
    @blp.response(200, EventFeedSchema)
    @blp.doc(operationId="list_events")
    def get(self, args):
        """The tenant's events (call_activity, application_activty), oldest first, with the webhook deliveries' ids"""  # noqa: E501
        return event_feed(current_tenant_id(), **args)
