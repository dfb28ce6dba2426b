"""The Question table: a screening question on a job, or on one application of that job."""

import peewee as pw

from app.data.records import TenantRecord
from plugins.applications.models import Application
from plugins.jobs.models import Job


class Question(TenantRecord):
    label = "question"

    job = pw.ForeignKeyField(Job, on_delete="CASCADE", column_name="job_id")
    application = pw.ForeignKeyField(
        Application, on_delete="CASCADE", column_name="application_id", null=True
    )
    question_text = pw.TextField()
    source_id = pw.CharField(max_length=255)
    position = pw.IntegerField(default=0)
    generated = pw.BooleanField(default=False)
    # a tombstone: hidden everywhere but a sync list's include_deleted=true
    deleted_at = pw.DateTimeField(null=True)

    @classmethod
    def owned_by(cls, tenant_id: str, *, include_deleted: bool = False):
        query = super().owned_by(tenant_id)
        return query if include_deleted else query.where(cls.deleted_at.is_null())

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None

    class Meta:
        table_name = "questions"
        indexes = (
            (("job", "position", "created_at"), False),
            (("job", "source_id"), False),
        )
