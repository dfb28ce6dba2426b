"""Migration 018_call_conversations (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """What a screening conversation keeps on its call (typed answers, the candidate's questions,
    end reason, duration, language, who led it, where it stands), a job's FAQ for candidates'
    questions, and a question's rubric. Deleting a job or question deletes its FAQ or rubric (ON
    DELETE CASCADE)."""

    # NOT NULL DEFAULT '[]' in one ALTER TABLE: SQLite adds the column in place, where peewee's
    # add-then-set-NOT-NULL rebuilds the table and drops migration 012's row-count triggers on it
    migrator.add_fields(
        'calls',
        allow_not_null=True,
        answers=pw.TextField(default='[]', constraints=[pw.SQL("DEFAULT '[]'")]),
        candidate_questions=pw.TextField(default='[]', constraints=[pw.SQL("DEFAULT '[]'")]),
        end_reason=pw.CharField(max_length=16, null=True),
        duration_seconds=pw.IntegerField(null=True),
        language=pw.CharField(max_length=16, null=True),
        analyzer=pw.CharField(max_length=100, null=True),
        dialogue=pw.TextField(null=True),
    )

    @migrator.create_model
    class JobFaq(pw.Model):
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        job = pw.ForeignKeyField(
            column_name='job_id',
            field='id',
            model=migrator.orm['jobs'],
            on_delete='CASCADE',
            primary_key=True,
        )
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        entries = pw.TextField()

        class Meta:
            table_name = "job_faqs"

    @migrator.create_model
    class QuestionRubric(pw.Model):
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        question = pw.ForeignKeyField(
            column_name='question_id',
            field='id',
            model=migrator.orm['questions'],
            on_delete='CASCADE',
            primary_key=True,
        )
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        answer_type = pw.CharField(max_length=8, null=True)
        expected = pw.CharField(max_length=3, null=True)
        minimum = pw.DoubleField(null=True)
        choices = pw.TextField()
        accepted = pw.TextField()
        knockout = pw.BooleanField(default=False)
        weight = pw.DoubleField(default=1.0)

        class Meta:
            table_name = "question_rubrics"


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.remove_model('question_rubrics')
    migrator.remove_model('job_faqs')
    migrator.remove_fields(
        'calls',
        'answers',
        'candidate_questions',
        'end_reason',
        'duration_seconds',
        'language',
        'analyzer',
        'dialogue',
    )
