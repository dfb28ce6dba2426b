"""Tombstones in sync walks: what the erasures' tombstones cost a cursor walk of /v1/candidates and
/v1/applications.

The same requests against the same data under two servers: the baseline without the privacy family
(its lists read no tombstones, as before erasure existed) and the server with it (each cursor page
also reads the list's tombstones past its position, one indexed query). Both servers run at once and
are timed in alternation; printed as ratios with / without for each database (SQLite and PostgreSQL)
and two load shapes (one keep-alive connection, --clients at once), each server gunicorn with 2
workers.

    python bench/tombstone_walks.py [--candidates 2000] [--erased 500] [--repeats 5] [--rounds 4]
                                    [--clients 4]

PostgreSQL is HIREKIT_BENCH_DATABASE_URL (default
postgresql://postgres@127.0.0.1:5432/bench_tombstones, created when missing); its public schema is
dropped and rebuilt.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import fresh_app, free_port, load_average, start_gunicorn, stop, time_calls  # noqa: E402 - after the path insert
from bench.list_scaling import ensure_database  # noqa: E402

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/bench_tombstones"
TARGET_RATIO = 1.25  # a cursor page with tombstones: within 25% of the same page without


def seed(url: str, candidates: int, erased: int, instance: Path) -> dict:
    """One tenant with `candidates` candidates, each with an application to one job; the first
    `erased` erased."""
    from app.data.db import database
    from app.data.tenancy import create_tenant
    from tests.factories import candidate_body, job_body

    app = fresh_app(url, instance, RATE_LIMIT="1000000/minute", TENANT_MAX_IN_FLIGHT=-1)
    with app.app_context(), database.connection_context():
        _, key = create_tenant("walks")
    client = app.test_client()
    headers = {"Authorization": f"Bearer {key}"}
    job = client.post("/v1/jobs", json=job_body(source_id="walk-job"), headers=headers).json
    ids = []
    for n in range(candidates):
        candidate = client.post(
            "/v1/candidates", json=candidate_body(source_id=f"walk-{n}"), headers=headers
        ).json
        client.post(
            "/v1/applications",
            headers=headers,
            json={
                "candidate_source_id": candidate["source_id"],
                "job_source_id": job["source_id"],
                "source_application_status": "applied",
                "application_stage": "PASSIVE",
            },
        )
        ids.append(candidate["id"])
    for candidate_id in ids[:erased]:
        assert client.delete(f"/v1/candidates/{candidate_id}", headers=headers).status_code == 204
    print(
        f"  {url.split(':')[0]}: {candidates:,} candidates and applications, {erased:,} erased",
        flush=True,
    )
    return {"key": key}


def checked_get(session: requests.Session, url: str) -> None:
    response = session.get(url, timeout=120)
    assert response.status_code == 200, (url, response.status_code, response.text[:300])


def paths_to_time(session: requests.Session, base: str) -> dict[str, str]:
    """name -> path of the cursor pages to time: the first, and one deep in the walk (past the
    tombstones)."""
    paths = {}
    for family in ("candidates", "applications"):
        paths[f"{family}: cursor, first page"] = f"/v1/{family}?cursor=&size=20"
        body, cursor = None, ""
        for _ in range(30):
            body = session.get(f"{base}/v1/{family}?cursor={cursor}&size=20", timeout=60).json()
            cursor = body.get("next_cursor") or cursor
        paths[f"{family}: cursor, deep page"] = f"/v1/{family}?cursor={cursor}&size=20"
    return paths


def start(url: str, instance: Path, plugins: str) -> tuple[object, str]:
    port = free_port()
    env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": url,
        "HIREKIT_INSTANCE_DIR": str(instance),
        "HIREKIT_LOG_LEVEL": "WARNING",
        "HIREKIT_RATE_LIMIT": "1000000/minute",
        "HIREKIT_TENANT_MAX_IN_FLIGHT": "-1",
        "HIREKIT_REDIS_URL": "",
        "HIREKIT_PLUGINS": plugins,
    }
    return start_gunicorn("wsgi:app", port, env), f"http://127.0.0.1:{port}"


def measure(
    url: str,
    seeded: dict,
    instance: Path,
    plugins: dict[str, str],
    repeats: int,
    rounds: int,
    clients: int,
) -> dict:
    """{(request, shape, server): median ms}: both servers run at once and are timed in alternation,
    `rounds` times `repeats` requests each, so a change in the machine's load weighs on both
    alike."""
    servers = {name: start(url, instance, chosen) for name, chosen in plugins.items()}
    try:
        headers = {"Authorization": f"Bearer {seeded['key']}"}
        with requests.Session() as session:
            session.headers.update(headers)
            paths = paths_to_time(session, servers["without"][1])
        timings: dict = {}
        for _ in range(rounds):
            for name, path in paths.items():
                for shape in (1, clients):
                    for server, (_, base) in servers.items():
                        timings.setdefault((name, shape, server), []).extend(
                            latencies(headers, f"{base}{path}", repeats, shape)
                        )
        return {key: statistics.median(values) for key, values in timings.items()}
    finally:
        for process, _ in servers.values():
            stop(process)


def latencies(headers: dict, url: str, repeats: int, clients: int) -> list[float]:
    """`repeats` request latencies from each of `clients` keep-alive connections sending at once."""

    def one_client(_) -> list[float]:
        with requests.Session() as session:
            session.headers.update(headers)
            return time_calls(lambda: checked_get(session, url), repeats)

    with ThreadPoolExecutor(clients) as pool:
        return [timing for timings in pool.map(one_client, range(clients)) for timing in timings]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--candidates", type=int, default=2_000)
    parser.add_argument("--erased", type=int, default=500)
    parser.add_argument(
        "--repeats", type=int, default=5, help="requests per connection in each round"
    )
    parser.add_argument(
        "--rounds", type=int, default=4, help="alternations between the two servers"
    )
    parser.add_argument(
        "--clients", type=int, default=4, help="the second load shape: connections sending at once"
    )
    args = parser.parse_args()
    os.environ.setdefault("HIREKIT_SECRET_KEY", os.urandom(32).hex())
    from app.plugins import available

    everything = ",".join(available())
    baseline = ",".join(name for name in available() if name != "privacy")
    postgres = os.environ.get("HIREKIT_BENCH_DATABASE_URL", DEFAULT_URL)
    ensure_database(postgres)
    failed = 0
    print(f"load average before: {load_average()}")
    for label in ("sqlite", "postgresql"):
        instance = Path(tempfile.mkdtemp(prefix="bench-tombstones-"))
        url = f"sqlite:///{instance / 'walks.sqlite3'}" if label == "sqlite" else postgres
        seeded = seed(url, args.candidates, args.erased, instance)
        figures = measure(
            url,
            seeded,
            instance,
            {"without": baseline, "with": everything},
            args.repeats,
            args.rounds,
            args.clients,
        )
        print(
            f"\n{label}: median ms over {args.rounds} alternating rounds of {args.repeats} "
            "requests per connection "
            "(each server gunicorn, 2 workers)"
        )
        print(f"{'request':<36} {'conns':>5} {'without':>9} {'with':>9} {'ratio':>6}  target")
        for name, shape, server in figures:
            if server != "without":
                continue
            before, after = figures[name, shape, "without"], figures[name, shape, "with"]
            ok = after / before <= TARGET_RATIO
            failed += not ok
            print(
                f"{name:<36} {shape:>5} {before:>9.2f} {after:>9.2f} {after / before:>6.2f}  "
                f"<= {TARGET_RATIO} {'met' if ok else 'NOT MET'}"
            )
    print(f"\nload average after: {load_average()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
