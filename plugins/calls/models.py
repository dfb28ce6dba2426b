"""Screening calls: one row per attempt to reach a candidate, and the per-application plan that
drives scheduled attempts."""

import peewee as pw

from app.data.db import JSONField, TimestampedModel, new_uuid
from app.data.records import TenantRecord, tenant_indexes
from app.data.tenancy import Tenant
from plugins.applications.models import Application
from plugins.candidates.models import Candidate
from plugins.jobs.models import Job
from plugins.questions.models import Question

QUEUED, RINGING, IN_PROGRESS = "queued", "ringing", "in_progress"
COMPLETED, NO_ANSWER, BUSY, FAILED, CANCELED = (
    "completed",
    "no_answer",
    "busy",
    "failed",
    "canceled",
)
STATUSES = (QUEUED, RINGING, IN_PROGRESS, COMPLETED, NO_ANSWER, BUSY, FAILED, CANCELED)
ACTIVE_STATUSES = (QUEUED, RINGING, IN_PROGRESS)
UNREACHED_STATUSES = (NO_ANSWER, BUSY, FAILED)  # a scheduled series tries again after these
FINAL_STATUSES = (COMPLETED, NO_ANSWER, BUSY, FAILED, CANCELED)

INSTANT, SCHEDULED, CALLBACK = (
    "instant",
    "scheduled",
    "callback",
)  # callback: at a time someone chose
TRIGGERS = (INSTANT, SCHEDULED, CALLBACK)
# why a call or reminder to such a candidate was canceled or skipped
OPTED_OUT = "the candidate opted out of contact"


class Call(TenantRecord):
    label = "call"

    application = pw.ForeignKeyField(Application, on_delete="CASCADE", column_name="application_id")
    job = pw.ForeignKeyField(Job, on_delete="CASCADE", column_name="job_id")
    candidate = pw.ForeignKeyField(Candidate, on_delete="CASCADE", column_name="candidate_id")
    application_source_id = pw.CharField(max_length=255, null=True)
    job_source_id = pw.CharField(max_length=255, null=True)
    candidate_source_id = pw.CharField(max_length=255, null=True)
    status = pw.CharField(max_length=16, default=QUEUED)
    attempt = pw.IntegerField(default=1)
    trigger = pw.CharField(max_length=16, default=INSTANT)
    series = pw.UUIDField(
        null=True
    )  # the scheduled series (CallPlan.series) this attempt belongs to
    scheduled_for = pw.DateTimeField(null=True)
    booked_by = pw.CharField(max_length=16, null=True)
    page_nonce = pw.CharField(
        max_length=32, null=True
    )  # the current link to the candidate's page carries it
    # the one help text a reply not understood gets
    sms_help_sent_at = pw.DateTimeField(null=True)
    phone_no = pw.CharField(max_length=32)
    provider = pw.CharField(max_length=32)
    provider_call_id = pw.CharField(max_length=64, null=True)
    transcript = JSONField(default=list)
    summary = pw.TextField(null=True)
    assessment = JSONField(null=True)
    voicemail_left = pw.BooleanField(default=False)
    error = pw.TextField(null=True)
    dialled_at = pw.DateTimeField(
        null=True
    )  # set once, by the one job that claims the call to dial it
    started_at = pw.DateTimeField(null=True)
    ended_at = pw.DateTimeField(null=True)
    # What the conversation kept (plugins.calls.conversation): per-question results, the
    # candidate's own questions, why it ended, how long it lasted, its language, who led it
    # (rules or llm:<model>), and where it stands
    answers = JSONField(default=list)
    candidate_questions = JSONField(default=list)
    end_reason = pw.CharField(max_length=16, null=True)
    duration_seconds = pw.IntegerField(null=True)
    language = pw.CharField(max_length=16, null=True)
    analyzer = pw.CharField(max_length=100, null=True)
    dialogue = JSONField(null=True)

    class Meta:
        table_name = "calls"
        indexes = (
            *tenant_indexes(),
            (("application", "status"), False),
            (("job", "status"), False),
            (("provider", "provider_call_id"), False),
            (("series",), False),
            (
                ("tenant", "phone_no", "dialled_at"),
                False,
            ),  # calls to a number per local day (the daily cap)
        )


