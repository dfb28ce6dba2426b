"""Noisy neighbour: while tenant A sends the heaviest requests its limits allow, how much slower
tenant B's GET by id gets, whether B sees an error, and how far each gunicorn worker's memory grows;
on SQLite and on PostgreSQL.

Per database, gunicorn as deployed (deploy/gunicorn.conf.py: the gthread worker, its 4 threads;
--workers 2 as the other benches use), the embedded person index built from the sample dataset (the
10,000 profiles, seed 1, that `make run` loads; cached in bench/.cache/), the rate limits as
configured (RATE_LIMIT, PERSON_RATE_LIMIT): counted in each worker's memory on SQLite, as `make run`
serves, and in Redis on PostgreSQL, as production does.

1. Idle: tenant B's GET /v1/jobs/:id from --b-connections keep-alive connections paced at --b-rate
   requests/s in all, for --idle seconds: p50, p99, errors. Then each worker's RSS (VmRSS in
   /proc/<pid>/status). Before it, a warm-up: light requests of A's kinds (from B) and 2 s of
   probing, so first-use costs are in the idle figures.
2. Load, --duration seconds: the same probe of B while tenant A, from --a-connections connections
   (the --kinds in turn, all four by default), sends as fast as its answers come:
   - person: POST /v2/person/search, the largest query the app accepts: match clauses of the longest
     text with the most tokens (the dataset's most frequent words), wildcard clauses of the longest
     patterns with the most `*`, as many wildcard clauses as are accepted, then as many match
     clauses beside them, size 100;
   - mcp: POST /mcp/sourcing, a JSON-RPC batch (protocol 2025-03-26) of people_search calls
     (match_all, size 100) at the batch cap;
   - resume: POST /v1/candidates, multipart, a PDF of exactly MAX_RESUME_BYTES (a new file and
     source_id each time);
   - webhook: POST /v1/tenant-webhook/:id/test to a loopback receiver that answers its headers at
     once and then one byte of body every --trickle-seconds.
   A connection answered 429 waits its Retry-After (at most 1 s) and sends again: A stays within
   its limits. At the end of the load, each worker's RSS again. Tenant A runs in a process of its
   own, so B's timings share no GIL with it.
3. Printed per database: B's idle and loaded p99 and their ratio (target <= 5x), B's errors under
   load (target 0), the largest worker RSS end/idle ratio (target <= 1.5x; a worker replaced during
   the load is a miss), A's statuses per kind, and PASS/MISS per target. --strict exits 1 on a miss.

The bounds are read from the app at run time, so the bench follows them as they change: each cap
comes from its flag when given, else from the constant of the running code that defines it
(CAP_SOURCES; MAX_RESUME_BYTES from the app's config), else from the flag's fallback (the sizes that
were once unbounded). The request shapes are then fitted in-process against the app (the same
configuration, with a 50-profile index so accepted probes cost little and rate limits off): each
dimension is lowered by bisection to the largest value the app accepts (a 4xx or a 500 refuses),
then the clause count and the batch length to what is accepted together, so a shape is never refused
for a bound the bench did not know.

Tenant B gets a rate limit of its own (1,000,000/minute): it is the probe, not a tenant at its
limits. It keeps within its requests-in-progress cap (app.security.fair_share) as any tenant inside
its limits does: two connections by default, so even both on one worker never exceed half its
threads (four connections could put three in one worker while A's requests slowed them, and a third
is a 429 by design).

    .venv/bin/python bench/noisy_neighbour.py [--database both|sqlite|postgresql] [--duration 25]
                                              [--idle 10] [--strict]

PostgreSQL: --database-url, default HIREKIT_BENCH_DATABASE_URL (its public schema is dropped and
rebuilt: give the bench a database of its own); Redis: --redis-url, default HIREKIT_BENCH_REDIS_URL
(counters under a fresh key prefix, nothing flushed). --database both (the default) needs both;
without them, --database sqlite. All traffic stays on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import http.client
import importlib
import itertools
import multiprocessing
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from bench.harness import (  # noqa: E402
    free_port,
    load_average,
    migrate_clean,
    percentile,
    start_gunicorn,
    status_kib,
    worker_pids,
)

PROFILES, SEED = 10_000, 1  # the sample `make run` loads (plugins/person/demo.py)
TARGET_P99_RATIO = 5.0
TARGET_RSS_RATIO = 1.5
B_RATE_LIMIT = "1000000/minute"
KINDS = ("person", "mcp", "resume", "webhook")
MATCH_FIELDS = ("summary", "job_title", "experience.title.name")
PATTERN_FIELDS = ("experience.company.name", "job_company_name", "skills", "last_name")
PATTERN_LETTERS = "aeinorst"
WORD = re.compile(r"[^\W_]+")  # what the person analyzer takes for a token (before it lowercases)
# replaced by a 16-digit request number in the small parts of a request body
SEQUENCE_MARK = b"@@SEQUENCE@@@@@@"

# Where each cap is read from ("module:NAME"), the first defined wins.
CAP_SOURCES: dict[str, tuple[str, ...]] = {
    "mcp_batch": ("plugins.mcp.protocol:MAX_BATCH_LENGTH",),
    "clauses": ("plugins.person.query_budget:MAX_CLAUSES",),
    "patterns": ("plugins.person.query_budget:MAX_PATTERNS",),
    "tokens": ("plugins.person.query_budget:MAX_TOKENS",),
    "chars": ("plugins.person.query_budget:MAX_TEXT_LENGTH",),
    "pattern": ("plugins.person.query_budget:MAX_PATTERN_LENGTH",),
    "wildcards": ("plugins.person.query_budget:MAX_PATTERN_WILDCARDS",),
}
# When the running code defines no cap: the sizes reproduced before the bounds existed (2,000-call
# batches, 2 MB match texts), the DSL's 1,000 values per list, the words 2 MB holds, and patterns
# past any automaton the engine would build.
SHOWN_SETTINGS = (
    "RATE_LIMIT",
    "PERSON_RATE_LIMIT",
    "WEBHOOK_TIMEOUT",
    "PERSON_SEARCH_TIMEOUT",
    "MAX_CONTENT_LENGTH",
)
CAP_FALLBACKS = {
    "mcp_batch": 2000,
    "clauses": 1000,
    "patterns": 1000,
    "tokens": 250_000,
    "chars": 2_000_000,
    "pattern": 10_000,
    "wildcards": 5_000,
}


# --- what tenant A sends
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueryShape:
    """A person query: a bool's should clauses, `matches` match and `patterns` wildcard clauses;
    each match text `chars` long with `tokens` tokens (natural length when chars is None); each
    wildcard pattern `pattern` long with `wildcards` stars."""

    matches: int = 0
    patterns: int = 0
    tokens: int = 1
    chars: int | None = None
    pattern: int = 2
    wildcards: int = 1


def words_of(text: str) -> list[str]:
    return WORD.findall(text.lower())


def match_text(words: list[str], tokens: int, chars: int | None) -> str:
    """`tokens` of the vocabulary's words (most frequent first, so each has postings to read),
    padded with spaces to `chars` characters; words short enough that they fit, the text cut at
    `chars` when even those do not."""
    fitting = words
    if chars is not None:
        width = max(1, chars // max(tokens, 1) - 1)
        fitting = [word for word in words if len(word) <= width] or ["x"]
    text = " ".join(fitting[i % len(fitting)] for i in range(tokens))
    return text if chars is None else text[:chars].ljust(chars)


def wildcard_pattern(chars: int, wildcards: int) -> str:
    """A pattern of `chars` characters: `*` and a letter in turn while stars last, then letters."""
    stars, out = min(wildcards, chars), []
    letters = itertools.cycle(PATTERN_LETTERS)
    for i in range(chars):
        if stars and (i % 2 == 0 or chars - i == stars):
            out.append("*")
            stars -= 1
        else:
            out.append(next(letters))
    return "".join(out)


def person_query(shape: QueryShape, words: list[str]) -> dict:
    text = match_text(words, shape.tokens, shape.chars)
    pattern = wildcard_pattern(shape.pattern, shape.wildcards)
    should = [{"match": {MATCH_FIELDS[i % len(MATCH_FIELDS)]: text}} for i in range(shape.matches)]
    should += [
        {"wildcard": {PATTERN_FIELDS[i % len(PATTERN_FIELDS)]: pattern}}
        for i in range(shape.patterns)
    ]
    return {"query": {"bool": {"should": should, "minimum_should_match": 1}}, "size": 100}


def mcp_batch(length: int, arguments: dict) -> list[dict]:
    return [
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": "people_search", "arguments": arguments},
        }
        for n in range(length)
    ]


MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
BROAD_SEARCH = {"query": {"match_all": {}}, "size": 100}


def resume_parts(size: int) -> tuple[list[bytes], str]:
    """A multipart candidate with a PDF of exactly `size` bytes: (body parts, content type). The
    small first part carries SEQUENCE_MARK twice (source_id, and the file's second line), so each
    request is a new candidate and file; the big middle part is sent as it is."""
    boundary = "hirekit-bench-" + uuid.uuid4().hex
    fields = {
        "first_name": "Bench",
        "last_name": "Neighbour",
        "email": "bench@example.com",
        "phone_no": "+14155550100",
        "source": "bench",
        "source_id": SEQUENCE_MARK.decode(),
    }
    head = "".join(
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        for name, value in fields.items()
    )
    head += (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
        "filename=\"resume.pdf\"\r\n"
        "Content-Type: application/pdf\r\n\r\n"
    )
    file_head = b"%PDF-1.4\n%" + SEQUENCE_MARK + b"\n"
    filler = b"%" + b"bench resume filler " * (size // 20 + 1)
    body = file_head + filler[: size - len(file_head) - len(b"\n%%EOF\n")] + b"\n%%EOF\n"
    assert len(body) == size
    return [
        head.encode() + file_head,
        body[len(file_head) :],
        f"\r\n--{boundary}--\r\n".encode(),
    ], f"multipart/form-data; boundary={boundary}"


@dataclass
class HeavyRequest:
    """One kind of tenant A's requests, as plain data (it crosses into A's process)."""

    kind: str
    method: str
    path: str
    headers: dict
    parts: list[bytes]


def send_heavy(
    connection: http.client.HTTPConnection, request: HeavyRequest, sequence: int
) -> tuple[int, float, bytes]:
    """Send it (SEQUENCE_MARK replaced in the first and last parts) and drain the answer: (status,
    Retry-After, the answer's first 300 bytes)."""
    number = f"{sequence:016d}".encode()
    parts = list(request.parts)
    parts[0] = parts[0].replace(SEQUENCE_MARK, number)
    parts[-1] = parts[-1].replace(SEQUENCE_MARK, number)
    connection.putrequest(request.method, request.path, skip_accept_encoding=True)
    for name, value in {**request.headers, "Content-Length": str(sum(map(len, parts)))}.items():
        connection.putheader(name, value)
    try:
        connection.endheaders()
        for part in parts:
            connection.send(part)
    except (BrokenPipeError, ConnectionResetError):
        # the server answered before reading the whole body (a 429 or 413) and closed: its answer
        # may be there
        pass
    response = connection.getresponse()
    head = response.read(300)
    while response.read(1 << 20):
        pass
    return response.status, float(response.getheader("Retry-After") or 0), head


def tenant_a_process(port: int, plan: list[HeavyRequest], until: float, results) -> None:
    """Tenant A's load (run in a process of its own): one thread per planned connection sends its
    kind until `until` (time.time()); puts ({(kind, status): count}, {(kind, status): the first such
    answer's start, for statuses other than 2xx and 429}) on `results`. Requests still unanswered at
    the end count as status "unanswered at the end", connections dropped or timed out as "connection
    error" (also a refusal the server sent before reading a whole resume and then reset the
    connection, losing its answer)."""
    counts: Counter = Counter()
    answers: dict[tuple, str] = {}
    lock = threading.Lock()
    in_flight: dict[int, str] = {}
    numbers = itertools.count(1)

    def connect():
        return http.client.HTTPConnection(
            "127.0.0.1", port, timeout=max(5.0, until - time.time() + 60)
        )

    def drive(slot: int, request: HeavyRequest):
        connection = connect()
        while time.time() < until:
            in_flight[slot] = request.kind
            try:
                status, retry_after, head = send_heavy(connection, request, next(numbers))
            except (OSError, http.client.HTTPException):
                status, retry_after, head = "connection error", 0.0, b""
                connection.close()
                connection = connect()
            in_flight.pop(slot, None)
            if time.time() > until:
                return
            with lock:
                counts[(request.kind, status)] += 1
                if isinstance(status, int) and status >= 300 and status != 429:
                    answers.setdefault((request.kind, status), head.decode(errors="replace"))
            if status == 429:
                time.sleep(min(max(retry_after, 0.05), 1.0, max(0.0, until - time.time())))

    for slot, request in enumerate(plan):
        threading.Thread(target=drive, args=(slot, request), daemon=True).start()
    time.sleep(max(0.0, until - time.time()))
    with lock:
        for kind in in_flight.values():
            counts[(kind, "unanswered at the end")] += 1
        results.put((dict(counts), answers))


# --- tenant B's probe and the slow receiver
# ------------------------------------------------------------------------


@dataclass
class ProbeResult:
    """Tenant B's answers over a phase: the latency of each 200, and the count of every other
    outcome."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)

    def figure(self, p: float) -> float:
        return percentile(self.latencies_ms, p) if self.latencies_ms else float("nan")

    def line(self) -> str:
        errors = sum(self.errors.values())
        detail = f" ({', '.join(f'{k} x{v}' for k, v in self.errors.items())})" if errors else ""
        return (
            f"p50 {self.figure(50):8.2f} ms  p99 {self.figure(99):8.2f} ms  max "
            f"{max(self.latencies_ms, default=0):8.1f} ms"
            f"  n={len(self.latencies_ms)}  errors {errors}{detail}"
        )


def probe_b(
    port: int, path: str, headers: dict, connections: int, rate: float, seconds: float
) -> ProbeResult:
    """Tenant B's GET from `connections` keep-alive connections, each sending every connections/rate
    seconds (at once when a request took longer): latency of each answered 200; any other status or
    a connection error counts."""
    result, lock = ProbeResult(), threading.Lock()
    interval, until = connections / rate, time.monotonic() + seconds

    def run(offset: float):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        next_at = time.monotonic() + offset
        while True:
            now = time.monotonic()
            next_at = max(next_at, now)
            if next_at >= until:
                break
            time.sleep(next_at - now)
            next_at += interval
            started = time.perf_counter()
            try:
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException) as error:
                status = type(error).__name__
                connection.close()
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                if status == 200:
                    result.latencies_ms.append(elapsed)
                else:
                    result.errors[status] += 1
        connection.close()

    threads = [
        threading.Thread(target=run, args=(i * interval / connections,)) for i in range(connections)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return result


class TrickleReceiver:
    """A loopback webhook receiver that reads the request, answers 200 with its headers at once,
    then its body one byte every `interval` seconds, until the sender hangs up or the receiver
    closes."""

    def __init__(self, interval: float):
        self.interval, self.closing = interval, threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closing.is_set():
            try:
                connection, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            self.connections.append(connection)
            threading.Thread(target=self._trickle, args=(connection,), daemon=True).start()

    def _trickle(self, connection: socket.socket):
        try:
            connection.settimeout(5)
            received = b""
            while b"\r\n\r\n" not in received:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                received += chunk
            connection.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\n\r\n"
            )
            while not self.closing.wait(self.interval):
                connection.sendall(b".")
        except OSError:
            pass
        finally:
            connection.close()

    def close(self):
        self.closing.set()
        self.listener.close()
        for connection in self.connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


# --- caps, read from the code and fitted against the app
# -------------------------------------------------------------


def defined_cap(sources: tuple[str, ...]) -> tuple[int | None, str | None]:
    """(value, where) of the first of `sources` the running code defines, else (None, None)."""
    for source in sources:
        module_name, _, name = source.partition(":")
        try:
            value = getattr(importlib.import_module(module_name), name, None)
        except ImportError:
            value = None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value, source
    return None, None


def largest_accepted(accepts: Callable[[int], bool], high: int, low: int = 1) -> int:
    """The largest n in [low, high] that `accepts` (taken as monotone), by bisection; 0 when even
    `low` is refused."""
    if accepts(high):
        return high
    if high <= low or not accepts(low):
        return 0
    while high - low > 1:  # accepts(low), not accepts(high)
        middle = (low + high) // 2
        if accepts(middle):
            low = middle
        else:
            high = middle
    return low


@dataclass
class Fitted:
    shape: QueryShape
    query: bytes
    batch_length: int
    batch: bytes
    resume_bytes: int
    text_tokens: int  # tokens the analyzer finds in each match text
    sources: dict[str, str]
    # the limits A meets that the bench does not fit: rate limits, deadlines
    settings: dict[str, object]
    refusals: list[str]  # the messages of refused probes, one per kind of refusal


def fit_caps(args, words: list[str], tiny_index: Path, workdir: Path) -> Fitted:
    """Each request shape at its largest accepted size, probed in-process against an app with the
    configuration the servers get (rate limits off, a tiny index)."""
    from app import create_app
    from app.cli import upgrade_database
    from app.data.db import database
    from app.data.tenancy import create_tenant

    app = create_app(
        {
            "DATABASE_URL": f"sqlite:///{workdir / 'fit.sqlite3'}",
            "INSTANCE_DIR": str(workdir),
            "RESUME_DIR": str(workdir / "resumes"),
            "SEARCH_INDEX": str(tiny_index),
            "RATE_LIMIT_ENABLED": False,
            "REDIS_URL": "",
            "LOG_LEVEL": "CRITICAL",
        }
    )
    with app.app_context():
        upgrade_database()
        with database.connection_context():
            _, key = create_tenant("fit")
    client = app.test_client()
    refusals: dict[str, str] = {}

    def accepted(response) -> bool:
        if response.status_code >= 400:
            body = response.get_json(silent=True) or {}
            message = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
            refusals.setdefault(
                f"{response.status_code} {str(message)[:60]}", f"{response.status_code}: {message}"
            )
            return False
        return True

    max_body = int(app.config["MAX_CONTENT_LENGTH"])

    def search_accepts(shape: QueryShape) -> bool:
        body = orjson.dumps(person_query(shape, words))
        if len(body) > max_body:
            return False
        return accepted(
            client.post(
                "/v2/person/search",
                data=body,
                content_type="application/json",
                headers={"X-API-Key": key},
            )
        )

    caps, sources = {}, {}
    for name in CAP_SOURCES:
        given = getattr(args, f"max_{name}")
        value, source = (
            (given, "--max-" + name.replace("_", "-")) if given else defined_cap(CAP_SOURCES[name])
        )
        caps[name], sources[name] = (
            (value, source)
            if value
            else (CAP_FALLBACKS[name], "fallback (no cap found in the code)")
        )

    # tokens in a text of natural length, then the longest text with those tokens, then as many
    # tokens as fit in it
    tokens = largest_accepted(
        lambda n: search_accepts(QueryShape(matches=1, tokens=n)), caps["tokens"]
    )
    chars = largest_accepted(
        lambda n: search_accepts(QueryShape(matches=1, tokens=tokens, chars=n)), caps["chars"]
    )
    tokens = largest_accepted(
        lambda n: search_accepts(QueryShape(matches=1, tokens=n, chars=chars)),
        caps["tokens"],
        low=max(tokens, 1),
    )
    wildcards = largest_accepted(
        lambda n: search_accepts(QueryShape(patterns=1, pattern=2 * n, wildcards=n)),
        caps["wildcards"],
    )
    pattern = largest_accepted(
        lambda n: search_accepts(QueryShape(patterns=1, pattern=n, wildcards=wildcards)),
        max(caps["pattern"], 2 * wildcards),
    )
    base = QueryShape(tokens=tokens, chars=chars, pattern=pattern, wildcards=wildcards)
    # as many patterns as are accepted, then as many match clauses beside them (within the body size
    # too)
    patterns = largest_accepted(
        lambda n: search_accepts(replace(base, patterns=n)), min(caps["patterns"], caps["clauses"])
    )
    per_match = len(orjson.dumps(person_query(replace(base, matches=1), words)))
    matches = largest_accepted(
        lambda n: search_accepts(replace(base, patterns=patterns, matches=n)),
        min(caps["clauses"], max(1, max_body // max(per_match, 1))),
    )
    shape = replace(base, patterns=patterns, matches=matches)

    def batch_accepts(length: int) -> bool:
        body = orjson.dumps(mcp_batch(length, BROAD_SEARCH))
        if len(body) > max_body:
            return False
        response = client.post(
            "/mcp/sourcing", data=body, headers={"Authorization": f"Bearer {key}", **MCP_HEADERS}
        )
        if not accepted(response):
            return False
        answer = response.get_json(silent=True)
        if not isinstance(answer, list):  # refused as a whole, in a JSON-RPC error
            message = (
                ((answer or {}).get("error") or {}).get("message")
                if isinstance(answer, dict)
                else answer
            )
            refusals.setdefault(f"mcp {str(message)[:60]}", f"mcp batch: {message}")
            return False
        return True

    batch_length = largest_accepted(batch_accepts, caps["mcp_batch"])
    resume_bytes = int(app.config["MAX_RESUME_BYTES"])
    parts, content_type = resume_parts(resume_bytes)
    upload = client.post(
        "/v1/candidates",
        data=b"".join(parts).replace(SEQUENCE_MARK, b"0" * 16),
        content_type=content_type,
        headers={"Authorization": f"Bearer {key}"},
    )
    if not accepted(upload):
        print(
            f"warning: a resume of MAX_RESUME_BYTES ({resume_bytes:,}) was refused: "
            f"{upload.status_code} "
            f"{upload.get_data()[:200]!r}",
            file=sys.stderr,
        )
    sources.update(resume_bytes="MAX_RESUME_BYTES")
    settings = {name: app.config[name] for name in SHOWN_SETTINGS if name in app.config}
    text_tokens = len(words_of(match_text(words, shape.tokens, shape.chars)))
    return Fitted(
        shape,
        orjson.dumps(person_query(shape, words)),
        batch_length,
        orjson.dumps(mcp_batch(batch_length, BROAD_SEARCH)),
        resume_bytes,
        text_tokens,
        sources,
        settings,
        list(refusals.values()),
    )


# --- one database
# --------------------------------------------------------------------------------------------------


@dataclass
class Seeded:
    key_a: str
    key_b: str
    job_b: str
    webhooks_a: list[str]


def seed(database_url: str, instance: Path, index: Path, receiver_urls: list[str]) -> Seeded:
    """A fresh schema (PostgreSQL: public dropped and rebuilt), tenants A and B, B's job, A's
    webhooks to the slow receivers; through the public API where there is one."""
    from app import create_app
    from app.data.db import database
    from app.data.tenancy import create_tenant
    from tests.factories import job_body

    app = create_app(
        {
            "DATABASE_URL": database_url,
            "INSTANCE_DIR": str(instance),
            "RESUME_DIR": str(instance / "resumes"),
            "SEARCH_INDEX": str(index),
            "RATE_LIMIT_ENABLED": False,
            "REDIS_URL": "",
            "WEBHOOK_ALLOW_PRIVATE": True,
            "LOG_LEVEL": "WARNING",
        }
    )
    migrate_clean(app, database_url)
    with app.app_context(), database.connection_context():
        _, key_a = create_tenant("tenant-a")
        _, key_b = create_tenant("tenant-b", rate_limit=B_RATE_LIMIT)
    client = app.test_client()
    job = client.post("/v1/jobs", json=job_body(), headers={"Authorization": f"Bearer {key_b}"})
    assert job.status_code == 201, job.get_data()
    webhooks = []
    for url in receiver_urls:
        hook = client.post(
            "/v1/tenant-webhook",
            headers={"Authorization": f"Bearer {key_a}"},
            json={
                "tenant_id": "tenant-a",
                "triggered_event": "application_activty",
                "type": "post_call_screening",
                "fields": ["id", "application_stage"],
                "url": url,
                "http_method": "POST",
                "content_type": "application/json",
            },
        )
        assert hook.status_code in (200, 201), hook.get_data()
        webhooks.append(hook.json["id"])
    if database_url.startswith("postgres"):
        with app.app_context(), database.connection_context():
            database.execute_sql("VACUUM ANALYZE")
    return Seeded(key_a, key_b, job.json["id"], webhooks)


def heavy_plan(
    fitted: Fitted, seeded: Seeded, connections: int, kinds: list[str]
) -> list[HeavyRequest]:
    """One HeavyRequest per tenant A connection, the kinds in turn (webhook connections each on a
    webhook of its own)."""
    bearer = {"Authorization": f"Bearer {seeded.key_a}"}
    parts, content_type = resume_parts(fitted.resume_bytes)
    webhooks = itertools.cycle(seeded.webhooks_a)
    plan = []
    for slot in range(connections):
        kind = kinds[slot % len(kinds)]
        if kind == "person":
            plan.append(
                HeavyRequest(
                    kind,
                    "POST",
                    "/v2/person/search",
                    {"X-API-Key": seeded.key_a, "Content-Type": "application/json"},
                    [fitted.query],
                )
            )
        elif kind == "mcp":
            plan.append(
                HeavyRequest(
                    kind, "POST", "/mcp/sourcing", {**bearer, **MCP_HEADERS}, [fitted.batch]
                )
            )
        elif kind == "resume":
            plan.append(
                HeavyRequest(
                    kind, "POST", "/v1/candidates", {**bearer, "Content-Type": content_type}, parts
                )
            )
        else:
            plan.append(
                HeavyRequest(
                    kind, "POST", f"/v1/tenant-webhook/{next(webhooks)}/test", bearer, [b""]
                )
            )
    return plan


def warm_up(port: int, seeded: Seeded, connections: int = 4, rounds: int = 3) -> None:
    """Light requests of the kinds A sends (a small search, a one-call batch, a 1 KiB resume) from
    tenant B, so that each worker's first-use costs (imports, the person index opened, the MCP tool
    list built) are in the idle baseline rather than counted as growth under load."""
    bearer = {"Authorization": f"Bearer {seeded.key_b}"}
    parts, content_type = resume_parts(1024)
    light = [
        HeavyRequest(
            "person",
            "POST",
            "/v2/person/search",
            {"X-API-Key": seeded.key_b, "Content-Type": "application/json"},
            [orjson.dumps({"query": {"match": {"job_title": "software engineer"}}, "size": 10})],
        ),
        HeavyRequest(
            "mcp",
            "POST",
            "/mcp/sourcing",
            {**bearer, **MCP_HEADERS},
            [orjson.dumps(mcp_batch(1, {"query": {"match_all": {}}, "size": 10}))],
        ),
        HeavyRequest(
            "resume", "POST", "/v1/candidates", {**bearer, "Content-Type": content_type}, parts
        ),
    ]
    numbers = itertools.count(1)

    def run():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(rounds):
            for request in light:
                status, _, _ = send_heavy(connection, request, next(numbers))
                if status >= 400:
                    raise RuntimeError(f"warm-up {request.kind} answered {status}")
        connection.close()

    threads = [threading.Thread(target=run) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def worker_memory(server: subprocess.Popen) -> dict[int, tuple[int, int]]:
    """pid -> (VmRSS, RssAnon) in KiB of each gunicorn worker."""
    return {
        pid: (status_kib(pid, "VmRSS"), status_kib(pid, "RssAnon")) for pid in worker_pids(server)
    }


def kill_server(server: subprocess.Popen) -> None:
    """End gunicorn's arbiter and workers at once (no graceful wait for tenant A's requests still
    running)."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGKILL)
    server.wait(timeout=30)


