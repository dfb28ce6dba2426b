"""A reference for bench/rest_throughput.py on PostgreSQL: the least a Flask app answering GET
/v1/jobs/:id can do.

It reads the job's row (as one text value, by tenant and id, as a prepared statement on a connection
each thread keeps: what Hirekit's GET by id reads) and answers a fixed body of the same size. No
authentication, rate limit, pool, model or serialization. Its ratio to the bare app is the ceiling
any app reading one row per request reaches on the machine: what the database round trip alone costs
against a request that does nothing."""

import os
import threading

import psycopg2
from flask import Flask, Response, abort

app = Flask(__name__)
_connections = threading.local()
BODY = b'{"padding":"' + b"x" * 725 + b'"}'  # about the size of a job's JSON
READ = (
    'SELECT "t1"::text FROM "jobs" AS "t1" WHERE "t1"."tenant_id" = $1 AND "t1"."id" = $2 LIMIT 1'
)


def cursor():
    connection = getattr(_connections, "connection", None)
    if connection is None:
        connection = _connections.connection = psycopg2.connect(os.environ["HIREKIT_DATABASE_URL"])
        connection.autocommit = True
        connection.cursor().execute(f"PREPARE floor_read AS {READ}")
    return connection.cursor()


@app.get("/v1/jobs/<job_id>")
def read_job(job_id):
    cur = cursor()
    cur.execute("EXECUTE floor_read(%s, %s)", (os.environ["BENCH_FLOOR_TENANT"], job_id))
    if cur.fetchone() is None:
        abort(404)
    return Response(BODY, mimetype="application/json")


@app.get("/healthz")
def healthz():
    return "ok"
