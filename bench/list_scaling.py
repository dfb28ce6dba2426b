"""List scaling: the same /v1 list requests against a tenant with a few rows and one with many, on
PostgreSQL under gunicorn as deployed (2 workers), printing each figure and the many/few ratio.

Rows are copied from one record made through the API with INSERT ... SELECT over generate_series, so
a million rows take a minute, not an hour. Each request is timed over a keep-alive connection,
median of --repeats.

    python bench/list_scaling.py [--small 1000] [--large 1000000] [--repeats 15] [--clients 4]

Two load shapes: one keep-alive connection, then --clients connections sending at once (page mode's
30 ms target is a median latency, so it must hold with the workers busy too).

The database is HIREKIT_BENCH_DATABASE_URL (default
postgresql://postgres@127.0.0.1:5432/bench_lists, created when missing); its public schema is
dropped and rebuilt for each size.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import fresh_app, free_port, start_gunicorn, stop, time_calls  # noqa: E402 - after the path insert

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/bench_lists"
# cursor, updated_after and filtered pages at many rows: within 2x of the same at few rows
TARGET_RATIO = 2.0
TARGET_FIRST_PAGE_MS = 30.0  # page mode's first page (with its exact total) at many rows


def ensure_database(url: str) -> None:
    import psycopg2

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    connection = psycopg2.connect(admin)
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        if cursor.fetchone() is None:
            cursor.execute(f'CREATE DATABASE "{name}"')
    connection.close()


def copy_rows(database, table: str, template_id, count: int, overrides: dict[str, str]) -> None:
    """`count` copies of one row of `table` (row g of generate_series gets the `overrides`
    expressions)."""
    columns = [
        row[0]
        for row in database.execute_sql(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY "
            "ordinal_position",
            (table,),
        )
    ]
    values = [overrides.get(column, f't."{column}"') for column in columns]
    names = ", ".join(f'"{column}"' for column in columns)
    database.execute_sql(
        f'INSERT INTO "{table}" ({names}) SELECT {", ".join(values)} '
        f'FROM generate_series(1, %s) AS g, (SELECT * FROM "{table}" WHERE id = %s) AS t',
        (count, template_id),
    )


def seed(url: str, rows: int, instance: Path) -> dict:
    """A fresh schema with one tenant holding `rows` jobs, `rows` candidates and `rows`
    applications."""
    from app.data.db import database
    from app.data.tenancy import create_tenant
    from tests.factories import candidate_body, job_body

    app = fresh_app(url, instance, RATE_LIMIT="1000000/minute")
    with app.app_context(), database.connection_context():
        tenant_id, key = create_tenant("lists")
    client = app.test_client()
    headers = {"Authorization": f"Bearer {key}"}
    job = client.post("/v1/jobs", json=job_body(source_id="template-job"), headers=headers).json
    candidate = client.post(
        "/v1/candidates", json=candidate_body(source_id="template-candidate"), headers=headers
    ).json
    application = client.post(
        "/v1/applications",
        headers=headers,
        json={
            "candidate_source_id": "template-candidate",
            "job_source_id": "template-job",
            "source_application_status": "applied",
            "application_stage": "PASSIVE",
        },
    ).json
    started = time.monotonic()
    # one row a second, oldest first
    spread = f"now() at time zone 'utc' - ({rows} - g) * interval '1 second'"
    with app.app_context(), database.connection_context():
        with database.atomic():
            copy_rows(
                database,
                "jobs",
                job["id"],
                rows - 1,
                {
                    "id": "md5('job' || g)::uuid",
                    "source_id": "'job-' || g",
                    "number": "g + 1",
                    "status": "CASE WHEN mod(g, 4) = 0 THEN 'Closed' ELSE 'open' END",
                    "created_at": spread,
                    "updated_at": spread,
                },
            )
            copy_rows(
                database,
                "candidates",
                candidate["id"],
                rows - 1,
                {
                    "id": "md5('candidate' || g)::uuid",
                    "source_id": "'candidate-' || g",
                    "email": "'c' || g || '@example.com'",
                    "created_at": spread,
                    "updated_at": spread,
                },
            )
            copy_rows(
                database,
                "applications",
                application["id"],
                rows - 1,
                {
                    "id": "md5('application' || g)::uuid",
                    "source_id": "'application-' || g",
                    "candidate_id": "md5('candidate' || g)::uuid",
                    "candidate_source_id": "'candidate-' || g",
                    "job_id": "md5('job' || g)::uuid",
                    "job_source_id": "'job-' || g",
                    "created_at": spread,
                    "updated_at": spread,
                },
            )
        database.execute_sql("VACUUM ANALYZE")
    print(
        "  "
        f"seeded {rows:,} jobs, candidates and applications in {time.monotonic() - started:.1f} s",
        flush=True,
    )
    middle = client.get("/v1/jobs", query_string={"cursor": "", "size": 1}, headers=headers)
    assert middle.status_code == 200, middle.get_data(as_text=True)
    return {"key": key, "job_id": job["id"], "rows": rows}


def requests_to_time(seeded: dict, session: requests.Session, base: str) -> dict[str, str]:
    """name -> path+query of the requests to time; the deep cursor is found by reading the list
    once."""
    half = max(1, seeded["rows"] // 2)
    middle = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - half))
    paths = {}
    for family in ("jobs", "applications"):
        paths[f"{family}: page 1 (with total)"] = f"/v1/{family}?page=1&size=20"
        paths[f"{family}: cursor, first page"] = f"/v1/{family}?cursor=&size=20"
        window = f"/v1/{family}?updated_after={middle}&size=20"
        paths[f"{family}: updated_after, first page"] = f"{window}&cursor="
        first = session.get(f"{base}{window}&cursor=", timeout=60).json()
        paths[f"{family}: cursor, deep page"] = f"{window}&cursor={first['next_cursor']}"
    paths["jobs: status filter, page 1"] = "/v1/jobs?page=1&size=20&status=open"
    paths["jobs: status filter, cursor"] = "/v1/jobs?cursor=&size=20&status=open"
    paths["applications: job filter, page 1"] = (
        f"/v1/applications?page=1&size=20&job_id={seeded['job_id']}"
    )
    paths["applications: job filter, cursor"] = (
        f"/v1/applications?cursor=&size=20&job_id={seeded['job_id']}"
    )
    return paths


def checked_get(session: requests.Session, url: str) -> None:
    response = session.get(url, timeout=120)
    assert response.status_code == 200, (url, response.status_code, response.text[:300])


def median_ms(session: requests.Session, url: str, repeats: int) -> float:
    # an untimed first warms the caches
    return statistics.median(time_calls(lambda: checked_get(session, url), repeats))


def concurrent_median_ms(headers: dict, url: str, repeats: int, clients: int) -> float:
    """The median latency of `repeats` requests from each of `clients` keep-alive connections
    sending at once."""

    def one_client(_) -> list[float]:
        with requests.Session() as session:
            session.headers.update(headers)
            # an untimed first warms the connection
            return time_calls(lambda: checked_get(session, url), repeats)

    with ThreadPoolExecutor(clients) as pool:
        return statistics.median(
            timing for timings in pool.map(one_client, range(clients)) for timing in timings
        )


def measure(url: str, rows: int, repeats: int, clients: int) -> dict[tuple[str, int], float]:
    instance = Path(tempfile.mkdtemp(prefix="bench-lists-"))
    seeded = seed(url, rows, instance)
    port = free_port()
    env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": url,
        "HIREKIT_INSTANCE_DIR": str(instance),
        "HIREKIT_LOG_LEVEL": "WARNING",
        "HIREKIT_RATE_LIMIT": "1000000/minute",
        "HIREKIT_TENANT_MAX_IN_FLIGHT": "-1",
        "HIREKIT_REDIS_URL": "",
    }
    server = start_gunicorn("wsgi:app", port, env)
    try:
        base = f"http://127.0.0.1:{port}"
        with requests.Session() as session:
            session.headers["Authorization"] = f"Bearer {seeded['key']}"
            paths = requests_to_time(seeded, session, base)
            figures = {
                (name, 1): median_ms(session, f"{base}{path}", repeats)
                for name, path in paths.items()
            }
            figures.update(
                {
                    (name, clients): concurrent_median_ms(
                        dict(session.headers), f"{base}{path}", repeats, clients
                    )
                    for name, path in paths.items()
                }
            )
            return figures
    finally:
        stop(server)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument(
        "--clients", type=int, default=4, help="the second load shape: connections sending at once"
    )
    args = parser.parse_args()
    os.environ.setdefault("HIREKIT_SECRET_KEY", os.urandom(32).hex())
    url = os.environ.get("HIREKIT_BENCH_DATABASE_URL", DEFAULT_URL)
    ensure_database(url)
    figures = {}
    for rows in (args.small, args.large):
        print(f"{rows:,} rows per list:", flush=True)
        figures[rows] = measure(url, rows, args.repeats, args.clients)
    print(
        f"\nmedian ms of {args.repeats} requests per connection (gunicorn 2 workers, PostgreSQL), "
        f"over 1 and over {args.clients} concurrent keep-alive connections"
    )
    print(f"{'request':<40} {'conns':>5} {args.small:>12,} {args.large:>12,} {'ratio':>7}  target")
    failed = 0
    for name, clients in figures[args.small]:
        few, many = figures[args.small][name, clients], figures[args.large][name, clients]
        ratio = many / few
        if "with total" in name:
            ok, target = many <= TARGET_FIRST_PAGE_MS, f"<= {TARGET_FIRST_PAGE_MS:.0f} ms"
        elif "filter" in name or "cursor" in name or "updated_after" in name:
            ok, target = ratio <= TARGET_RATIO, f"ratio <= {TARGET_RATIO:.0f}"
        else:
            ok, target = True, ""
        failed += not ok
        print(
            f"{name:<40} {clients:>5} {few:>12.2f} {many:>12.2f} {ratio:>7.2f}  {target} "
            f"{'met' if ok else 'NOT MET'}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
