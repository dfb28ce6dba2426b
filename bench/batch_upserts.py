"""Batch upserts: jobs written per second by PUT /v1/jobs/by-source-id in batches of 100 and 500,
against single upserts (PUT /v1/jobs/by-source-id/{source_id}) and against the floor,
bench/write_floor_app.py, which runs only the same SQL statements for the same batch. Both under
gunicorn as deployed (deploy/gunicorn.conf.py, 2 workers), on PostgreSQL (HIREKIT_BENCH_DATABASE_URL
or HIREKIT_TEST_DATABASE_URL) and SQLite (a temporary file).

Every request writes new jobs (an initial sync); `--replace` makes every batch replace jobs written
before instead (a re-sync). Each load shape is a number of client connections, each a thread sending
one request at a time on a keep-alive connection. Runs are interleaved (floor and Hirekit take
turns, the order alternating from round to round) and each figure is the median of the rounds, so a
slow spell of the shared machine falls on both sides of a ratio.

    python bench/batch_upserts.py [--databases postgresql,sqlite] [--connections 2,6] [--duration 6]
                                  [--rounds 3] [--replace]

Targets: at least 5,000 jobs/s on PostgreSQL in batches, and batches at least 0.5 of the floor's
jobs/s.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    cpu_seconds,
    free_port,
    fresh_database,
    load_average,
    postgres_backend_pids,
    start_gunicorn,
    stop,
    worker_pids,
)

JOB = {
    "title": "Registered Nurse",
    "industry": "healthcare",
    "state_name": "California",
    "country": "US",
    "city": "San Francisco",
    "recruiter_name": "Rita Recruiter",
    "recruiter_email": "rita@example.com",
    "recruiter_work_phone_no": "+14155550100",
    "status": "open",
    "employment_type": "full_time",
    "min_pay_rate": 40.0,
    "max_pay_rate": 60.0,
    "desc": "We need an RN with 3+ years of ICU experience and a BLS "
    "certification. Day shifts, four days a week.",
}
ITEM_TAIL = orjson.dumps(JOB)[1:]  # the item after its source_id: `{"source_id":"...",` + this
SINGLE_BODY = orjson.dumps(JOB)
BATCH_SIZES = (100, 500)


@dataclass
class Run:
    jobs: int
    requests: int
    errors: int
    seconds: float
    # the server's workers' and (PostgreSQL) its database backends' CPU meanwhile
    cpu_seconds: float = 0.0

    @property
    def cpu_us_per_job(self) -> float:
        return self.cpu_seconds / max(self.jobs, 1) * 1e6

    @property
    def jobs_per_second(self) -> float:
        return self.jobs / self.seconds


def batch_body(source_ids: list[str]) -> bytes:
    return (
        b'{"items":['
        + b",".join(b'{"source_id":"' + s.encode() + b'",' + ITEM_TAIL for s in source_ids)
        + b"]}"
    )


def drive(
    port: int, headers: dict, connections: int, duration: float, batch: int | None, names
) -> Run:
    """`connections` threads, each sending requests on one keep-alive connection for `duration`
    seconds: batches of `batch` jobs to PUT /v1/jobs/by-source-id, or (batch None) one job per PUT
    /v1/jobs/by-source-id/{source_id}. `names()` gives the next source id. Counts the jobs answered
    201 or 200."""
    totals = {"jobs": 0, "requests": 0, "errors": 0}
    lock = threading.Lock()
    stop_at = time.monotonic() + duration
    sent_headers = {"Content-Type": "application/json", **headers}

    def client():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        jobs = requests = errors = 0
        while time.monotonic() < stop_at:
            if batch is None:
                connection.request(
                    "PUT",
                    f"/v1/jobs/by-source-id/{names()}",
                    body=SINGLE_BODY,
                    headers=sent_headers,
                )
            else:
                connection.request(
                    "PUT",
                    "/v1/jobs/by-source-id",
                    body=batch_body([names() for _ in range(batch)]),
                    headers=sent_headers,
                )
            response = connection.getresponse()
            payload = response.read()
            requests += 1
            if response.status not in (200, 201):
                errors += 1
            elif batch is None:
                jobs += 1
            else:
                outcome = orjson.loads(payload)
                written = sum(1 for item in outcome["items"] if item["status"] in (200, 201))
                jobs += written
                errors += len(outcome["items"]) - written
        with lock:
            totals["jobs"] += jobs
            totals["requests"] += requests
            totals["errors"] += errors

    started = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Run(totals["jobs"], totals["requests"], totals["errors"], time.monotonic() - started)


def counting_cpu(pids, run, *args) -> Run:
    """run(*args), with the CPU the processes `pids()` names used meanwhile (those alive
    throughout)."""
    before = cpu_seconds(pids())
    result = run(*args)
    after = cpu_seconds(list(before))
    result.cpu_seconds = sum(after[pid] - before[pid] for pid in after)
    return result


def prime(port: int, headers: dict, names, count: int) -> None:
    """Write `count` new jobs in batches of 500 (the pool a --replace run replaces)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    for start in range(0, count, 500):
        connection.request(
            "PUT",
            "/v1/jobs/by-source-id",
            body=batch_body([names() for _ in range(min(500, count - start))]),
            headers={"Content-Type": "application/json", **headers},
        )
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"priming the replace pool answered {response.status}")
    connection.close()


