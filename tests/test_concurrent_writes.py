"""Concurrent writers on real gunicorn (2 workers, the deploy config): on SQLite as on PostgreSQL,
writers queue for the database instead of failing, and every write lands exactly once."""

import concurrent.futures
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.factories import job_body
from tests.test_fault_drills import gunicorn_server  # noqa: F401 - the fixture: the app under gunicorn, 2 workers

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = 8
ROUNDS = 25
SCHEDULE_SETTING = {
    "window_start_time": "09:00:00",
    "window_end_time": "17:00:00",
    "daily_attempts": 1,
    "total_attempts": 2,
    "retry_interval": 60,
    "days_of_week": [1, 2, 3, 4, 5],
}


@pytest.mark.slow
def test_eight_clients_writing_to_one_job_get_no_5xx_and_every_write_lands_once(
    gunicorn_server,  # noqa: F811
    tenant_a,
    db_url,
):
    """...while an operator adds keys from the CLI, another writer on the same database."""
    # eight writers of one tenant at once: more requests in progress than the default fair share
    # (half the threads)
    base, _ = gunicorn_server(HIREKIT_RATE_LIMIT="100000/minute", HIREKIT_TENANT_MAX_IN_FLIGHT="16")
    created = requests.post(
        f"{base}/v1/jobs", json=job_body(source_id="shared"), headers=tenant_a.headers, timeout=30
    )
    job_url = f"{base}/v1/jobs/{created.json()['id']}"

    def client(n: int) -> list[tuple[str, int, str]]:
        answers = []
        with requests.Session() as session:
            session.headers.update(tenant_a.headers)
            for round_ in range(ROUNDS):
                writes = [
                    (
                        "PUT",
                        f"{job_url}/schedule-setting",
                        {**SCHEDULE_SETTING, "daily_attempts": 1 + round_ % 3},
                    ),
                    ("PATCH", f"{job_url}/scheduling", {"scheduling": round_ % 2 == 0}),
                    ("PATCH", job_url, {"title": f"Nurse {n}-{round_}"}),
                    (
                        "POST",
                        f"{job_url}/questions",
                        {
                            "question_text": f"Question {n}-{round_}?",
                            "source_id": f"q-{n}-{round_}",
                        },
                    ),
                    ("POST", f"{base}/v1/jobs", job_body(source_id=f"job-{n}-{round_}")),
                ]
                for method, url, body in writes:
                    response = session.request(method, url, json=body, timeout=60)
                    answers.append(
                        (
                            f"{method} {url.removeprefix(base)}",
                            response.status_code,
                            response.text[:200],
                        )
                    )
        return answers

    def operator(n: int) -> subprocess.CompletedProcess:
        env = {**os.environ, "HIREKIT_DATABASE_URL": db_url, "HIREKIT_LOG_LEVEL": "WARNING"}
        return subprocess.run(
            [sys.executable, "-m", "flask", "--app", "wsgi", "keys", "create", tenant_a.id],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    with concurrent.futures.ThreadPoolExecutor(max_workers=CLIENTS + 1) as pool:
        keys_created = pool.submit(lambda: [operator(n) for n in range(3)])
        answers = [a for per_client in pool.map(client, range(CLIENTS)) for a in per_client]
    assert [done.returncode for done in keys_created.result()] == [0, 0, 0], keys_created.result()[
        0
    ].stderr

    assert len(answers) == CLIENTS * ROUNDS * 5
    failed = [a for a in answers if not 200 <= a[1] < 300]
    assert not failed, f"{len(failed)} of {len(answers)} writes failed, e.g. {failed[:3]}"

    with requests.Session() as session:
        session.headers.update(tenant_a.headers)
        jobs = walk(session, f"{base}/v1/jobs")
        # not paginated: a job's few questions
        questions = session.get(f"{job_url}/questions", timeout=30).json()["data"]
    job_sources = sorted(j["source_id"] for j in jobs)
    assert job_sources == sorted(
        ["shared"] + [f"job-{n}-{r}" for n in range(CLIENTS) for r in range(ROUNDS)]
    )
    question_sources = sorted(q["source_id"] for q in questions)
    assert question_sources == sorted(f"q-{n}-{r}" for n in range(CLIENTS) for r in range(ROUNDS))


def walk(session: requests.Session, url: str) -> list[dict]:
    """Every record of a /v1 list, page by page."""
    records, page = [], 1
    while True:
        body = session.get(url, params={"page": page, "size": 100}, timeout=30).json()
        records += body["data"]
        if page >= body["total_pages"]:
            return records
        page += 1
