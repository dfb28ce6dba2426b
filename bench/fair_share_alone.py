"""A tenant alone on an idle server: 16 keep-alive connections of one tenant reading one job (GET
/v1/jobs/:id) under gunicorn as deployed (deploy/gunicorn.conf.py: the gthread worker, 4 threads;
--workers 2), with the tenant fair share on (HIREKIT_TENANT_MAX_IN_FLIGHT=0, the default cap of 2
per worker) and off (-1), in interleaved rounds.

Targets: no 429 with the fair share on, and its throughput at least 0.9 of the throughput with it
off (the median of the rounds' ratios). The other side of the fair share, another tenant's p99 while
one tenant floods, is bench/noisy_neighbour.py's. SQLite in a temporary directory; the load comes
from --processes client processes (16 connections in all), so the client's own GIL does not pace the
server.

    .venv/bin/python bench/fair_share_alone.py [--rounds 3] [--duration 8] [--strict]"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
import secrets
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    free_port,
    fresh_database,
    load_average,
    start_gunicorn,
    stop,
)

CONNECTIONS = 16


def read_for(
    port: int, path: str, headers: dict, connections: int, seconds: float, results
) -> None:
    """One client process: `connections` keep-alive connections, a thread each, counting
    statuses."""
    import threading

    statuses, lock = Counter(), threading.Lock()
    stop_at = time.monotonic() + seconds

    def connection() -> None:
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        seen = Counter()
        while time.monotonic() < stop_at:
            client.request("GET", path, headers=headers)
            response = client.getresponse()
            response.read()
            seen[response.status] += 1
        with lock:
            statuses.update(seen)

    threads = [threading.Thread(target=connection) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(dict(statuses))


def measure(
    port: int, path: str, headers: dict, seconds: float, processes: int
) -> tuple[float, Counter]:
    results = multiprocessing.Queue()
    per_process = CONNECTIONS // processes
    workers = [
        multiprocessing.Process(
            target=read_for, args=(port, path, headers, per_process, seconds, results)
        )
        for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    statuses = Counter()
    for _ in workers:
        statuses.update(results.get())
    for worker in workers:
        worker.join()
    return sum(statuses.values()) / seconds, statuses


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument(
        "--processes", type=int, default=4, help="client processes sharing the 16 connections"
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()

    os.environ.setdefault(
        "HIREKIT_SECRET_KEY", secrets.token_urlsafe(48)
    )  # the app and the servers it starts need one
    instance = Path(tempfile.mkdtemp(prefix="hirekit-fair-share-"))
    database_url = f"sqlite:///{instance}/bench.sqlite3"
    app, _, key = fresh_database(database_url, instance)
    headers = {"Authorization": f"Bearer {key}"}
    from tests.factories import job_body

    job_id = (
        app.test_client()
        .post("/v1/jobs", json=job_body(source_id="alone"), headers=headers)
        .json["id"]
    )
    path = f"/v1/jobs/{job_id}"
    base_env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": database_url,
        "HIREKIT_INSTANCE_DIR": str(instance),
        "HIREKIT_LOG_LEVEL": "WARNING",
        "HIREKIT_ACCESS_LOG": "",
        "HIREKIT_WEB_THREADS": "4",
        "HIREKIT_RATE_LIMIT": "100000000/minute",
    }
    print(
        f"load average at start: {load_average()}; {CONNECTIONS} connections, "
        f"{args.rounds} rounds of "
        f"{args.duration:g} s per side, SQLite"
    )
    ratios, refused = [], Counter()
    for round_number in range(1, args.rounds + 1):
        rates = {}
        for label, cap in (("cap on", "0"), ("cap off", "-1")):
            port = free_port()
            server = start_gunicorn(
                "wsgi:app",
                port,
                {**base_env, "HIREKIT_TENANT_MAX_IN_FLIGHT": cap},
                settle_seconds=1.0,
            )
            try:
                measure(port, path, headers, 1.0, args.processes)  # warm both workers
                rates[label], statuses = measure(port, path, headers, args.duration, args.processes)
            finally:
                stop(server)
            refused[label] += statuses.get(429, 0)
            print(
                f"round {round_number} {label}: {rates[label]:,.0f} req/s, "
                f"statuses {dict(statuses)}"
            )
        ratios.append(rates["cap on"] / rates["cap off"])
    ratio = statistics.median(ratios)
    no_429 = refused["cap on"] == 0
    print(f"\n429s with the cap on: {refused['cap on']} (target 0): {'PASS' if no_429 else 'MISS'}")
    print(
        f"throughput cap on / cap off: {ratio:.2f} "
        f"(rounds {', '.join(f'{r:.2f}' for r in ratios)}; target >= 0.90): "
        f"{'PASS' if ratio >= 0.9 else 'MISS'}"
    )
    return 1 if args.strict and (not no_429 or ratio < 0.9) else 0


if __name__ == "__main__":
    sys.exit(main())