def source_ids(prefix: str, replace_pool: int | None):
    """New source ids (prefix-1, prefix-2, ...), or with `replace_pool` the ids prefix-1..pool over
    and over."""
    counter = itertools.count(1)
    lock = threading.Lock()

    def next_name() -> str:
        with lock:
            n = next(counter)
        return f"{prefix}-{(n - 1) % replace_pool + 1 if replace_pool else n}"

    return next_name


def bench_database(database_url: str, args) -> list[str]:
    """Every shape's figures on one database; answers the printed lines."""
    instance = Path(tempfile.mkdtemp(prefix="hirekit-batch-bench-"))
    try:
        _, tenant, key = fresh_database(database_url, instance)
        env = {
            **os.environ,
            "HIREKIT_DATABASE_URL": database_url,
            "HIREKIT_INSTANCE_DIR": str(instance),
            "HIREKIT_ACCESS_LOG": "",
            "HIREKIT_RATE_LIMIT": "1000000000/minute",
            "HIREKIT_TENANT_MAX_IN_FLIGHT": "-1",
            "HIREKIT_LOG_LEVEL": "WARNING",
            "HIREKIT_REDIS_URL": "",
            "BENCH_FLOOR_TENANT": tenant,
        }
        app_port, floor_port = free_port(), free_port()
        hirekit = start_gunicorn("wsgi:app", app_port, env, settle_seconds=1)
        floor = start_gunicorn("bench.write_floor_app:app", floor_port, env, settle_seconds=1)
        postgres = database_url.startswith("postgres")
        pids = {
            port: (
                lambda server=server: (
                    worker_pids(server) + (postgres_backend_pids(database_url) if postgres else [])
                )
            )
            for port, server in ((app_port, hirekit), (floor_port, floor))
        }
        try:
            return measure(
                app_port, floor_port, {"Authorization": f"Bearer {key}"}, database_url, args, pids
            )
        finally:
            stop(hirekit)
            stop(floor)
    finally:
        shutil.rmtree(instance, ignore_errors=True)


def analyze_jobs(database_url: str) -> None:
    """PostgreSQL: refresh the jobs table's statistics after a run, as autovacuum's analyze does in
    a deployment once a table has grown by a tenth. A server run with autovacuum off (this machine's
    is) keeps none, and the planner then answers a batch's source_id look-up by scanning the
    tenant's every job: 140 ms a batch at 500,000 jobs."""
    if database_url.startswith("postgres"):
        import psycopg2

        with psycopg2.connect(database_url) as connection, connection.cursor() as cursor:
            cursor.execute("ANALYZE jobs")
        connection.close()


