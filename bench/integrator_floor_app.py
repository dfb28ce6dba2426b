"""The floor of the routes an ATS leans on: the least a Flask app answering them can do, for
bench/integrator_routes.py.

Each route runs the SQL statements Hirekit runs for the same request, on a connection each thread
keeps, and turns the rows into the same JSON keys with plain Python (dicts, orjson): no
authentication, rate limit, validation, query building, model instances or schema.

- GET /v1/applications?page=&size=: the tenant's kept count, then the page of applications joined
  with each one's candidate and job summary columns.
- GET /v1/jobs?page=&size=: the kept count, then the page of jobs.
- GET /v1/jobs?size=&cursor=: the next keyset page in (updated_at, id) order, with an HMAC-signed
  cursor.
- POST /v1/applications: the base64 resume decoded, hashed and written once (a temporary file
  renamed), then in one transaction the candidate and job looked up by source_id, the duplicate
  check, the INSERT, the event row, and the statements the call-scheduling and webhook listeners
  run.

The tenant is BENCH_FLOOR_TENANT; the database HIREKIT_DATABASE_URL (postgresql://... or
sqlite:///path); resumes go under BENCH_FLOOR_FILES."""

import base64
import datetime as dt
import hashlib
import hmac
import os
import sqlite3
import tempfile
import threading
import uuid
from pathlib import Path

import orjson
from flask import Flask, Response, request

app = Flask(__name__)
_connections = threading.local()
URL = os.environ["HIREKIT_DATABASE_URL"]
POSTGRES = URL.startswith("postgres")
TENANT = os.environ.get("BENCH_FLOOR_TENANT", "")
FILES = Path(os.environ.get("BENCH_FLOOR_FILES", tempfile.gettempdir()))
SECRET = b"floor"
P = "%s" if POSTGRES else "?"

JOB_COLUMNS = (
    "id",
    "created_at",
    "updated_at",
    "recruiter_name",
    "recruiter_email",
    "recruiter_work_phone_no",
    "number",
    "source_id",
    "title",
    "description",
    "client_name",
    "industry",
    "job_code",
    "address",
    "workplace_type",
    "city",
    "state_name",
    "zip_code",
    "country",
    "employment_type",
    "duration",
    "start_date",
    "end_date",
    "posting_date",
    "pay_frequency",
    "min_pay_rate",
    "max_pay_rate",
    "pay_rate_currency",
    "status",
)
JOB_KEYS = tuple("desc" if column == "description" else column for column in JOB_COLUMNS)
APPLICATION_COLUMNS = (
    "id",
    "created_at",
    "updated_at",
    "resume_file_name",
    "resume_content_type",
    "resume_size",
    "resume_sha256",
    "resume_reference",
    "candidate_id",
    "job_id",
    "source_id",
    "candidate_source_id",
    "job_source_id",
    "source_application_status",
    "application_stage",
)
CANDIDATE_SUMMARY = ("id", "source_id", "first_name", "last_name", "email", "phone_no")
JOB_SUMMARY = ("id", "number", "source_id", "title", "status", "city", "state_name", "country")

