"""The client host's side of the scale-out drill: steady mixed load through nginx, every attempt
recorded, writes retried with the same Idempotency-Key until they land; and the webhook receiver,
which logs every delivery it gets.

Threads here move themselves into the client host's namespace before opening a socket
(tests/drills/netns.py).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

from tests.drills.netns import Host

# 409 here is "the same key is still running" (the record's own 409 says existing_id)
RETRYABLE_STATUSES = {409, 429, 502, 503, 504}
WRITE_DEADLINE_SECONDS = 45.0  # a write still not landed after this is lost, and the drill fails


@dataclass
class Attempt:
    """One HTTP exchange (or its failure) as the client saw it."""

    op: str
    started: float
    ended: float
    status: int | None  # None: no answer (connection reset, timeout)
    upstream: str  # the app host nginx used, from X-Drill-Upstream ("" when none answered)
    error: str = ""

    @property
    def failed(self) -> bool:
        return self.status is None or self.status >= 500


@dataclass
class Write:
    """A write the client owes: its key, the record's source_id, and how it ended."""

    op: str
    key: str
    source_id: str
    attempts: int = 0
    landed: bool = False
    replayed: bool = False
    answered_existing: bool = False
    record_id: str = ""
    seconds_to_land: float | None = None


@dataclass
class LoadLog:
    attempts: list[Attempt] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, attempt: Attempt) -> None:
        with self.lock:
            self.attempts.append(attempt)

    def between(self, start: float, end: float) -> list[Attempt]:
        with self.lock:
            return [a for a in self.attempts if start <= a.started < end]


PERSON_QUERIES = (
    {"query": {"match": {"job_title": "software engineer"}}, "size": 10},
    {"query": {"bool": {"filter": [{"term": {"location_country": "united states"}}]}}, "size": 5},
    {"query": {"range": {"inferred_years_experience": {"gte": 5, "lte": 10}}}, "size": 10},
)