def measure(
    app_port: int, floor_port: int, bearer: dict, database_url: str, args, pids
) -> list[str]:
    backend = "PostgreSQL" if database_url.startswith("postgres") else "SQLite"
    scenarios = [("single", app_port, bearer, None)]
    for size in BATCH_SIZES:
        scenarios += [
            (f"floor {size}", floor_port, {}, size),
            (f"batch {size}", app_port, bearer, size),
        ]
    pools = {}
    if args.replace:  # write every scenario's pool once, so each later request replaces stored jobs
        for name, port, headers, _ in scenarios:
            pools[name] = args.replace_pool
            prime(port, headers, source_ids(f"{name}-r", None), args.replace_pool)
    lines = [
        f"\n{backend}: jobs/s, median of {args.rounds} interleaved rounds of {args.duration:g} s "
        f"({'every batch replaces stored jobs' if args.replace else 'every job new'}), gunicorn 2 "
        "workers x 4 threads"
    ]
    met = True
    for connections in args.connections:
        figures: dict[str, list[Run]] = {name: [] for name, *_ in scenarios}
        for round_no in range(args.rounds):
            order = scenarios if round_no % 2 == 0 else list(reversed(scenarios))
            for name, port, headers, size in order:
                names = source_ids(
                    f"{name}-r" if args.replace else f"{name}-{connections}-{round_no}",
                    pools.get(name),
                )
                figures[name].append(
                    counting_cpu(
                        pids[port], drive, port, headers, connections, args.duration, size, names
                    )
                )
                analyze_jobs(database_url)
        rate = {
            name: statistics.median(run.jobs_per_second for run in runs)
            for name, runs in figures.items()
        }
        cost = {
            name: statistics.median(run.cpu_us_per_job for run in runs)
            for name, runs in figures.items()
        }
        errors = {name: sum(run.errors for run in runs) for name, runs in figures.items()}
        lines.append(
            f"  {connections} connections: single upserts {rate['single']:,.0f} jobs/s, "
            f"{cost['single']:,.0f} µs CPU "
            "per job" + (f" ({errors['single']} errors)" if errors["single"] else "")
        )
        for size in BATCH_SIZES:
            batch, floor = rate[f"batch {size}"], rate[f"floor {size}"]
            ratios = [
                b.jobs_per_second / f.jobs_per_second
                for b, f in zip(figures[f"batch {size}"], figures[f"floor {size}"])
            ]
            share = statistics.median(ratios)
            met &= share >= 0.5 and (backend != "PostgreSQL" or batch >= 5000)
            lines.append(
                f"    batches of {size}: {batch:,.0f} jobs/s = {batch / rate['single']:.1f}x "
                "single; floor "
                f"{floor:,.0f} jobs/s; Hirekit/floor {share:.2f} (rounds "
                f"{', '.join(f'{r:.2f}' for r in ratios)})"
                + (f"; {errors[f'batch {size}']} errors" if errors[f"batch {size}"] else "")
            )
            lines.append(
                f"      CPU per job: Hirekit {cost[f'batch {size}']:,.0f} µs, floor "
                f"{cost[f'floor {size}']:,.0f} µs "
                f"(floor/Hirekit {cost[f'floor {size}'] / cost[f'batch {size}']:.2f}), single "
                "upserts "
                f"{cost['single']:,.0f} µs"
            )
    lines.append(
        f"  targets ({'>= 5,000 jobs/s in batches, ' if backend == 'PostgreSQL' else ''}batches >= "
        "0.50 of the "
        f"floor): {'met' if met else 'NOT met'}"
    )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--databases", default="postgresql,sqlite")
    parser.add_argument(
        "--connections", default="2,6", help="load shapes: client connections, comma-separated"
    )
    parser.add_argument("--duration", type=float, default=6.0, help="seconds per run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--replace",
        action="store_true",
        help="batches replace stored jobs instead of creating them",
    )
    parser.add_argument(
        "--replace-pool", type=int, default=2000, help="jobs each scenario replaces over and over"
    )
    args = parser.parse_args()
    args.connections = [int(text) for text in args.connections.split(",")]
    os.environ.setdefault("HIREKIT_SECRET_KEY", secrets.token_urlsafe(48))  # the servers need one
    lines = []
    for name in args.databases.split(","):
        if name == "postgresql":
            url = os.environ.get("HIREKIT_BENCH_DATABASE_URL") or os.environ.get(
                "HIREKIT_TEST_DATABASE_URL"
            )
            if not url:
                lines.append("\nPostgreSQL: skipped (set HIREKIT_BENCH_DATABASE_URL)")
                continue
        else:
            url = f"sqlite:///{tempfile.mkdtemp(prefix='hirekit-batch-sqlite-')}/bench.sqlite3"
        lines += bench_database(url, args)
    print("\n".join(lines))
    print(f"load average after the run: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
