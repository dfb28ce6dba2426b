"""Call operations the routes and MCP tools use: start an instant call, read one, list them."""

from __future__ import annotations

from app.http import listing
from app.data.db import database
from app.errors import Conflict
from app.background.queue import get_queue
from app.data.records import get_owned
from plugins.applications.models import Application
from plugins.calls import dispatch
from plugins.calls.lifecycle import active_call, new_call
from plugins.calls.models import INSTANT, Call, CallReminder

FILTER_COLUMNS = {"job_id": Call.job, "candidate_id": Call.candidate, "application_id": Call.application,
                  "application_source_id": Call.application_source_id, "job_source_id": Call.job_source_id,
                  "candidate_source_id": Call.candidate_source_id, "status": Call.status}


def get_call(tenant_id: str, call_id) -> Call:
    return get_owned(Call, tenant_id, call_id)


def get_call_with_reminders(tenant_id: str, call_id) -> Call:
    """The call (404 as get_call) with `reminders`, its stored reminders by due time, for CallWithRemindersSchema."""
    call = get_call(tenant_id, call_id)
    call.reminders = list(CallReminder.select().where(CallReminder.call == call.id)
                          .order_by(CallReminder.due_at, CallReminder.channel))
    return call


def calls_query(tenant_id: str, **filters):
    """The tenant's calls matching the list filters (empty ones ignored)."""
    query = Call.owned_rows(tenant_id)
    for name, value in filters.items():
        if value is not None:
            query = query.where(FILTER_COLUMNS[name] == value)
    return query


def list_calls(tenant_id: str, **args) -> dict:
    """A page of the tenant's calls in either list mode (app.http.listing)."""
    window, filters = listing.split_window(args)
    return listing.answer(calls_query(tenant_id, **filters), window, tenant_id=tenant_id, list_name="calls", filters=filters)


def start_instant_call(tenant_id: str, application_id) -> Call:
    """POST .../instant-call: queue a call now; 409 while the application has one queued, ringing or in progress.

    The call is placed once its row commits. On Redis the queue is checked inside the transaction, so a Redis that is
    down answers 503 with nothing stored rather than a call that would wait for the reaper.
    """
    application = get_owned(Application, tenant_id, application_id)
    with database.atomic():
        existing = active_call(application.id)
        if existing is not None:
            raise Conflict(f"application {application.id} already has a call {existing.status}", existing_id=existing.id)
        get_queue().check_reachable()
        call = new_call(application, trigger=INSTANT)
        dispatch.place_soon(call.id)
    return call
