"""REST throughput: Hirekit under gunicorn against a bare Flask app under the same gunicorn, same
load, same run.

Prints req/s, p50 and p99 per scenario and the ratio to the bare app (GET scenarios against the bare
GET, POSTs against the bare POST, which parses the JSON body). Load comes from wrk when installed
(Debian's `wrk`), else from a Python generator with keep-alive connections. PostgreSQL is used when
HIREKIT_BENCH_DATABASE_URL (or HIREKIT_TEST_DATABASE_URL) is set, else SQLite in a temporary
directory.

The target (GET /v1/jobs/:id >= 0.50 of the bare GET) is measured in every load shape of --shapes
(wrk threads x connections; default 2x32 and 1x16) as interleaved bare/app pairs, the shapes taking
turns within each pair round, so a slow spell of the machine falls on every shape and on both sides
of a ratio. On PostgreSQL each round also runs bench/floor_app.py, which reads the same row with
nothing around it: its ratio is the ceiling of any app that reads one row per request on the
machine, and Hirekit's share of it shows what the app itself costs. The scenario table runs at the
first shape. Beside req/s, each pair's CPU per request is counted (Linux /proc: the servers'
workers, and for Hirekit the PostgreSQL backends of its database): on a machine others share,
throughput swings with their load, while what a request costs in CPU moves much less, and on a
saturated quiet machine the req/s ratio is that cost ratio.

Writes have their own floor: bench/write_floor_app.py runs the SQL statements of POST /v1/jobs (the
source_id look-up, the job number, the INSERT) with nothing around them, on either database.
Interleaved POST /v1/jobs pairs per shape (--write-pairs, 5 by default) print Hirekit's share of
that floor's req/s and both CPU costs per request; the target is a share of at least 0.50 in every
shape.

    python bench/rest_throughput.py [--duration 10] [--shapes 2x32,1x16] [--pairs 9] [--quick]
                                    [--target-only] [--write-pairs 5] [--writes-only]
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import requests
import secrets

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


@dataclass
class Result:
    name: str
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    count: int = 0  # requests answered


@dataclass(frozen=True)
class Shape:
    """A load shape: wrk threads x keep-alive connections."""

    threads: int
    connections: int

    @classmethod
    def parse(cls, text: str) -> "Shape":
        threads, _, connections = text.partition("x")
        return cls(int(threads), int(connections))

    def __str__(self) -> str:
        return f"{self.threads}x{self.connections}"


LUA_TEMPLATE = """
local counter = 0
local thread_no = 0
local threads = {}
function setup(thread)
  thread_no = thread_no + 1
  thread:set("tid", thread_no)
end
function request()
  counter = counter + 1
  local body = string.format(BODY, tid or 0, counter)
  return wrk.format("%(method)s", "%(path)s", HEADERS, body)
