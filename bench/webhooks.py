"""Webhook delivery throughput and latency: events through Redis and one worker process to a local
receiver.

Phase 1 (throughput): N events are emitted while no worker runs, then one worker drains the backlog;
deliveries/s = receipts / (last receipt - first receipt). Phase 2 (latency): the worker runs while N
events are emitted at a steady --rate (default 200/s, under the worker's capacity: at a higher rate
than a worker drains, the latency only measures how long the queue has grown); p50/p99 from emit to
receipt. Baseline: a plain requests.post loop in one process to the same receiver.

    .venv/bin/python bench/webhooks.py --redis-url redis://127.0.0.1:6379/13
                                       [--database-url postgresql://...] [--quick]

The worker is RQ's SimpleWorker (worker.py's default): it runs jobs in its own process. RQ's forking
Worker pays a fork per job (several ms); SimpleWorker keeps the HTTP keep-alive session and the
database pool warm across jobs. Even so, one RQ job costs ~60 Redis commands, more than the HTTP
request: a job drains every due delivery of a webhook (plugins/webhooks/drain.py), woken through a
per-webhook mailbox and doorbell (plugins/webhooks/wakeups.py). The machine's load average is
printed: on a shared machine, take figures when it is low.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests
import secrets
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import load_average, percentile  # noqa: E402 - after the path insert


class Receiver:
    """A threaded keep-alive HTTP/1.1 server on 127.0.0.1 that records when each webhook-id first
    arrived."""

    def __init__(self):
        self.received: dict[str, float] = {}
        self.count = 0
        lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with lock:
                    receiver.received.setdefault(
                        self.headers.get("webhook-id") or str(receiver.count), time.time()
                    )
                    receiver.count += 1
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, n: int, timeout: float) -> bool:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if len(self.received) >= n:
                return True
            time.sleep(0.02)
        return False


def baseline(url: str, n: int) -> float:
    body = b'{"id": "x", "status": "completed"}'
    started = time.perf_counter()
    for _ in range(n):
        requests.post(url, data=body, headers={"Content-Type": "application/json"}, timeout=10)
    return n / (time.perf_counter() - started)


def start_worker(env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "worker.py", "webhooks"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="300 events per phase")
    parser.add_argument(
        "--rate", type=float, default=200.0, help="events/s emitted in the latency phase"
    )
    parser.add_argument("--redis-url", default=os.environ.get("HIREKIT_BENCH_REDIS_URL", ""))
    parser.add_argument("--database-url", default=os.environ.get("HIREKIT_BENCH_DATABASE_URL", ""))
    args = parser.parse_args()
    # the app and the servers it starts need one
    os.environ.setdefault("HIREKIT_SECRET_KEY", secrets.token_urlsafe(48))
    if not args.redis_url:
        parser.error(
            "--redis-url (or HIREKIT_BENCH_REDIS_URL) is required; the Redis db is flushed"
        )
    n = 300 if args.quick else args.n
    database_url = args.database_url or f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"

    from redis import Redis

    from app import create_app
    from app.data import events
    from app.cli import upgrade_database
    from app.data.db import database
    from app.data.tenancy import create_tenant
    from plugins.calls.lifecycle import CALL_ACTIVITY
    from plugins.webhooks.services import save_webhook

    load_before = load_average()
    Redis.from_url(args.redis_url).flushdb()
    config = {
        "DATABASE_URL": database_url,
        "REDIS_URL": args.redis_url,
        "WEBHOOK_ALLOW_PRIVATE": True,
        "LOG_LEVEL": "WARNING",
        "WEBHOOK_REAPER_INTERVAL": 0,
    }
    app = create_app(config)
    receiver = Receiver()
    with app.app_context(), database.connection_context():
        upgrade_database()
        tenant_id = f"bench-{int(time.time())}"
        create_tenant(tenant_id)
        save_webhook(
            tenant_id,
            {
                "tenant_id": tenant_id,
                "triggered_event": CALL_ACTIVITY,
                "type": "post_call_screening",
                "fields": ["id", "status", "candidate_id", "job_id"],
                "url": receiver.url,
                "http_method": "POST",
                "content_type": "application/json",
                "secret": None,
                "is_active": True,
            },
        )

    ceiling = baseline(receiver.url, n)
    receiver.received.clear()

    env = {**os.environ, **{f"HIREKIT_{k}": str(v) for k, v in config.items()}}

    def emit_batch(label: str, rate: float | None = None) -> dict[str, float]:
        """Emit n events, as fast as possible or paced at `rate` per second; event id -> when emit()
        was called."""
        emitted = {}
        started = time.perf_counter()
        with app.app_context(), database.connection_context():
            for i in range(n):
                if rate:
                    wait = started + i / rate - time.perf_counter()
                    if wait > 0:
                        time.sleep(wait)
                at = time.time()
                record = {
                    "id": f"{label}-{i}",
                    "status": "completed",
                    "candidate_id": "c",
                    "job_id": "j",
                }
                event = events.emit(tenant_id, CALL_ACTIVITY, record)
                emitted[str(event.event_id)] = at
        return emitted

    # Phase 1: backlog drained by one worker
    emit_batch("backlog")
    worker = start_worker(env)
    try:
        if not receiver.wait_for(n, timeout=max(120, n / 10)):
            print(f"only {len(receiver.received)} of {n} deliveries arrived", file=sys.stderr)
            return 1
        times = sorted(receiver.received.values())
        throughput = (len(times) - 1) / (times[-1] - times[0])

        # Phase 2: live latency with the worker running
        receiver.received.clear()
        live_started = time.perf_counter()
        emitted = emit_batch("live", args.rate)
        offered = n / (time.perf_counter() - live_started)
        if not receiver.wait_for(n, timeout=max(120, n / 10)):
            print(f"only {len(receiver.received)} of {n} live deliveries arrived", file=sys.stderr)
            return 1
        latencies = [(receiver.received[event_id] - at) * 1000 for event_id, at in emitted.items()]
    finally:
        worker.terminate()
        worker.wait(10)

    backend = database_url.split(":", 1)[0]
    print(
        f"webhook delivery, {n} events, one SimpleWorker process, {backend} + Redis, "
        f"load average {load_before} before, {load_average()} after"
    )
    print(f"  ceiling (plain requests.post loop, one process): {ceiling:8.0f} requests/s")
    print(
        f"  worker deliveries/s (backlog drained):           {throughput:8.0f} /s   ratio to "
        f"ceiling {throughput / ceiling:.2f}"
        f"   target >= 300/s: {'ok' if throughput >= 300 else 'MISSED'}"
    )
    print(
        f"  emit -> receipt latency (live, {offered:.0f} events/s):  p50 "
        f"{statistics.median(latencies):6.1f} ms   p99 {percentile(latencies, 99):6.1f} ms"
        f"   target p50 < 100 ms: {'ok' if statistics.median(latencies) < 100 else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