@dataclass
class DatabaseRun:
    label: str
    idle: ProbeResult
    loaded: ProbeResult
    rss_idle: dict[int, tuple[int, int]]
    rss_end: dict[int, tuple[int, int]]
    tenant_a: dict
    # (kind, status) -> the start of the first answer of that status, for refusals
    tenant_a_answers: dict


def run_database(
    label: str, database_url: str, redis_url: str, args, index: Path, fitted: Fitted
) -> DatabaseRun:
    instance = Path(tempfile.mkdtemp(prefix="hirekit-noisy-"))
    receivers = [
        TrickleReceiver(args.trickle_seconds)
        for _ in range(max(1, args.a_connections // len(args.kinds)))
    ]
    server = None
    try:
        seeded = seed(database_url, instance, index, [receiver.url for receiver in receivers])
        env = {
            **os.environ,
            "HIREKIT_DATABASE_URL": database_url,
            "HIREKIT_INSTANCE_DIR": str(instance),
            "HIREKIT_RESUME_DIR": str(instance / "resumes"),
            "HIREKIT_SEARCH_INDEX": str(index),
            "HIREKIT_REDIS_URL": redis_url,
            "HIREKIT_WEBHOOK_ALLOW_PRIVATE": "true",
            "HIREKIT_ACCESS_LOG": "",
            "HIREKIT_LOG_LEVEL": "ERROR",
            "HIREKIT_RATE_LIMIT_KEY_PREFIX": f"noisy-{uuid.uuid4().hex[:12]}",
        }
        port = free_port()
        server = start_gunicorn("wsgi:app", port, env, workers=args.workers, settle_seconds=2)
        path, headers = f"/v1/jobs/{seeded.job_b}", {"Authorization": f"Bearer {seeded.key_b}"}
        probe = lambda seconds: probe_b(  # noqa: E731
            port, path, headers, args.b_connections, args.b_rate, seconds
        )
        warm_up(port, seeded)
        probe(2)  # every worker thread has answered B and opened its database connection
        idle = probe(args.idle)
        rss_idle = worker_memory(server)

        results = multiprocessing.get_context("spawn").Queue()
        # A's process gets a second to start before B's probe begins
        until = time.time() + args.duration + 1.0
        tenant_a = multiprocessing.get_context("spawn").Process(
            target=tenant_a_process,
            args=(port, heavy_plan(fitted, seeded, args.a_connections, args.kinds), until, results),
            daemon=True,
        )
        tenant_a.start()
        time.sleep(max(0.0, until - args.duration - time.time()))
        loaded = probe(max(0.0, until - time.time()))
        rss_end = worker_memory(server)
        counts, answers = results.get(timeout=30)
        tenant_a.join(timeout=5)
        if tenant_a.is_alive():
            tenant_a.kill()
        return DatabaseRun(label, idle, loaded, rss_idle, rss_end, counts, answers)
    finally:
        for receiver in receivers:
            receiver.close()
        if server is not None:
            kill_server(server)
        shutil.rmtree(instance, ignore_errors=True)


def report(run: DatabaseRun, args) -> bool:
    """Print one database's figures; True when every target is met."""
    idle_p99, loaded_p99 = run.idle.figure(99), run.loaded.figure(99)
    ratio = loaded_p99 / idle_p99 if idle_p99 else float("inf")
    b_errors = sum(run.loaded.errors.values())
    kept = [pid for pid in run.rss_idle if pid in run.rss_end]
    replaced = sorted(set(run.rss_idle) ^ set(run.rss_end))
    rss_ratios = {
        pid: run.rss_end[pid][0] / run.rss_idle[pid][0] for pid in kept if run.rss_idle[pid][0]
    }
    worst_rss = max(rss_ratios.values(), default=float("inf"))
    verdicts = [
        ratio <= TARGET_P99_RATIO,
        b_errors == 0,
        not replaced and worst_rss <= TARGET_RSS_RATIO,
    ]
    mark = lambda ok: "PASS" if ok else "MISS"  # noqa: E731
    print(f"\n== {run.label} ==")
    print(f"  tenant B GET /v1/jobs/:id, idle:   {run.idle.line()}")
    print(f"  tenant B GET /v1/jobs/:id, loaded: {run.loaded.line()}")
    print(
        f"  loaded/idle p99: {loaded_p99:.2f} / {idle_p99:.2f} ms = {ratio:.1f}x (target <= "
        f"{TARGET_P99_RATIO:g}x)  {mark(verdicts[0])}"
    )
    print(f"  tenant B errors under load: {b_errors} (target 0)  {mark(verdicts[1])}")
    for pid in sorted(set(run.rss_idle) | set(run.rss_end)):
        idle, end = run.rss_idle.get(pid), run.rss_end.get(pid)
        text = lambda m: (  # noqa: E731
            f"{m[0] / 1024:7.1f} MB (anon {m[1] / 1024:6.1f})" if m else "      (absent)          "
        )
        print(
            f"  worker {pid}: RSS idle {text(idle)}  end {text(end)}"
            + (f"  {rss_ratios[pid]:.2f}x" if pid in rss_ratios else "")
        )
    note = f"; workers replaced during the load: {replaced}" if replaced else ""
    print(
        f"  worker RSS end/idle, largest: {worst_rss:.2f}x (target <= {TARGET_RSS_RATIO:g}x){note}"
        f"  {mark(verdicts[2])}"
    )
    print("  tenant A answers:")
    for kind in args.kinds:
        statuses = sorted(
            ((status, n) for (k, status), n in run.tenant_a.items() if k == kind),
            key=lambda s: str(s[0]),
        )
        print(f"    {kind:8} " + (", ".join(f"{status} x{n}" for status, n in statuses) or "none"))
        for (answered_kind, status), head in run.tenant_a_answers.items():
            if answered_kind == kind:
                print(f"             first {status}: {head[:200]}")
    return all(verdicts)


def describe(fitted: Fitted, args) -> None:
    shape = fitted.shape
    print(
        f"tenant A: {args.a_connections} connections ({', '.join(args.kinds)} in turn) for "
        f"{args.duration:g} s; "
        f"tenant B: {args.b_connections} connections, {args.b_rate:g} GET/s, idle {args.idle:g} s; "
        f"gunicorn {args.workers} workers as deploy/gunicorn.conf.py"
    )
    print(
        f"  person query: {shape.matches + shape.patterns} clauses ({shape.matches} match of "
        f"{shape.chars or 0:,} chars / "
        f"{fitted.text_tokens:,} tokens, {shape.patterns} wildcard of {shape.pattern:,} chars / "
        f"{shape.wildcards:,} *), size 100, {len(fitted.query) / 1024:,.1f} KiB"
    )
    print(
        f"  mcp batch: {fitted.batch_length:,} people_search calls (match_all, size 100), "
        f"{len(fitted.batch) / 1024:,.1f} KiB"
    )
    print(
        f"  resume: {fitted.resume_bytes:,} bytes; webhook test: receiver trickles a byte every "
        f"{args.trickle_seconds:g} s"
    )
    print(
        "  caps from: " + ", ".join(f"{name} {source}" for name, source in fitted.sources.items())
    )
    print("  settings: " + ", ".join(f"{name} {value}" for name, value in fitted.settings.items()))
    for refusal in fitted.refusals[:8]:
        print(f"  refused while fitting: {refusal[:160]}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("HIREKIT_BENCH_DATABASE_URL", ""),
        help="PostgreSQL URL (default HIREKIT_BENCH_DATABASE_URL); its public schema is dropped",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("HIREKIT_BENCH_REDIS_URL", ""),
        help="Redis URL for the PostgreSQL run's limiter (default HIREKIT_BENCH_REDIS_URL)",
    )
    parser.add_argument("--duration", type=float, default=25, help="seconds of load (default 25)")
    parser.add_argument(
        "--idle", type=float, default=10, help="seconds of the idle baseline (default 10)"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--a-connections", type=int, default=8)
    parser.add_argument(
        "--b-connections",
        type=int,
        default=2,
        help="tenant B's connections (default 2: within its own requests-in-progress cap, "
        "TENANT_MAX_IN_FLIGHT, half a worker's threads, even when both reach one worker)",
    )
    parser.add_argument(
        "--b-rate",
        type=float,
        default=100,
        help="tenant B's GETs per second, all connections (default 100)",
    )
    parser.add_argument(
        "--kinds",
        type=lambda text: text.split(","),
        default=list(KINDS),
        help=f"tenant A's request kinds, comma-separated (default {','.join(KINDS)}): one alone "
        "shows its share",
    )
    parser.add_argument(
        "--trickle-seconds",
        type=float,
        default=1.0,
        help="the slow receiver's pause between body bytes",
    )
    parser.add_argument(
        "--profiles",
        type=int,
        default=PROFILES,
        help="profiles in the person index (default the demo's 10,000)",
    )
    for name in CAP_SOURCES:
        parser.add_argument(
            f"--max-{name.replace('_', '-')}",
            type=int,
            default=None,
            help=f"cap instead of the code's (fallback {CAP_FALLBACKS[name]:,})",
        )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    # the app and the servers it starts need one
    os.environ.setdefault("HIREKIT_SECRET_KEY", secrets.token_urlsafe(48))
    if not args.kinds or set(args.kinds) - set(KINDS):
        parser.error(f"--kinds takes some of {','.join(KINDS)}")
    databases = ["sqlite", "postgresql"] if args.database == "both" else [args.database]
    if "postgresql" in databases and not (args.database_url and args.redis_url):
        parser.error(
            "PostgreSQL needs --database-url and --redis-url (or HIREKIT_BENCH_DATABASE_URL and "
            "HIREKIT_BENCH_REDIS_URL); or run --database sqlite"
        )

    from bench.person_search import ensure_index, generated_lines
    from plugins.person.backends.embedded import EmbeddedBackend
    from plugins.person.loader import load_file

    started = time.monotonic()
    index = ensure_index(args.profiles, SEED, False, None)
    workdir = Path(tempfile.mkdtemp(prefix="hirekit-noisy-fit-"))
    try:
        words: Counter = Counter()
        with open(workdir / "tiny.jsonl", "wb") as tiny:
            for number, line in generated_lines(3000, SEED):
                profile = orjson.loads(line)
                words.update(
                    words_of(f"{profile.get('job_title') or ''} {profile.get('summary') or ''}")
                )
                if number <= 50:
                    tiny.write(line + b"\n")
        load_file(
            EmbeddedBackend(str(workdir / "tiny-index")),
            str(workdir / "tiny.jsonl"),
            replace=True,
            processes=1,
        )
        fitted = fit_caps(
            args, [word for word, _ in words.most_common(2000)], workdir / "tiny-index", workdir
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"\nnoisy neighbour: {args.profiles:,} profiles; caps fitted in "
        f"{time.monotonic() - started:.0f} s; "
        f"load average {load_average()}"
    )
    describe(fitted, args)

    met = True
    for database in databases:
        if database == "sqlite":
            label, url, redis_url = "SQLite, rate limits in each worker's memory", None, ""
        else:
            label, url, redis_url = (
                "PostgreSQL, rate limits in Redis",
                args.database_url,
                args.redis_url,
            )
        url = url or f"sqlite:///{tempfile.mkdtemp(prefix='hirekit-noisy-db-')}/hirekit.sqlite3"
        run = run_database(label, url, redis_url, args, index, fitted)
        met &= report(run, args)
        if database == "sqlite":
            shutil.rmtree(Path(url.removeprefix("sqlite:///")).parent, ignore_errors=True)
    print(
        f"\n{'every target met' if met else 'a target was MISSED'}; whole run "
        f"{time.monotonic() - started:.0f} s, "
        f"load average {load_average()}"
    )
    return 1 if args.strict and not met else 0


if __name__ == "__main__":
    sys.exit(main())