end
"""


def lua_script(method: str, path: str, headers: dict, body_template: str | None) -> str:
    header_lua = "{" + ", ".join(f'["{k}"] = "{v}"' for k, v in headers.items()) + "}"
    if body_template is None:
        return f'wrk.method = "{method}"\nwrk.headers = {header_lua}\n'
    return f"BODY = [==[{body_template}]==]\nHEADERS = {header_lua}\n" + LUA_TEMPLATE % {
        "method": method,
        "path": path,
    }


def parse_latency(text: str, label: str) -> float:
    match = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", text, re.MULTILINE)
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def run_wrk(name, url, method, headers, body_template, duration, shape: Shape) -> Result:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        parts = urlsplit(url)
        script.write(
            lua_script(
                method,
                parts.path + (f"?{parts.query}" if parts.query else ""),
                headers,
                body_template,
            )
        )
    done = subprocess.run(
        [
            "wrk",
            f"-t{shape.threads}",
            f"-c{shape.connections}",
            f"-d{duration}s",
            "--latency",
            "-s",
            script.name,
            url,
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed: {done.stdout}{done.stderr}")
    out = done.stdout
    os.unlink(script.name)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = int(m.group(1)) if (m := re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)) else 0
    socket_errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    )
    if socket_errors:
        errors += sum(int(x) for x in socket_errors.groups())
    count = int(re.search(r"(\d+) requests in", out).group(1))
    return Result(name, rps, parse_latency(out, "50"), parse_latency(out, "99"), errors, count)


def run_python_load(name, url, method, headers, body_template, duration, shape: Shape) -> Result:
    """Fallback when wrk is missing: one keep-alive session per thread. A body template is filled
    as wrk's script fills it, with (wrk thread 1 or 2, that thread's request number): one counter
    for all the connections, so every body is new (each POST /v1/applications a new pair)."""
    latencies, errors, lock = [], [0], threading.Lock()
    stop_at = time.monotonic() + duration
    numbers = itertools.count()

    def worker(_):
        session = requests.Session()
        while time.monotonic() < stop_at:
            with lock:
                number = next(numbers)
            filled = (1 + number % 2, 1 + number // 2)
            body = (body_template % filled).encode() if body_template else None
            started = time.perf_counter()
            response = session.request(method, url, headers=headers, data=body)
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                latencies.append(elapsed)
                if response.status_code >= 300:
                    errors[0] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(shape.connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    latencies.sort()
    return Result(
        name,
        len(latencies) / duration,
        statistics.median(latencies),
        latencies[int(len(latencies) * 0.99) - 1],
        errors[0],
        len(latencies),
    )


def drive(*args) -> Result:
    return (run_wrk if shutil.which("wrk") else run_python_load)(*args)


def drive_counting_cpu(pids, *args) -> tuple[Result, float]:
    """drive(*args), and the CPU per request (µs) the processes `pids()` names used meanwhile (those
    alive throughout: the pool may replace a PostgreSQL connection, whose backend then leaves with
    its count)."""
    before = cpu_seconds(pids())
    result = drive(*args)
    after = cpu_seconds(list(before))
    return result, sum(after[pid] - before[pid] for pid in after) / max(result.count, 1) * 1e6


def seed(database_url: str, instance: Path):
    """Migrate, create a tenant with a key, and the records the scenarios read."""
    from app.data.db import database

    app, tenant_id, key = fresh_database(database_url, instance)
    client = app.test_client()
    headers = {"Authorization": f"Bearer {key}"}
    from tests.factories import job_body

    job_ids = [
        client.post("/v1/jobs", json=job_body(source_id=f"seed-{i}"), headers=headers).json["id"]
        for i in range(25)
    ]
    seeded = {"key": key, "tenant": tenant_id, "job_id": job_ids[0], "app": app}
    if "applications" in app.extensions["hirekit_plugins"]:
        seeded.update(seed_applications(app, client, headers, tenant_id))
    # settle statistics now, so autovacuum does not run during the measurements
    if database_url.startswith("postgres"):
        with app.app_context(), database.connection_context():
            database.execute_sql("VACUUM ANALYZE")
    return seeded


def seed_applications(app, client, headers, tenant_id, candidates=12_000):
    """Candidates enough for every POST /v1/applications of the run to be a new (candidate, job)
    pair."""
    from app.data.db import database
    from plugins.candidates.models import Candidate

    job = client.post(
        "/v1/jobs",
        json=__import__("tests.factories", fromlist=["job_body"]).job_body(source_id="apps-job"),
        headers=headers,
    ).json
    with app.app_context(), database.connection_context(), database.atomic():
        rows = [
            {
                "tenant": tenant_id,
                "source_id": f"cand-{t}-{n}",
                "source": "bench",
                "first_name": "Bench",
                "email": f"c{t}-{n}@example.com",
                "phone_no": "+14155550100",
            }
            for t in range(1, 3)
            for n in range(1, candidates // 2)
        ]
        for start in range(0, len(rows), 2000):
            Candidate.insert_many(rows[start : start + 2000]).execute()
    for n in range(60):
        client.post(
            "/v1/applications",
            json={
                "candidate_source_id": f"cand-1-{candidates // 2 - 1 - n}",
                "job_source_id": "apps-job",
                "source_application_status": "new",
                "application_stage": "ACTIVE",
            },
            headers=headers,
        )
    return {"apps_job_source_id": "apps-job", "apps_job_id": job["id"]}


def write_pairs(
    rounds: int, shapes: list[Shape], duration: int, job_template: str, *, floor, app
) -> dict:
    """Interleaved runs of POST /v1/jobs on Hirekit and on bench/write_floor_app.py (its statements
    alone) per shape: shape -> [(floor Result, floor CPU µs per request, app Result, app CPU µs per
    request)]. Each run creates jobs with source ids of its own (a repeated one would be a 409)."""
    (floor_url, floor_pids), (app_url, app_headers, app_pids) = floor, app
    measured: dict[Shape, list[tuple]] = {shape: [] for shape in shapes}
    for round_no in range(rounds):
        for shape in shapes:
            tag = f"{round_no}-{shape}"
            runs = {
                "floor": lambda: drive_counting_cpu(
                    floor_pids,
                    "floor POST",
                    floor_url,
                    "POST",
                    {"Content-Type": "application/json"},
                    job_template.replace("bench-", f"floor-{tag}-"),
                    duration,
                    shape,
                ),
                "app": lambda: drive_counting_cpu(
                    app_pids,
                    "POST /v1/jobs",
                    app_url,
                    "POST",
                    app_headers,
                    job_template.replace("bench-", f"app-{tag}-"),
                    duration,
                    shape,
                ),
            }
            done = {
                side: runs[side]()
                for side in (("floor", "app") if round_no % 2 == 0 else ("app", "floor"))
            }
            measured[shape].append((*done["floor"], *done["app"]))
    return measured


def print_write_pairs(measured: dict, backend: str, tool: str, duration: int) -> None:
    """Hirekit's share of the write floor's POST /v1/jobs req/s and CPU per request, per shape; the
    0.5 target."""
    if not any(measured.values()):
        return
    print(
        f"\nPOST /v1/jobs vs bench/write_floor_app.py (the same statements alone), {backend}, "
        f"gunicorn 2 workers, {tool}, "
        f"{duration} s per run (req/s floor/app = Hirekit's share):"
    )
    met = True
    for shape, runs in measured.items():
        shares = [app.rps / floor.rps for floor, _, app, _ in runs]
        met &= statistics.median(shares) >= 0.5
        print(
            f"  {shape}: "
            + ", ".join(
                f"{floor.rps:.0f}/{app.rps:.0f} = {share:.2f}"
                for (floor, _, app, _), share in zip(runs, shares)
            )
            + f"; errors floor {sum(f.errors for f, *_ in runs)}, app "
            f"{sum(a.errors for _, _, a, _ in runs)}"
        )
        print(
            f"  {str(shape):>5} median share {statistics.median(shares):.2f} (spread "
            f"{min(shares):.2f}-{max(shares):.2f}); "
            f"CPU per request: floor {statistics.median(c for _, c, _, _ in runs):.0f} µs, Hirekit "
            f"{statistics.median(c for *_, c in runs):.0f} µs"
            f"{' with PostgreSQL' if backend == 'PostgreSQL' else ''}"
        )
    print(
        "target: POST /v1/jobs >= 0.50 of the write floor in every shape -> "
        f"{'met' if met else 'NOT met'}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument(
        "--shapes",
        default="2x32,1x16",
        help="wrk load shapes, threads x connections, comma-separated",
    )
    parser.add_argument("--quick", action="store_true", help="3 s per scenario")
    parser.add_argument(
        "--pairs",
        type=int,
        default=9,
        help="interleaved bare/app runs per shape for the target ratio (median)",
    )
    parser.add_argument(
        "--target-only",
        action="store_true",
        help="only the interleaved pairs (GET, and POST below)",
    )
    parser.add_argument(
        "--write-pairs",
        type=int,
        default=5,
        help="interleaved POST /v1/jobs / write-floor runs per shape (median)",
    )
    parser.add_argument(
        "--writes-only", action="store_true", help="only the POST /v1/jobs / write-floor pairs"
    )
    args = parser.parse_args()
    if args.writes_only:
        args.target_only, args.pairs = True, 0
    # the app and the servers it starts need one
    os.environ.setdefault("HIREKIT_SECRET_KEY", secrets.token_urlsafe(48))
    duration = 3 if args.quick else args.duration
    shapes = [Shape.parse(text) for text in args.shapes.split(",")]

    instance = Path(tempfile.mkdtemp(prefix="hirekit-bench-"))
    database_url = (
        os.environ.get("HIREKIT_BENCH_DATABASE_URL")
        or os.environ.get("HIREKIT_TEST_DATABASE_URL")
        or f"sqlite:///{instance}/bench.sqlite3"
    )
    seeded = seed(database_url, instance)
    key = seeded["key"]
    env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": database_url,
        "HIREKIT_INSTANCE_DIR": str(instance),
        "HIREKIT_ACCESS_LOG": "",
        "HIREKIT_RATE_LIMIT": "100000000/minute",
        "HIREKIT_TENANT_MAX_IN_FLIGHT": "-1",
        "HIREKIT_LOG_LEVEL": "WARNING",
        "HIREKIT_REDIS_URL": os.environ.get("HIREKIT_BENCH_REDIS_URL", ""),
    }

    bare_port, app_port = free_port(), free_port()
    bare = start_gunicorn("bench.bare_app:app", bare_port, env, ready_path="/")
    hirekit = start_gunicorn("wsgi:app", app_port, env)
    postgres = database_url.startswith("postgres")
    # on PostgreSQL, bench/floor_app.py: the same row read with nothing around it
    floor_port = free_port()
    floor = (
        start_gunicorn(
            "bench.floor_app:app", floor_port, {**env, "BENCH_FLOOR_TENANT": seeded["tenant"]}
        )
        if postgres
        else None
    )
    # bench/write_floor_app.py: POST /v1/jobs's statements with nothing around them
    write_port = free_port()
    write_floor = start_gunicorn(
        "bench.write_floor_app:app", write_port, {**env, "BENCH_FLOOR_TENANT": seeded["tenant"]}
    )
    bearer = {"Authorization": f"Bearer {key}"}
    json_headers = {**bearer, "Content-Type": "application/json"}
    base = f"http://127.0.0.1:{app_port}"
    job_template = json.dumps(
        {
            "title": "Bench job",
            "industry": "tech",
            "state_name": "CA",
            "country": "US",
            "recruiter_name": "R",
            "recruiter_email": "r@example.com",
            "recruiter_work_phone_no": "+14155550100",
            "status": "open",
            "desc": "Benchmark job description",
            "source_id": "bench-%d-%d",
        }
    )
    load = (duration, shapes[0])
    try:
        results = (
            {}
            if args.target_only
            else {
                "bare GET": drive(
                    "bare GET", f"http://127.0.0.1:{bare_port}/", "GET", {}, None, *load
                ),
                "bare POST": drive(
                    "bare POST",
                    f"http://127.0.0.1:{bare_port}/",
                    "POST",
                    {"Content-Type": "application/json"},
                    job_template,
                    *load,
                ),
            }
        )
        scenarios = [
            (
                "GET /v1/jobs/:id",
                f"{base}/v1/jobs/{seeded['job_id']}",
                "GET",
                bearer,
                None,
                "bare GET",
            ),
            (
                "GET /v1/jobs?page=1&size=20",
                f"{base}/v1/jobs?page=1&size=20",
                "GET",
                bearer,
                None,
                "bare GET",
            ),
            ("POST /v1/jobs", f"{base}/v1/jobs", "POST", json_headers, job_template, "bare POST"),
        ]
        if "apps_job_source_id" in seeded:
            resume = base64.b64encode(b"%PDF-1.4\n" + os.urandom(100 * 1024 - 9)).decode()
            app_template = json.dumps(
                {
                    "candidate_source_id": "cand-%d-%d",
                    "job_source_id": seeded["apps_job_source_id"],
                    "source_application_status": "new",
                    "application_stage": "ACTIVE",
                    "base64file": resume,
                    "file_name": "resume.pdf",
                }
            )
            scenarios += [
                (
                    "POST /v1/applications (100 KiB resume)",
                    f"{base}/v1/applications",
                    "POST",
                    json_headers,
                    app_template,
                    "bare POST",
                ),
                (
                    "GET /v1/applications?page=1&size=50",
                    f"{base}/v1/applications?page=1&size=50",
                    "GET",
                    bearer,
                    None,
                    "bare GET",
                ),
            ]
        # The target pairs first (before writes dirty the database), interleaved: on a 2-core
        # machine a single run swings by tens of percent either way, so the median of paired ratios
        # is the figure. Within a round every shape runs its pair, and which side of a pair runs
        # first alternates from round to round.
        warm_ups = [(f"{base}/v1/jobs/{seeded['job_id']}", bearer)]
        if floor:
            warm_ups.append((f"http://127.0.0.1:{floor_port}/v1/jobs/{seeded['job_id']}", {}))
        # every server thread opens its database connection before CPU is counted
        for url, headers in warm_ups:
            drive("warm-up", url, "GET", headers, None, 1, shapes[0])
        app_pids = lambda: (  # noqa: E731
            worker_pids(hirekit) + (postgres_backend_pids(database_url) if postgres else [])
        )
        pairs: dict[Shape, list[tuple[float, float]]] = {shape: [] for shape in shapes}
        # CPU µs per request
        costs: dict[Shape, list[tuple[float, float]]] = {shape: [] for shape in shapes}
        # (req/s, CPU µs per request)
        floors: dict[Shape, list[tuple[float, float]]] = {shape: [] for shape in shapes}
        floor_pids = lambda: worker_pids(floor) + postgres_backend_pids(database_url)  # noqa: E731
        for round_no in range(args.pairs):
            for shape in shapes:
                runs = {
                    "bare": lambda: drive_counting_cpu(
                        lambda: worker_pids(bare),
                        "bare GET",
                        f"http://127.0.0.1:{bare_port}/",
                        "GET",
                        {},
                        None,
                        duration,
                        shape,
                    ),
                    "app": lambda: drive_counting_cpu(app_pids, *scenarios[0][:5], duration, shape),
                    "floor": lambda: drive_counting_cpu(
                        floor_pids,
                        "floor GET",
                        f"http://127.0.0.1:{floor_port}/v1/jobs/{seeded['job_id']}",
                        "GET",
                        {},
                        None,
                        duration,
                        shape,
                    ),
                }
                sides = ("bare", "app", "floor") if floor else ("bare", "app")
                measured = {
                    side: runs[side]() for side in (sides if round_no % 2 == 0 else reversed(sides))
                }
                if floor:
                    floors[shape].append((measured["floor"][0].rps, measured["floor"][1]))
                pairs[shape].append((measured["bare"][0].rps, measured["app"][0].rps))
                costs[shape].append((measured["bare"][1], measured["app"][1]))
        writes = write_pairs(
            args.write_pairs,
            shapes,
            duration,
            job_template,
            floor=(
                f"http://127.0.0.1:{write_port}/v1/jobs",
                lambda: (
                    worker_pids(write_floor)
                    + (postgres_backend_pids(database_url) if postgres else [])
                ),
            ),
            app=(f"{base}/v1/jobs", json_headers, app_pids),
        )
        rows = []
        for name, url, method, headers, body, baseline in [] if args.target_only else scenarios:
            result = drive(name, url, method, headers, body, *load)
            rows.append((result, results[baseline]))
    finally:
        stop(bare)
        stop(hirekit)
        stop(write_floor)
        if floor:
            stop(floor)

    tool = "wrk" if shutil.which("wrk") else "python load generator"
    # errors: non-2xx answers plus wrk's socket errors, which include requests slower than its 2 s
    # timeout
    backend = "PostgreSQL" if database_url.startswith("postgres") else "SQLite"
    if not args.target_only:
        print(
            f"\nREST throughput — gunicorn, 2 workers, {tool} {shapes[0].threads} threads x "
            f"{shapes[0].connections} "
            f"connections, {duration} s each, {backend}"
        )
        print(
            f"{'scenario':44} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>8} {'vs bare':>8}"
        )
        for name in ("bare GET", "bare POST"):
            r = results[name]
            print(
                f"{name:44} {r.rps:9.0f} {r.p50_ms:8.2f} {r.p99_ms:8.2f} {r.errors:8d} {'1.00':>8}"
            )
        for result, baseline in rows:
            print(
                f"{result.name:44} {result.rps:9.0f} {result.p50_ms:8.2f} {result.p99_ms:8.2f} "
                f"{result.errors:8d} {result.rps / baseline.rps:8.2f}"
            )
    if args.pairs:
        print(
            f"\nGET /v1/jobs/:id vs bare GET, {backend}, gunicorn 2 workers, {tool}, {duration} s "
            "per run, "
            f"{args.pairs} interleaved pairs per shape (req/s bare/app = ratio):"
        )
    met = True
    for shape, rates in pairs.items():
        if not rates:
            continue
        ratios = [app_rps / bare_rps for bare_rps, app_rps in rates]
        ratio = statistics.median(ratios)
        met &= ratio >= 0.5
        print(
            f"  {shape.threads} threads x {shape.connections} connections: "
            + ", ".join(
                f"{bare_rps:.0f}/{app_rps:.0f} = {r:.2f}"
                for (bare_rps, app_rps), r in zip(rates, ratios)
            )
        )
        print(
            f"  {str(shape):>5} median {ratio:.2f} (spread {min(ratios):.2f}-{max(ratios):.2f}), "
            "bare median "
            f"{statistics.median(b for b, _ in rates):.0f} req/s, app median "
            f"{statistics.median(a for _, a in rates):.0f} req/s"
        )
        if all(bare_cost and app_cost for bare_cost, app_cost in costs[shape]):
            cost_ratios = [bare_cost / app_cost for bare_cost, app_cost in costs[shape]]
            print(
                f"  {str(shape):>5} CPU per request: bare "
                f"{statistics.median(b for b, _ in costs[shape]):.0f} µs, app "
                f"{statistics.median(a for _, a in costs[shape]):.0f} µs"
                f"{' with PostgreSQL' if postgres else ''}; "
                f"bare/app {statistics.median(cost_ratios):.2f} (spread {min(cost_ratios):.2f}-"
                f"{max(cost_ratios):.2f})"
            )
        if floors[shape]:
            floor_ratios = [
                floor_rps / bare_rps for (bare_rps, _), (floor_rps, _) in zip(rates, floors[shape])
            ]
            print(
                f"  {str(shape):>5} floor (bench/floor_app.py: the one row read alone): median "
                f"{statistics.median(floor_ratios):.2f} of bare (spread {min(floor_ratios):.2f}-"
                f"{max(floor_ratios):.2f}), "
                f"{statistics.median(c for _, c in floors[shape]):.0f} µs CPU per request; Hirekit "
                "reaches "
                f"{statistics.median(a / f for (_, a), (f, _) in zip(rates, floors[shape])):.2f} "
                "of the floor's req/s"
            )
    if args.pairs:
        print(
            "target: GET /v1/jobs/:id >= 0.50 of bare Flask in every shape -> "
            f"{'met' if met else 'NOT met'}"
        )
    print_write_pairs(writes, backend, tool, duration)
    print(f"load average after the run: {load_average()}")
    shutil.rmtree(instance, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
