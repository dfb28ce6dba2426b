"""What a reminder says: the email (text and HTML) and the SMS, rendered from the calls family's
Jinja2 templates (plugins/calls/templates/calls/) with the job title, the company, the call time in
the candidate's own zone, named, and the link to the candidate's page where they move or cancel the
call."""

from __future__ import annotations

from flask import render_template

from plugins.calls.calling_hours import local_call_time
from plugins.calls.models import Call
from plugins.calls.page_links import page_link
from plugins.candidates.models import Candidate
from plugins.candidates.zones import zone_of


def message_context(call: Call, candidate: Candidate) -> dict:
    job = call.job
    return {
        "first_name": candidate.first_name,
        "job_title": job.title,
        "company": job.client_name,
        "call_time": local_call_time(call.scheduled_for, zone_of(candidate)[0]),
        "phone_no": call.phone_no,
        "page_link": page_link(call),
    }


def email_message(call: Call, candidate: Candidate) -> tuple[str, str, str]:
    """(subject, text body, HTML body) of the email reminder."""
    context = message_context(call, candidate)
    subject = f"Screening call for {context['job_title']}" + (
        f" at {context['company']}" if context["company"] else ""
    )
    return (
        subject,
        render_template("calls/reminder_email.txt", **context),
        render_template("calls/reminder_email.html", **context),
    )


def sms_message(call: Call, candidate: Candidate) -> str:
    return render_template("calls/reminder_sms.txt", **message_context(call, candidate)).strip()
