"""The routes an ATS leans on, against their floor (bench/integrator_floor_app.py) measured in the
same run.

Scenarios, each in every load shape (keep-alive connections sending at once) on each database:
- apps: GET /v1/applications?page=1&size=50, each application with its candidate and job;
- jobs: GET /v1/jobs?page=1&size=20;
- walk: a cursor walk of every job (10,000 by default) in pages of 100, started again when it ends;
- create: POST /v1/applications with a 100 KiB base64 resume, each a new (candidate, job) pair.

Hirekit runs as deployed (gunicorn, deploy/gunicorn.conf.py, 2 workers) beside the floor under the
same gunicorn; the two take turns per scenario and shape (floor, Hirekit, --pairs times) and the
figure printed is Hirekit's requests/s over the floor's, the median of the pairs. The load comes
from threads of this process (one keep-alive http.client connection each), which share the machine
with both servers alike. Beside requests/s, the CPU each server spends per request is counted (Linux
/proc: its gunicorn workers, and on PostgreSQL the backends of its database): on a machine others
share, throughput swings with their load while the CPU a request costs moves much less. Target: at
least 0.6 of the floor everywhere.

    python bench/integrator_routes.py [--databases sqlite,postgresql] [--shapes 1,8] [--duration 3]
                                      [--pairs 1] [--jobs 10000] [--scenarios apps,jobs,walk,create]

PostgreSQL is HIREKIT_BENCH_DATABASE_URL (or HIREKIT_TEST_DATABASE_URL); **its schema is dropped and
rebuilt**.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import itertools
import os
import secrets
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    cpu_seconds,
    fresh_database,
    free_port,
    load_average,
    postgres_backend_pids,
    start_gunicorn,
    stop,
    worker_pids,
)

APPLICATIONS_SEEDED = 60
CANDIDATES = 2_000
WALK_PAGE = 100
RESUME = base64.b64encode(b"%PDF-1.4\n" + os.urandom(100 * 1024 - 9)).decode()
TARGET = 0.6


def seed(database_url: str, instance: Path, jobs: int) -> dict:
    """A tenant with `jobs` jobs, CANDIDATES candidates and APPLICATIONS_SEEDED applications,
    written through the API."""
    from tests.factories import candidate_body, job_body

    app, tenant_id, key = fresh_database(database_url, instance)
    client = app.test_client()
    headers = {"Authorization": f"Bearer {key}"}
    for start in range(0, jobs, 500):
        items = [job_body(source_id=f"job-{n}") for n in range(start, min(jobs, start + 500))]
        answer = client.put("/v1/jobs/by-source-id", json={"items": items}, headers=headers)
        assert answer.status_code == 200, answer.get_data(as_text=True)[:300]
    for start in range(0, CANDIDATES, 500):
        items = [
            candidate_body(source_id=f"candidate-{n}")
            for n in range(start, min(CANDIDATES, start + 500))
        ]
        answer = client.put("/v1/candidates/by-source-id", json={"items": items}, headers=headers)
        assert answer.status_code == 200, answer.get_data(as_text=True)[:300]
    for n in range(APPLICATIONS_SEEDED):
        answer = client.post(
            "/v1/applications",
            headers=headers,
            json={
                "candidate_source_id": f"candidate-{n}",
                "job_source_id": f"job-{n}",
                "source_application_status": "new",
                "application_stage": "ACTIVE",
            },
        )
        assert answer.status_code == 201, answer.get_data(as_text=True)[:300]
    if database_url.startswith("postgres"):
        from app.data.db import database

        with app.app_context(), database.connection_context():
            database.execute_sql("VACUUM ANALYZE")
    return {"tenant": tenant_id, "key": key}


class Connection:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, port: int, headers: dict):
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.headers = {"Content-Type": "application/json", **headers}

    def call(self, method: str, path: str, body: bytes | None = None) -> dict:
        self.http.request(method, path, body=body, headers=self.headers)
        response = self.http.getresponse()
        payload = response.read()
        if response.status >= 300:
            raise RuntimeError(f"{method} {path} answered {response.status}: {payload[:300]!r}")
        return orjson.loads(payload)


def scenario_calls(name: str, pairs):
    """A function of a connection making one request of the scenario (walkers keep their position
    per connection)."""
    if name == "apps":
        return lambda connection, state: connection.call("GET", "/v1/applications?page=1&size=50")
    if name == "jobs":
        return lambda connection, state: connection.call("GET", "/v1/jobs?page=1&size=20")
    if name == "walk":

        def walk(connection, state):
            page = connection.call(
                "GET", f"/v1/jobs?size={WALK_PAGE}&cursor={state.get('cursor', '')}"
            )
            state["cursor"] = page.get("next_cursor", "")

        return walk

    def create(connection, state):
        candidate, job = next(pairs)
        connection.call(
            "POST",
            "/v1/applications",
            orjson.dumps(
                {
                    "candidate_source_id": f"candidate-{candidate}",
                    "job_source_id": f"job-{job}",
                    "source_application_status": "new",
                    "application_stage": "ACTIVE",
                    "base64file": RESUME,
                    "file_name": "resume.pdf",
                }
            ),
        )

    return create


def drive(
    port: int, headers: dict, call, connections: int, duration: float, pids
) -> tuple[float, float]:
    """Requests/s of `connections` threads calling `call` for `duration` seconds, and the CPU
    milliseconds per request the processes `pids()` names (the server's workers, and its database
    backends) spent meanwhile."""
    before = cpu_seconds(pids())
    counts, failures = [0] * connections, []
    stop_at = time.monotonic() + duration

    def worker(index: int):
        connection, state = Connection(port, headers), {}
        try:
            call(connection, state)  # a warm-up call, not counted
            while time.monotonic() < stop_at:
                call(connection, state)
                counts[index] += 1
        except Exception as error:  # noqa: BLE001 - reported below, the figure would be wrong
            failures.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(connections)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    after = cpu_seconds(list(before))
    if failures:
        raise RuntimeError(f"{len(failures)} connections failed: {failures[0]}")
    requests = sum(counts) + connections  # the warm-up calls used CPU too
    return sum(counts) / elapsed, sum(after[pid] - before[pid] for pid in after) / requests * 1000


def run_database(label: str, database_url: str, args) -> list[tuple]:
    instance = Path(tempfile.mkdtemp(prefix="hirekit-integrator-"))
    started = time.monotonic()
    seeded = seed(database_url, instance, args.jobs)
    print(
        f"\n{label}: seeded {args.jobs} jobs, {CANDIDATES} candidates, {APPLICATIONS_SEEDED} "
        "applications in "
        f"{time.monotonic() - started:.0f} s; load average {load_average()}",
        flush=True,
    )
    env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": database_url,
        "HIREKIT_INSTANCE_DIR": str(instance),
        "HIREKIT_RESUME_DIR": str(instance / "resumes"),
        "HIREKIT_LOG_LEVEL": "WARNING",
        "HIREKIT_REDIS_URL": os.environ.get("HIREKIT_BENCH_REDIS_URL", ""),
        "BENCH_FLOOR_TENANT": seeded["tenant"],
        "BENCH_FLOOR_FILES": str(instance / "floor-resumes"),
    }
    hirekit_port, floor_port = free_port(), free_port()
    hirekit = start_gunicorn("wsgi:app", hirekit_port, env, settle_seconds=1)
    floor = start_gunicorn("bench.integrator_floor_app:app", floor_port, env, settle_seconds=1)
    pairs = (
        (candidate, job)
        for job in itertools.count(APPLICATIONS_SEEDED)
        for candidate in range(APPLICATIONS_SEEDED, CANDIDATES)
    )
    postgres = database_url.startswith("postgres")

    def server_pids(server):
        return lambda: (
            worker_pids(server) + (postgres_backend_pids(database_url) if postgres else [])
        )

    lock = threading.Lock()
    shared_pairs = iter(lambda: _locked_next(lock, pairs), None)
    rows = []
    try:
        for name in args.scenarios:
            call = scenario_calls(name, shared_pairs)
            for connections in args.shapes:
                ratios, floors, apps, cpu_ratios, floor_cpus, app_cpus = [], [], [], [], [], []
                for _ in range(args.pairs):
                    floor_rate, floor_cpu = drive(
                        floor_port, {}, call, connections, args.duration, server_pids(floor)
                    )
                    app_rate, app_cpu = drive(
                        hirekit_port,
                        {"Authorization": f"Bearer {seeded['key']}"},
                        call,
                        connections,
                        args.duration,
                        server_pids(hirekit),
                    )
                    floors.append(floor_rate)
                    apps.append(app_rate)
                    ratios.append(app_rate / floor_rate)
                    floor_cpus.append(floor_cpu)
                    app_cpus.append(app_cpu)
                    cpu_ratios.append(floor_cpu / app_cpu if app_cpu else 0.0)
                ratio, cpu_ratio = statistics.median(ratios), statistics.median(cpu_ratios)
                floor_cpu, app_cpu = statistics.median(floor_cpus), statistics.median(app_cpus)
                rows.append(
                    (
                        label,
                        name,
                        connections,
                        statistics.median(floors),
                        statistics.median(apps),
                        ratio,
                        floor_cpu,
                        app_cpu,
                        cpu_ratio,
                    )
                )
                print(
                    f"{label:10} {name:7} {connections} conn: floor "
                    f"{statistics.median(floors):7.1f} req/s, "
                    f"Hirekit {statistics.median(apps):7.1f} req/s, ratio {ratio:.2f} "
                    f"({'meets' if ratio >= TARGET else 'under'} {TARGET}); CPU per request floor "
                    f"{floor_cpu:.2f} ms, Hirekit {app_cpu:.2f} ms, ratio {cpu_ratio:.2f}",
                    flush=True,
                )
    finally:
        stop(hirekit)
        stop(floor)
    return rows


def _locked_next(lock, iterator):
    with lock:
        return next(iterator)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument(
        "--shapes", default="1,8", help="connections sending at once, one figure per shape"
    )
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per run")
    parser.add_argument(
        "--pairs", type=int, default=1, help="floor/Hirekit pairs per scenario and shape"
    )
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--scenarios", default="apps,jobs,walk,create")
    args = parser.parse_args()
    args.shapes = [int(shape) for shape in args.shapes.split(",")]
    args.scenarios = args.scenarios.split(",")
    # signs the cursors of the walk
    os.environ.setdefault("HIREKIT_SECRET_KEY", secrets.token_urlsafe(48))
    os.environ.update(HIREKIT_RATE_LIMIT="100000000/minute", HIREKIT_TENANT_MAX_IN_FLIGHT="-1")
    rows = []
    for database in args.databases.split(","):
        if database == "sqlite":
            url = f"sqlite:///{tempfile.mkdtemp(prefix='hirekit-integrator-db-')}/bench.db"
        else:
            url = os.environ.get("HIREKIT_BENCH_DATABASE_URL") or os.environ.get(
                "HIREKIT_TEST_DATABASE_URL"
            )
            if not url:
                print("postgresql: set HIREKIT_BENCH_DATABASE_URL to measure it", flush=True)
                continue
        rows.extend(run_database(database, url, args))
    print(f"\nload average at the end: {load_average()}")
    print(
        "\n| database | route | connections | floor req/s | Hirekit req/s | Hirekit / floor | "
        "CPU ms per request: floor / Hirekit | floor CPU / Hirekit CPU |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for (
        label,
        name,
        connections,
        floor_rate,
        app_rate,
        ratio,
        floor_cpu,
        app_cpu,
        cpu_ratio,
    ) in rows:
        print(
            f"| {label} | {name} | {connections} | {floor_rate:.0f} | {app_rate:.0f} | **"
            f"{ratio:.2f}** | "
            f"{floor_cpu:.2f} / {app_cpu:.2f} | {cpu_ratio:.2f} |"
        )


if __name__ == "__main__":
    main()
