"""What every bench script shares: free ports, gunicorn as deployed (start and stop), HTTP timing,
the figures printed from timings (percentiles, load average), and what a process uses (CPU seconds,
memory from /proc).

gunicorn runs with deploy/gunicorn.conf.py and 2 workers unless told otherwise, in a session of its
own, so stop() ends the arbiter and its workers together.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import orjson
import requests

ROOT = Path(__file__).resolve().parent.parent
GUNICORN_CONF = ROOT / "deploy" / "gunicorn.conf.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(
    module: str,
    port: int,
    env: dict,
    *,
    workers: int = 2,
    ready_path: str = "/healthz",
    settle_seconds: float = 0.0,
    timeout: float = 60.0,
) -> subprocess.Popen:
    """gunicorn serving `module` (wsgi:app, bench.bare_app:app) with deploy/gunicorn.conf.py on
    127.0.0.1:port; returns once `ready_path` answers, then waits `settle_seconds` (the second
    worker may still be booting)."""
    # not a pipe: nobody reads it while the server runs, and a full pipe would block it
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            str(GUNICORN_CONF),
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            module,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            requests.get(f"http://127.0.0.1:{port}{ready_path}", timeout=2)
            time.sleep(settle_seconds)
            return process
        except requests.RequestException:
            time.sleep(0.3)
    stop(process)
    log.seek(0)
    raise RuntimeError(
        f"gunicorn {module} did not start: {log.read().decode(errors='replace')[-2000:]}"
    )


def stop(process: subprocess.Popen) -> None:
    """End gunicorn's arbiter and workers (its own session) and wait for them."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


class KeepAliveClient:
    """One keep-alive HTTP/1.1 connection (http.client) answering parsed JSON: timings measure the
    service (gunicorn, Flask, the route) rather than a client library; requests adds about 0.9 ms
    per call on this machine."""

    def __init__(self, base: str, headers: dict | None = None):
        host, port = base.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=120)
        self.headers = {"Content-Type": "application/json", **(headers or {})}

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        payload = orjson.dumps(body) if body is not None else None
        try:
            self.connection.request(method, path, body=payload, headers=self.headers)
            response = self.connection.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # the server closed the idle connection (its keep-alive timeout passed while the bench
            # worked in-process)
            self.connection.close()
            self.connection.connect()
            self.connection.request(method, path, body=payload, headers=self.headers)
            response = self.connection.getresponse()
        payload = response.read()
        if response.status >= 400:
            raise RuntimeError(f"{method} {path} answered {response.status}: {payload[:300]!r}")
        return orjson.loads(payload)


def time_calls(call: Callable[[], object], repeats: int, warmup: int = 1) -> list[float]:
    """Milliseconds of `repeats` calls of `call`, after `warmup` untimed ones (the first warms the
    worker's caches)."""
    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def median_ms(call: Callable[[], object], repeats: int, warmup: int = 1) -> float:
    return statistics.median(time_calls(call, repeats, warmup))


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0-100) of the values, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    """pid -> user + system CPU seconds the process has used (Linux /proc; a process gone, or no
    /proc, is left out)."""
    used = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used[pid] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return used


def machine_cpu_ticks() -> tuple[int, int]:
    """(busy, total) clock ticks of every core since boot (Linux /proc/stat; (0, 0) without it):
    two readings' difference says how busy the whole machine was between them."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(value) for value in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and iowait
    return sum(fields) - idle, sum(fields)


def busy_share(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of all cores' time that was busy between two machine_cpu_ticks() readings."""
    busy, total = after[0] - before[0], after[1] - before[1]
    return busy / total if total else 0.0


def status_kib(pid: int, name: str = "VmRSS") -> int:
    """A size line of /proc/<pid>/status in KiB (VmRSS: resident memory; RssAnon: its anonymous
    part); 0 when the process is gone or there is no /proc."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(f"{name}:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def worker_pids(server: subprocess.Popen) -> list[int]:
    """The pids of a gunicorn arbiter's workers (Linux /proc; empty elsewhere)."""
    try:
        with open(f"/proc/{server.pid}/task/{server.pid}/children") as children:
            return [int(pid) for pid in children.read().split()]
    except OSError:
        return []


def postgres_backend_pids(database_url: str) -> list[int]:
    """The pids of the PostgreSQL server processes serving connections to this URL's database (a
    local server)."""
    import psycopg2

    with psycopg2.connect(database_url) as connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> "
            "pg_backend_pid()"
        )
        pids = [row[0] for row in cursor.fetchall()]
    connection.close()
    return pids


def fresh_app(database_url: str, instance: Path, **config):
    """An app over a freshly migrated database (PostgreSQL's public schema dropped and rebuilt; a
    SQLite file is new), with files under `instance` and quiet logs: what a bench seeds its data
    through."""
    from app import create_app

    app = create_app(
        {
            "DATABASE_URL": database_url,
            "INSTANCE_DIR": str(instance),
            "RESUME_DIR": str(instance / "resumes"),
            "LOG_LEVEL": "WARNING",
            **config,
        }
    )
    migrate_clean(app, database_url)
    return app


def fresh_database(database_url: str, instance: Path):
    """An app on a migrated database (on PostgreSQL a clean schema: earlier runs' rows must not
    weigh on this one) and a new tenant: (app, tenant id, its API key)."""
    import uuid

    os.environ.update(
        {
            "HIREKIT_DATABASE_URL": database_url,
            "HIREKIT_INSTANCE_DIR": str(instance),
            "HIREKIT_LOG_LEVEL": "WARNING",
        }
    )
    from app.data.db import database
    from app.data.tenancy import create_tenant

    app = fresh_app(database_url, instance)
    tenant_id = f"bench-{uuid.uuid4().hex[:8]}"
    with app.app_context(), database.connection_context():
        _, key = create_tenant(tenant_id)
    return app, tenant_id, key


def migrate_clean(app, database_url: str) -> None:
    """Migrate the app's database, on PostgreSQL from a clean schema (public dropped and
    rebuilt)."""
    from app.cli import upgrade_database
    from app.data.db import database

    with app.app_context():
        if database_url.startswith("postgres"):
            with database.connection_context():
                database.execute_sql("DROP SCHEMA IF EXISTS public CASCADE")
                database.execute_sql("CREATE SCHEMA public")
        upgrade_database()
