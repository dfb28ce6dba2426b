"""The Candidate table: a person pushed by an ATS (or applying on the board), with an optional
resume."""

import peewee as pw

from app.data.db import JSONField
from app.data.records import RecruiterColumns, TenantRecord, tenant_indexes
from plugins.candidates.consent import initial_consent


class ResumeColumns(pw.Model):
    """Resume metadata kept on a record; the bytes live in app.files' storage, addressed by
    sha256."""

    resume_file_name = pw.CharField(max_length=255, null=True)
    resume_content_type = pw.CharField(max_length=128, null=True)
    resume_size = pw.IntegerField(null=True)
    resume_sha256 = pw.CharField(max_length=64, null=True)
    resume_reference = pw.TextField(null=True)  # a JSON `file` string: kept as given, never fetched


class Candidate(TenantRecord, RecruiterColumns, ResumeColumns):
    label = "candidate"

    source_id = pw.CharField(max_length=255)
    source = pw.CharField(max_length=255)
    first_name = pw.CharField(max_length=255)
    last_name = pw.CharField(max_length=255, null=True)
    email = pw.CharField(max_length=320)
    # E.164; null only for board applicants who gave none. Indexed: an SMS STOP names the number
    # only, in any tenant
    phone_no = pw.CharField(max_length=32, null=True, index=True)
    city = pw.CharField(max_length=255, null=True)
    state_name = pw.CharField(max_length=255, null=True)
    country = pw.CharField(max_length=255, null=True)
    status = pw.CharField(max_length=100, null=True)
    # set by POST /v1/candidates/{id}/opt-out (or an SMS STOP), cleared by DELETE on it: no
    # reminders, no calls
    contact_opt_out = pw.BooleanField(default=False)
    contact_opted_out_at = pw.DateTimeField(null=True)
    # the candidate's IANA zone and where it came from (plugins.candidates.zones), kept current by
    # every write
    timezone = pw.CharField(max_length=64, null=True)
    timezone_source = pw.CharField(max_length=16, null=True)
    # per channel (voice, sms, email): {"granted", "source", "changed_at"}
    # (plugins.candidates.consent)
    consent = JSONField(null=True, default=initial_consent)

    class Meta:
        table_name = "candidates"
        indexes = tenant_indexes(unique=("source_id",), lookups=("email",))
