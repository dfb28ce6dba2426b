"""The Application table: one candidate applying to one job, with its stage, source status and
resume."""

import peewee as pw

from app.data.records import TenantRecord, tenant_indexes
from plugins.candidates.models import Candidate, ResumeColumns
from plugins.jobs.models import Job

STAGES = ("ACTIVE", "PASSIVE")


class Application(TenantRecord, ResumeColumns):
    label = "application"

    candidate = pw.ForeignKeyField(Candidate, on_delete="CASCADE", column_name="candidate_id")
    job = pw.ForeignKeyField(Job, on_delete="CASCADE", column_name="job_id")
    source_id = pw.CharField(max_length=255, null=True)
    candidate_source_id = pw.CharField(max_length=255)
    job_source_id = pw.CharField(max_length=255)
    source_application_status = pw.CharField(max_length=100)
    application_stage = pw.CharField(max_length=16)

    class Meta:
        table_name = "applications"
        indexes = (
            *tenant_indexes(lookups=("job_source_id", "candidate_source_id")),
            (("candidate", "job"), True),
        )