COUNT = (
    'SELECT COALESCE(SUM("total"), 0), COUNT("id") FROM "tenant_row_counts" WHERE "tenant_id" = '
    f'{P} '
    f'AND "table_name" = {P}'
)
JOBS = f'SELECT {", ".join(JOB_COLUMNS)} FROM "jobs" WHERE "tenant_id" = {P}'
JOBS_PAGE = f'{JOBS} ORDER BY "created_at", "id" LIMIT {P} OFFSET {P}'
JOBS_FIRST = f'{JOBS} ORDER BY "updated_at", "id" LIMIT {P}'
JOBS_AFTER = (
    f'{JOBS} AND "updated_at" >= {P} AND ("updated_at" > {P} OR "id" > {P}) '
    f'ORDER BY "updated_at", "id" LIMIT {P}'
)
APPLICATIONS_PAGE = (
    "SELECT "
    + ", ".join(
        [f'a."{c}"' for c in APPLICATION_COLUMNS]
        + [f'c."{c}"' for c in CANDIDATE_SUMMARY]
        + [f'j."{c}"' for c in JOB_SUMMARY]
    )
    + ' FROM "applications" AS a JOIN "candidates" AS c ON a."candidate_id" = c."id" JOIN "jobs" '
    'AS j ON '
    f'a."job_id" = j."id" WHERE a."tenant_id" = {P} ORDER BY a."created_at", a."id" LIMIT {P} '
    f'OFFSET {P}'
)
CANDIDATE_BY_SOURCE = (
    f'SELECT "id", "source_id", "first_name", "last_name", "email", "phone_no" FROM "candidates" '
    f'WHERE "tenant_id" = {P} AND "source_id" = {P} LIMIT 1'
)
JOB_BY_SOURCE = f'{JOBS} AND "source_id" = {P} LIMIT 1'
EXISTING = f'SELECT "id" FROM "applications" WHERE "candidate_id" = {P} AND "job_id" = {P} LIMIT 1'
INSERT_APPLICATION = (
    'INSERT INTO "applications" ("id", "created_at", "updated_at", "tenant_id", '
    '"resume_file_name", '
    '"resume_content_type", "resume_size", "resume_sha256", "candidate_id", "job_id", "source_id", '
    '"candidate_source_id", "job_source_id", "source_application_status", "application_stage") '
    'VALUES (' + ", ".join([P] * 15) + ")"
)
INSERT_EVENT = (
    'INSERT INTO "events" ("event_id", "tenant_id", "type", "record_id", "payload", "created_at") '
    f"VALUES ({P}, {P}, {P}, {P}, {P}, {P})"
)
CALL_PLAN = f'SELECT "application_id" FROM "call_plans" WHERE "application_id" = {P} LIMIT 1'
INSERT_CALL_PLAN = (
    'INSERT INTO "call_plans" ("application_id", "created_at", "updated_at", "tenant_id", '
    '"job_id", '
    f'"last_stage") VALUES ({P}, {P}, {P}, {P}, {P}, {P})'
)
JOB_SCHEDULE = f'SELECT "job_id" FROM "job_schedules" WHERE "job_id" = {P} LIMIT 1'
WEBHOOKS = (
    f'SELECT "id", "fields" FROM "tenant_webhooks" WHERE "tenant_id" = {P} AND "triggered_event" = '
    f'{P} '
    f'AND "is_active" = {P} AND "is_deleted" = {P}'
)


