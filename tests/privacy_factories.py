"""A candidate with every kind of record Hirekit can hold about a person, built through the public
API, and scans for what an erasure must leave behind (every text column of every table, the resume
directory)."""

from __future__ import annotations

import base64
import itertools
from dataclasses import dataclass
from pathlib import Path

from app.data.db import database, database_from_url, utcnow
from plugins.calls.models import CallReminder
from tests.call_factories import JOB_QUESTIONS, create_job_with_questions
from tests.factories import pdf_bytes
from tests.webhook_helpers import create_webhook

_numbers = itertools.count(1)


@dataclass
class Person:
    """What identifies one candidate: the values no table or file may hold after their erasure."""

    first_name: str
    last_name: str
    email: str
    phone_no: str
    resume: bytes

    @property
    def create_key(self) -> str:
        """The Idempotency-Key the candidate was created under (nothing personal in it)."""
        return f"create-{id(self)}"

    @property
    def needles(self) -> dict[str, bytes]:
        return {
            "first_name": self.first_name.encode(),
            "last_name": self.last_name.encode(),
            "email": self.email.encode(),
            "phone_no": self.phone_no.encode(),
            "resume": self.resume,
        }


def a_person() -> Person:
    n = next(_numbers)
    return Person(
        first_name=f"Zebulon{n}",
        last_name=f"Quixotebottom{n}",
        email=f"zq{n}.erase@example.org",
        phone_no=f"+141555501{n % 9 + 1}0",
        resume=pdf_bytes(f"Resume of Zebulon{n} Quixotebottom{n} #{n}"),
    )


def candidate_body(person: Person, **overrides) -> dict:
    body = {
        "first_name": person.first_name,
        "last_name": person.last_name,
        "email": person.email,
        "phone_no": person.phone_no,
        "city": "Oakland",
        "source": "referral",
        "source_id": f"src-{id(person)}",
        "base64file": base64.b64encode(person.resume).decode(),
        "file_name": "resume.pdf",
    }
    body.update(overrides)
    return body


@dataclass
class Held:
    """The ids of everything held about one candidate."""

    candidate: dict
    job: dict
    application: dict
    call: dict
    question: dict


def candidate_with_everything(
    client, tenant, person: Person, receiver_url: str, *, job: dict | None = None
) -> Held:
    """The candidate (with a resume, created under an Idempotency-Key), an application with its own
    resume and its own screening question, a completed call (transcript, summary, assessment), and
    webhooks for every event type whose deliveries carry them."""
    for event in ("call_activity", "application_activty", "candidate.deleted"):
        existing = client.get("/v1/tenant-webhook", headers=tenant.headers).json["data"]
        if not any(hook["triggered_event"] == event for hook in existing):
            fields = {
                "call_activity": ["id", "status", "candidate_id", "summary", "phone_no"],
                "application_activty": ["id", "candidate", "status"],
                "candidate.deleted": ["id", "deleted", "application_ids"],
            }[event]
            create_webhook(client, tenant, receiver_url, triggered_event=event, fields=fields)
    job = job or create_job_with_questions(client, tenant)
    created = client.post(
        "/v1/candidates",
        json=candidate_body(person),
        headers={**tenant.headers, "Idempotency-Key": person.create_key},
    )
    assert created.status_code == 201, created.json
    candidate = created.json
    application = client.post(
        "/v1/applications",
        json={
            "candidate_source_id": candidate["source_id"],
            "job_source_id": job["source_id"],
            "source_application_status": "applied",
            "application_stage": "PASSIVE",
            "base64file": base64.b64encode(person.resume + b"% application copy\n").decode(),
        },
        headers={**tenant.headers, "Idempotency-Key": f"apply-{person.create_key}"},
    )
    assert application.status_code == 201, application.json
    application = application.json
    question = client.post(
        f"/v1/jobs/{job['id']}/questions",
        json={
            "question_text": "Why this hospital?",
            "source_id": f"q-{application['id']}",
            "application_id": application["id"],
        },
        headers=tenant.headers,
    )
    assert question.status_code == 201, question.json
    call = client.post(f"/v1/applications/{application['id']}/instant-call", headers=tenant.headers)
    assert call.status_code == 202, call.json
    call = client.get(f"/v1/calls/{call.json['id']}", headers=tenant.headers).json
    assert call["status"] == "completed" and call["transcript"] and call["assessment"]["answers"]
    assert [answer["question"] for answer in call["assessment"]["answers"]][
        : len(JOB_QUESTIONS)
    ] == list(JOB_QUESTIONS)
    # an email reminder sent to them
    with client.application.app_context(), database.connection_context():
        CallReminder.create(
            tenant=tenant.id,
            call=call["id"],
            channel="email",
            address=person.email,
            due_at=utcnow(),
            status="sent",
            attempts=1,
            sent_at=utcnow(),
        )
    return Held(candidate, job, application, call, question.json)


def rows_holding(db_url: str, needles: dict[str, bytes]) -> list[str]:
    """'table.column: what' for every value of every table that contains one of the needles."""
    db = database_from_url(db_url)
    found = []
    with db.connection_context():
        for table in db.get_tables():
            if table == "migratehistory":
                continue
            cursor = db.execute_sql(f'SELECT * FROM "{table}"')
            columns = [column[0] for column in cursor.description]
            for row in cursor.fetchall():
                for column, value in zip(columns, row):
                    data = _as_bytes(value)
                    found += [
                        f"{table}.{column}: {name} in {data[:300]!r}"
                        for name, needle in needles.items()
                        if data and needle in data
                    ]
    return found


def _as_bytes(value) -> bytes:
    if value is None:
        return b""
    if isinstance(value, memoryview):
        return value.tobytes()
    if isinstance(value, bytes):
        return value
    return str(value).encode()


def files_holding(directory: str | Path, needle: bytes) -> list[Path]:
    """The files under `directory` whose bytes contain the needle."""
    root = Path(directory)
    return (
        [path for path in root.rglob("*") if path.is_file() and needle in path.read_bytes()]
        if root.exists()
        else []
    )