class LoadClient:
    """`threads` client threads on the client host, each sending `rate_per_thread` operations a
    second through nginx in a fixed mix (a read, a job create, a person search, a read, a candidate
    + application create: the last two produce webhook events), until `stop()`."""

    MIX = ("read", "job", "search", "read", "application")

    def __init__(
        self,
        host: Host,
        base_url: str,
        tenant,
        *,
        threads: int = 4,
        rate_per_thread: float = 5.0,
        run_id: str = "",
    ):
        self.host, self.base_url, self.tenant = host, base_url, tenant
        self.threads, self.interval = threads, 1.0 / rate_per_thread
        self.run_id = run_id or uuid.uuid4().hex[:8]
        self.log = LoadLog()
        self._stop = threading.Event()
        self._counter = itertools.count(1)
        self._workers: list[threading.Thread] = []
        self.read_job_id: str | None = None
        self.job_source_id = f"{self.run_id}-job-0"

    def start(self) -> None:
        with self.host.entered(), requests.Session() as session:
            created = self._write(
                session, "job", "/v1/jobs", self._job_body(self.job_source_id), self.job_source_id
            )
            if not created.landed:
                raise RuntimeError("the load's first job could not be created")
            self.read_job_id = created.record_id
        for number in range(self.threads):
            thread = threading.Thread(target=self._run, name=f"drill-load-{number}", daemon=True)
            thread.start()
            self._workers.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._workers:
            thread.join(timeout=WRITE_DEADLINE_SECONDS + 15)

    def _run(self) -> None:
        self.host.enter_for_good()
        session = requests.Session()
        ops = itertools.cycle(self.MIX)
        next_at = time.monotonic()
        while not self._stop.is_set():
            op = next(ops)
            if op == "read":
                self._send(session, "read", "GET", f"/v1/jobs/{self.read_job_id}")
            elif op == "search":
                query = PERSON_QUERIES[next(self._counter) % len(PERSON_QUERIES)]
                self._send(session, "search", "POST", "/v2/person/search", json=query, person=True)
            elif op == "job":
                source_id = f"{self.run_id}-job-{next(self._counter)}"
                self._write(session, "job", "/v1/jobs", self._job_body(source_id), source_id)
            else:
                number = next(self._counter)
                candidate = f"{self.run_id}-cand-{number}"
                self._write(
                    session,
                    "candidate",
                    "/v1/candidates",
                    self._candidate_body(candidate, number),
                    candidate,
                )
                self._write(
                    session,
                    "application",
                    "/v1/applications",
                    {
                        "candidate_source_id": candidate,
                        "job_source_id": self.job_source_id,
                        "source_application_status": "applied",
                        "application_stage": "ACTIVE",
                    },
                    candidate,
                )
            next_at += self.interval
            time.sleep(max(0.0, next_at - time.monotonic()))
            # a slow spell is not made up by a burst
            next_at = max(next_at, time.monotonic() - self.interval)

    def _send(
        self, session, op: str, method: str, path: str, *, json=None, headers=None, person=False
    ):
        started = time.monotonic()
        auth = self.tenant.person_headers if person else self.tenant.headers
        try:
            response = session.request(
                method,
                f"{self.base_url}{path}",
                json=json,
                headers={**auth, **(headers or {})},
                timeout=30,
            )
        except requests.RequestException as exc:
            self.log.add(Attempt(op, started, time.monotonic(), None, "", type(exc).__name__))
            session.close()  # a broken keep-alive connection is not reused
            return None
        self.log.add(
            Attempt(
                op,
                started,
                time.monotonic(),
                response.status_code,
                response.headers.get("X-Drill-Upstream", ""),
                "" if response.status_code < 400 else response.text[:200],
            )
        )
        return response

    def _write(self, session, op: str, path: str, body: dict, source_id: str) -> Write:
        """POST with one Idempotency-Key, again with the same key after a failure, until it lands or
        the deadline."""
        write = Write(op, f"{self.run_id}-{op}-{source_id}", source_id)
        with self.log.lock:
            self.log.writes.append(write)
        first_sent = time.monotonic()
        deadline = first_sent + WRITE_DEADLINE_SECONDS
        while time.monotonic() < deadline:
            write.attempts += 1
            response = self._send(
                session, op, "POST", path, json=body, headers={"Idempotency-Key": write.key}
            )
            if response is not None and response.status_code in (200, 201):
                write.landed, write.replayed = (
                    True,
                    response.headers.get("Idempotent-Replayed") == "true",
                )
                write.record_id = response.json().get("id", "")
                write.seconds_to_land = time.monotonic() - first_sent
                return write
            if (
                response is not None
                and response.status_code == 409
                and "existing_id" in response.text
            ):
                # an earlier attempt committed but never answered
                write.landed = write.answered_existing = True
                write.seconds_to_land = time.monotonic() - first_sent
                return write
            if response is not None and response.status_code not in RETRYABLE_STATUSES:
                return write  # refused for good: the drill reports it
            time.sleep(0.2 if response is None or response.status_code != 409 else 1.0)
        return write

    @staticmethod
    def _job_body(source_id: str) -> dict:
        return {
            "title": "Registered Nurse",
            "industry": "healthcare",
            "state_name": "California",
            "country": "US",
            "city": "San Francisco",
            "recruiter_name": "Rita Recruiter",
            "recruiter_email": "rita@example.com",
            "recruiter_work_phone_no": "+14155550100",
            "status": "open",
            "desc": "ICU experience, BLS.",
            "source_id": source_id,
        }

    @staticmethod
    def _candidate_body(source_id: str, number: int) -> dict:
        return {
            "first_name": "Jane",
            "last_name": f"Doe {number}",
            "email": f"jane.doe{number}@example.com",
            "phone_no": "+1 415 555 2671",
            "city": "Oakland",
            "state_name": "California",
            "country": "US",
            "source": "referral",
            "source_id": source_id,
        }


class QuietServer(ThreadingHTTPServer):
    """A sender killed mid-request resets its connection: expected in the drill, not worth a
    traceback."""

    def handle_error(self, request, client_address):
        pass


@dataclass
class Receipt:
    event_id: str
    at: float
    answered: int


class WebhookReceiver:
    """An HTTP server on the client host that logs every delivery (webhook-id, when, what it
    answered). Each answer takes `delay` seconds, so deliveries are in flight when a worker host
    dies; while `refusing`, the first delivery of one event in `refuse_one_in` is answered 503, so
    its retry has to come from RQ's scheduler."""

    def __init__(self, host: Host, port: int, *, delay: float = 0.1, refuse_one_in: int = 4):
        self.delay, self.refuse_one_in = delay, refuse_one_in
        self.refusing = False
        self.receipts: list[Receipt] = []
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                time.sleep(receiver.delay)
                status = receiver.answer(self.headers.get("webhook-id", ""))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        with host.entered():
            self.server = QuietServer((host.address, port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, event_id: str) -> int:
        with self._lock:
            first = event_id not in self._seen
            self._seen.add(event_id)
            refuse = (
                self.refusing
                and first
                and int(hashlib.sha256(event_id.encode()).hexdigest(), 16) % self.refuse_one_in == 0
            )
            self.receipts.append(Receipt(event_id, time.monotonic(), 503 if refuse else 200))
            return 503 if refuse else 200

    def snapshot(self) -> list[Receipt]:
        with self._lock:
            return list(self.receipts)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