REMINDER_EMAIL, REMINDER_SMS = "email", "sms"
REMINDER_CHANNELS = (REMINDER_EMAIL, REMINDER_SMS)  # what a job's schedule setting reminds through
# the answer to a candidate's own text that had to wait for their calling hours, sent like an SMS
REMINDER_REPLY = "reply"
PENDING, SENDING, SENT = "pending", "sending", "sent"
SKIPPED = "skipped"
REMINDER_STATUSES = (PENDING, SENDING, SENT, FAILED, SKIPPED, CANCELED)


class CallReminder(TimestampedModel):
    """One reminder of a scheduled call through one channel: claimed by one job before it is sent,
    so it goes once, and kept with its outcome (sent, failed, skipped or canceled, with the reason).

    The `reply` channel is the answer to the candidate's own text that waits for their calling
    hours, sent the same way."""

    id = pw.UUIDField(primary_key=True, default=new_uuid)
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    call = pw.ForeignKeyField(Call, on_delete="CASCADE", column_name="call_id")
    channel = pw.CharField(max_length=8)
    address = pw.CharField(
        max_length=320, null=True
    )  # the email or phone number, as of the last send or skip
    due_at = pw.DateTimeField()
    status = pw.CharField(max_length=16, default=PENDING)
    attempts = pw.IntegerField(
        default=0
    )  # sends tried; a transport error before the call is tried again later
    claimed_at = pw.DateTimeField(null=True)  # when the job sending it now took it
    sent_at = pw.DateTimeField(null=True)
    provider_message_id = pw.CharField(
        max_length=64, null=True
    )  # Twilio's message sid, the simulated provider's id
    error = pw.TextField(null=True)
    # a reply's text; a reminder's is rendered from the templates when it is sent
    body = pw.TextField(null=True)

    class Meta:
        table_name = "call_reminders"
        indexes = (
            (("call", "channel"), True),
            (("status", "due_at"), False),
        )


class CallPlan(TimestampedModel):
    """Scheduled calling for one application: armed when it becomes ACTIVE on a job with scheduling
    on."""

    application = pw.ForeignKeyField(
        Application, primary_key=True, on_delete="CASCADE", column_name="application_id"
    )
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    job = pw.ForeignKeyField(Job, on_delete="CASCADE", column_name="job_id")
    last_stage = pw.CharField(
        max_length=16, null=True
    )  # the stage last seen, so "moved to ACTIVE" can be told apart
    series = pw.UUIDField(null=True)  # the current series of attempts; null when none is running
    triggered_at = pw.DateTimeField(null=True)

    class Meta:
        table_name = "call_plans"


class JobFaq(TimestampedModel):
    """A job's answers to questions candidates ask on a call, beyond the job record itself."""

    job = pw.ForeignKeyField(Job, primary_key=True, on_delete="CASCADE", column_name="job_id")
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    entries = JSONField(default=list)  # [{"question": ..., "answer": ...}]

    class Meta:
        table_name = "job_faqs"


ANSWER_TYPES = ("yes_no", "number", "choice", "text")


class QuestionRubric(TimestampedModel):
    """How one screening question's answer is judged: its type, what meets it, whether failing it
    rejects, its weight."""

    question = pw.ForeignKeyField(
        Question, primary_key=True, on_delete="CASCADE", column_name="question_id"
    )
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    answer_type = pw.CharField(max_length=8, null=True)  # None: inferred from the wording
    expected = pw.CharField(max_length=3, null=True)  # yes_no: "yes" or "no"
    minimum = pw.DoubleField(null=True)  # number: the least that meets it
    choices = JSONField(default=list)  # choice: the options
    accepted = JSONField(default=list)  # choice: the options that meet it
    knockout = pw.BooleanField(default=False)
    weight = pw.DoubleField(default=1.0)

    class Meta:
        table_name = "question_rubrics"