def connection():
    conn = getattr(_connections, "connection", None)
    if conn is None:
        if POSTGRES:
            import psycopg2

            conn = psycopg2.connect(URL)
        else:
            conn = sqlite3.connect(
                URL.removeprefix("sqlite:///"), isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=wal")
            conn.execute("PRAGMA synchronous=normal")
            conn.execute("PRAGMA busy_timeout=10000")
        _connections.connection = conn
    return conn


def read(sql: str, params: tuple) -> list[tuple]:
    conn = connection()
    cursor = conn.cursor()
    cursor.execute(sql, params)
    rows = cursor.fetchall()
    if POSTGRES:
        conn.rollback()  # end the read's transaction, as Hirekit's autocommit reads do
    return rows


def shown(value):
    """A stored value as the API shows it: instants in ISO 8601 with milliseconds and a Z, ids as
    dashed UUIDs."""
    if isinstance(value, dt.datetime):
        return value.isoformat(timespec="milliseconds") + "Z"
    if isinstance(value, str) and len(value) == 26 and value[10] == " ":  # SQLite's text timestamp
        return value[:23].replace(" ", "T") + "Z"
    return value


def ident(value) -> str:
    return str(uuid.UUID(str(value)))


def job_item(row) -> dict:
    item = {key: shown(value) for key, value in zip(JOB_KEYS, row)}
    item["id"] = ident(item["id"])
    return item


def json(body, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status=status, mimetype="application/json")


def total(table: str) -> int:
    ((count, _),) = read(COUNT, (TENANT, table))
    return int(count)


def page_body(items: list, page: int, size: int, count: int) -> dict:
    return {
        "data": items,
        "page": page,
        "size": size,
        "total": count,
        "total_pages": -(-count // size),
    }


@app.get("/v1/applications")
def list_applications():
    page, size = int(request.args["page"]), int(request.args["size"])
    count = total("applications")
    items = []
    split, summary = len(APPLICATION_COLUMNS), len(CANDIDATE_SUMMARY)
    for row in read(APPLICATIONS_PAGE, (TENANT, size, (page - 1) * size)):
        item = {key: shown(value) for key, value in zip(APPLICATION_COLUMNS, row[:split])}
        for key in ("id", "candidate_id", "job_id"):
            item[key] = ident(item[key])
        item["status"] = item["source_application_status"]
        file_name = item.pop("resume_file_name")
        resume = {
            "file_name": file_name,
            "content_type": item.pop("resume_content_type"),
            "size": item.pop("resume_size"),
            "sha256": item.pop("resume_sha256"),
            "reference": item.pop("resume_reference"),
        }
        item["resume"] = resume if file_name or resume["reference"] else None
        candidate = dict(zip(CANDIDATE_SUMMARY, row[split : split + summary]))
        candidate["id"] = ident(candidate["id"])
        job = dict(zip(JOB_SUMMARY, row[split + summary :]))
        job["id"] = ident(job["id"])
        item["candidate"], item["job"] = candidate, job
        items.append(item)
    return json(page_body(items, page, size, count))


@app.get("/v1/jobs")
def list_jobs():
    size = int(request.args["size"])
    if "cursor" not in request.args:
        page = int(request.args["page"])
        count = total("jobs")
        items = [job_item(row) for row in read(JOBS_PAGE, (TENANT, size, (page - 1) * size))]
        return json(page_body(items, page, size, count))
    cursor = request.args["cursor"]
    if cursor:
        position, _, signature = cursor.rpartition(".")
        if not hmac.compare_digest(
            signature, hmac.new(SECRET, position.encode(), hashlib.sha256).hexdigest()
        ):
            return json({"status": 400}, 400)
        updated_at, last_id = orjson.loads(base64.urlsafe_b64decode(position))
        rows = read(JOBS_AFTER, (TENANT, updated_at, updated_at, last_id, size + 1))
    else:
        rows = read(JOBS_FIRST, (TENANT, size + 1))
    body = {"data": [job_item(row) for row in rows[:size]], "size": size}
    if len(rows) > size:
        last = rows[size - 1]
        position = base64.urlsafe_b64encode(orjson.dumps([str(last[2]), str(last[0])])).decode()
        body["next_cursor"] = (
            f"{position}.{hmac.new(SECRET, position.encode(), hashlib.sha256).hexdigest()}"
        )
    return json(body)


def store(data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    directory = FILES / TENANT / digest[:2]
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=directory, delete=False) as out:
        out.write(data)
    os.replace(out.name, directory / digest)
    return digest


@app.post("/v1/applications")
def create_application():
    body = orjson.loads(request.get_data())
    data = base64.b64decode(body["base64file"])
    digest = store(data)
    conn = connection()
    cursor = conn.cursor()
    if not POSTGRES:
        cursor.execute("BEGIN IMMEDIATE")
    cursor.execute(CANDIDATE_BY_SOURCE, (TENANT, body["candidate_source_id"]))
    candidate = dict(zip(CANDIDATE_SUMMARY, cursor.fetchone()))
    cursor.execute(JOB_BY_SOURCE, (TENANT, body["job_source_id"]))
    job = job_item(cursor.fetchone())
    cursor.execute(EXISTING, (candidate["id"], job["id"] if POSTGRES else uuid.UUID(job["id"]).hex))
    if cursor.fetchone() is not None:
        conn.rollback() if POSTGRES else cursor.execute("ROLLBACK")
        return json({"status": 409}, 409)
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    record_id = uuid.uuid4()
    key = str(record_id) if POSTGRES else record_id.hex
    job_key = job["id"] if POSTGRES else uuid.UUID(job["id"]).hex
    cursor.execute(
        INSERT_APPLICATION,
        (
            key,
            now,
            now,
            TENANT,
            body.get("file_name"),
            "application/pdf",
            len(data),
            digest,
            candidate["id"],
            job_key,
            body.get("source_id"),
            body["candidate_source_id"],
            body["job_source_id"],
            body["source_application_status"],
            body["application_stage"].upper(),
        ),
    )
    candidate["id"] = ident(candidate["id"])
    record = {
        "id": str(record_id),
        "created_at": shown(now),
        "updated_at": shown(now),
        "source_id": body.get("source_id"),
        "candidate_id": candidate["id"],
        "job_id": job["id"],
        "candidate_source_id": body["candidate_source_id"],
        "job_source_id": body["job_source_id"],
        "source_application_status": body["source_application_status"],
        "status": body["source_application_status"],
        "application_stage": body["application_stage"].upper(),
        "resume": {
            "file_name": body.get("file_name"),
            "content_type": "application/pdf",
            "size": len(data),
            "sha256": digest,
            "reference": None,
        },
        "candidate": candidate,
        "job": {name: job[name] for name in JOB_SUMMARY},
    }
    payload = orjson.dumps(record)
    cursor.execute(
        INSERT_EVENT,
        (uuid.uuid4().hex, TENANT, "application_activty", str(record_id), payload.decode(), now),
    )
    cursor.execute(CALL_PLAN, (key,))
    cursor.fetchall()
    cursor.execute(INSERT_CALL_PLAN, (key, now, now, TENANT, job_key, record["application_stage"]))
    cursor.execute(JOB_SCHEDULE, (job_key,))
    cursor.fetchall()
    cursor.execute(WEBHOOKS, (TENANT, "application_activty", True, False))
    cursor.fetchall()
    conn.commit() if POSTGRES else cursor.execute("COMMIT")
    return Response(payload, status=201, mimetype="application/json")


@app.get("/healthz")
def healthz():
    return "ok"
