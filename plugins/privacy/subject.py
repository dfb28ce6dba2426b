"""A candidate and the ids of everything that is theirs: what the export reads and the erasure
removes."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.data.events import Event
from plugins.applications.models import Application
from plugins.calls.models import Call
from plugins.candidates.models import Candidate
from plugins.questions.models import Question


@dataclass
class Subject:
    """The candidate (a data subject) of one tenant, with the ids of their applications, calls and
    the questions asked on their applications only, read once."""

    tenant_id: str
    candidate: Candidate
    application_ids: list = field(default_factory=list)
    call_ids: list = field(default_factory=list)
    question_ids: list = field(default_factory=list)

    @classmethod
    def of(cls, tenant_id: str, candidate: Candidate) -> "Subject":
        applications = [
            row.id
            for row in Application.select(Application.id)
            .where((Application.tenant == tenant_id) & (Application.candidate == candidate.id))
            .order_by(Application.created_at, Application.id)
        ]
        calls = [
            row.id
            for row in Call.select(Call.id)
            .where((Call.tenant == tenant_id) & (Call.candidate == candidate.id))
            .order_by(Call.created_at, Call.id)
        ]
        questions = (
            [
                row.id
                for row in Question.select(Question.id)
                .where(Question.application.in_(applications))
                .order_by(Question.created_at, Question.id)
            ]
            if applications
            else []
        )
        return cls(tenant_id, candidate, applications, calls, questions)

    @property
    def record_ids(self) -> list[str]:
        """The ids events, stored answers and deliveries name the subject by: the candidate,
        applications and calls."""
        return [
            str(record_id)
            for record_id in (self.candidate.id, *self.application_ids, *self.call_ids)
        ]

    def events(self):
        """The tenant's stored events about the subject's records, oldest first."""
        return (
            Event.select()
            .where((Event.tenant == self.tenant_id) & Event.record_id.in_(self.record_ids))
            .order_by(Event.sequence)
        )

    def resume_sha256s(self) -> set[str]:
        """The stored resume files the candidate and their applications name."""
        named = {self.candidate.resume_sha256}
        if self.application_ids:
            named |= {
                row.resume_sha256
                for row in Application.select(Application.resume_sha256).where(
                    Application.id.in_(self.application_ids)
                )
            }
        return {sha for sha in named if sha}
