"""A reference for the write benches (bench/batch_upserts.py, bench/rest_throughput.py): the least a
Flask app writing jobs can do. It runs the SQL statements Hirekit runs for the same request, on a
connection each thread keeps, and nothing else: no authentication, rate limit, validation, model,
pool or serialization beyond reading the JSON body.

- PUT /v1/jobs/by-source-id (a batch, as app.data.row_upserts writes it): one advisory-lock
  statement for every source id (PostgreSQL), one look-up of the stored ones, the job-number
  reservation (app.data.records.reserve_in_sequence's one statement), one INSERT ... ON CONFLICT DO
  UPDATE of every row (one multi-row VALUES list on PostgreSQL, one statement run per row on
  SQLite), in one transaction.
- POST /v1/jobs (one create, as app.data.records.create_with_source_id writes it): the source_id
  look-up, the number reservation and the INSERT, in one transaction.

The tenant is BENCH_FLOOR_TENANT; the database HIREKIT_DATABASE_URL (postgresql://... or sqlite:///path)."""

import datetime as dt
import os
import sqlite3
import threading
import uuid

import orjson
from flask import Flask, Response, request

app = Flask(__name__)
_connections = threading.local()
URL = os.environ["HIREKIT_DATABASE_URL"]
POSTGRES = URL.startswith("postgres")
TENANT = os.environ.get("BENCH_FLOOR_TENANT", "")
P = "%s" if POSTGRES else "?"

BODY_COLUMNS = {  # JSON field -> column, every field of the job create body
    "title": "title",
    "client_name": "client_name",
    "industry": "industry",
    "job_code": "job_code",
    "address": "address",
    "workplace_type": "workplace_type",
    "city": "city",
    "state_name": "state_name",
    "zip_code": "zip_code",
    "country": "country",
    "employment_type": "employment_type",
    "duration": "duration",
    "start_date": "start_date",
    "end_date": "end_date",
    "posting_date": "posting_date",
    "pay_frequency": "pay_frequency",
    "min_pay_rate": "min_pay_rate",
    "max_pay_rate": "max_pay_rate",
    "pay_rate_currency": "pay_rate_currency",
    "recruiter_name": "recruiter_name",
    "recruiter_email": "recruiter_email",
    "recruiter_work_phone_no": "recruiter_work_phone_no",
    "status": "status",
    "desc": "description",
    "source_id": "source_id",
}
COLUMNS = ("id", "tenant_id", "created_at", "updated_at", "number", *BODY_COLUMNS.values())
REPLACED = [
    column
    for column in COLUMNS
    if column not in ("id", "tenant_id", "created_at", "source_id", "number")
]
ROW_VALUES = "%s" if POSTGRES else "(" + ", ".join("?" * len(COLUMNS)) + ")"
UPSERT = (
    f'INSERT INTO "jobs" ({", ".join(COLUMNS)}) VALUES {ROW_VALUES} ON CONFLICT ("tenant_id", '
    '"source_id") '
    "DO UPDATE SET " + ", ".join(f'"{column}" = excluded."{column}"' for column in REPLACED)
)
INSERT = f'INSERT INTO "jobs" ({", ".join(COLUMNS)}) VALUES ({", ".join([P] * len(COLUMNS))})'
LOCKS = (
    "SELECT pg_advisory_xact_lock(hashtextextended(key, 0)) FROM unnest(%s::text[]) WITH "
    "ORDINALITY AS locks(key, "
    "position) ORDER BY position"
)
ADVANCE = (
    f'INSERT INTO "counters" ("tenant_id", "name", "value") VALUES ({P}, {P}, {P}) ON CONFLICT '
    '("tenant_id", "name") '
    'DO UPDATE SET "value" = "counters"."value" + excluded."value" RETURNING "value"'
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


def begin(conn):
    cursor = conn.cursor()
    if not POSTGRES:
        cursor.execute("BEGIN IMMEDIATE")
    return cursor


def reserve_numbers(cursor, count: int) -> range:
    cursor.execute(ADVANCE, (TENANT, "job_number", count))
    ((last,),) = cursor.fetchall()
    return range(last - count + 1, last + 1)


def stored(cursor, source_ids: list[str]) -> dict:
    marks = ", ".join([P] * len(source_ids))
    cursor.execute(
        f'SELECT "source_id", "id", "number" FROM "jobs" WHERE ("tenant_id" = {P}) AND '
        f'("source_id" IN ({marks}))',
        (TENANT, *source_ids),
    )
    return {source_id: (record_id, number) for source_id, record_id, number in cursor.fetchall()}


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None).isoformat(sep=" ")


@app.put("/v1/jobs/by-source-id")
def upsert_jobs():
    items = orjson.loads(request.get_data())["items"]
    conn = connection()
    cursor = begin(conn)
    source_ids = [item["source_id"] for item in items]
    if POSTGRES:
        cursor.execute(
            LOCKS, (sorted(f"upsert:jobs:{TENANT}:{source_id}" for source_id in source_ids),)
        )
    existing = stored(cursor, source_ids)
    numbers = iter(
        reserve_numbers(cursor, sum(1 for source_id in source_ids if source_id not in existing))
    )
    stamp, rows, answer = now(), [], []
    for item in items:
        kept = existing.get(item["source_id"])
        record_id, number = kept if kept else (str(uuid.uuid4()), next(numbers))
        rows.append(
            (record_id, TENANT, stamp, stamp, number, *(item.get(field) for field in BODY_COLUMNS))
        )
        answer.append(
            {"status": 200 if kept else 201, "source_id": item["source_id"], "id": str(record_id)}
        )
    if POSTGRES:
        from psycopg2.extras import execute_values

        execute_values(cursor, UPSERT, rows, page_size=len(rows))
    else:
        cursor.executemany(UPSERT, rows)
    conn.commit() if POSTGRES else cursor.execute("COMMIT")
    return Response(orjson.dumps({"items": answer}), mimetype="application/json")


@app.post("/v1/jobs")
def create_job():
    item = orjson.loads(request.get_data())
    conn = connection()
    cursor = begin(conn)
    if stored(cursor, [item["source_id"]]):
        conn.rollback() if POSTGRES else cursor.execute("ROLLBACK")
        return Response(b'{"status":409}', status=409, mimetype="application/json")
    (number,) = reserve_numbers(cursor, 1)
    stamp, record_id = now(), str(uuid.uuid4())
    cursor.execute(
        INSERT,
        (record_id, TENANT, stamp, stamp, number, *(item.get(field) for field in BODY_COLUMNS)),
    )
    conn.commit() if POSTGRES else cursor.execute("COMMIT")
    return Response(
        orjson.dumps({"id": record_id, "number": number, **item}),
        status=201,
        mimetype="application/json",
    )


@app.get("/healthz")
def healthz():
    return "ok"
