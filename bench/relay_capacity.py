"""Call relay capacity: one relay process (`hirekit-relay`, as deployed) holding N live calls over
real WebSockets, each a scripted candidate who pauses 1-3 s before every answer, on PostgreSQL, with
the rules dialogue. N lanes each place a call after another: the first calls over the ramp (about
one call's length), then a new one as each ends until the hold is over, so N calls stay live and
calls start and end at the rate such a load has. Figures: the whole run, and the steady load (the
hold after its first WARM_UP_SECONDS).

Measured by the relay itself (GET /stats): its own time per turn, from a `prompt` with last: true
arriving to the first `text` token it sends (no model: the rules dialogue, its database writes
included). Baseline, same run, same client load: an echo server on the same WebSocket library
answering each prompt with one token at once, timed the same way; the ratio relay / echo is printed
beside the absolute p95. Memory per live call: the relay's resident memory in the middle of the
hold, less its memory before the first socket, over the calls live then.

.venv/bin/python bench/relay_capacity.py [--calls 500] [--ramp 30] [--hold 60] [--database-url
postgresql://postgres@127.0.0.1:5432/h5] [--redis-url redis://127.0.0.1:6379/14]

As deployed, the relay enqueues each ended call's completion (its status, assessment, event and
webhook) on Redis and one worker process makes it; the bench waits for the worker to complete every
call that ended and prints its CPU beside the relay's. With --redis-url '' there is no Redis and the
relay completes calls itself (the embedded default).

The database's public schema is dropped and rebuilt: give it one used for nothing else. Target: 500
concurrent calls with the relay's p95 turn time at most 20 ms. The machine's load average is
printed: on a shared machine, take figures when it is low."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    busy_share,
    cpu_seconds,
    free_port,
    load_average,
    machine_cpu_ticks,
    percentile,
    status_kib,
)

ACCOUNT_SID = "AC" + "b" * 32
AUTH_TOKEN = "bench-auth-token-0123456789abcdef"
PUBLIC_BASE = "https://relay.bench.example"
QUESTIONS = (
    "How many years of ICU experience do you have?",
    "Do you hold a current BLS certification?",
    "How many patients did you usually care for on a shift?",
    "Can you work night shifts?",
    "Do you have a valid driving licence?",
    "How many years have you worked in this city?",
    "Are you able to start within a month?",
    "Tell us about a difficult shift and how you handled it.",
)
ECHO_LINE = "Thank you. Could you tell me a little more?"
ECHO_TURNS = 12
SHORTEST_CALL_SECONDS = 15.0  # a scripted call's 13 turns, each after a 1-3 s pause
WARM_UP_SECONDS = 10.0  # of the hold, left out of the steady figures (the ramp's backlog drains)


# -- the baseline: an echo ConversationRelay server on the same library --------------------------


def echo_server(port: int) -> None:
    """Answer setup with one greeting token and each prompt with one token at once; /stats as the
    relay's."""
    from http import HTTPStatus

    from websockets.asyncio.server import serve

    turn_ms: list[float] = []

    async def handler(connection):
        turns = 0
        async for frame in connection:
            received = time.monotonic()
            message = json.loads(frame)
            if message["type"] == "setup":
                await connection.send(
                    json.dumps({"type": "text", "token": ECHO_LINE, "last": True})
                )
            elif message["type"] == "prompt" and message.get("last", True):
                turns += 1
                await connection.send(
                    json.dumps({"type": "text", "token": ECHO_LINE, "last": True})
                )
                turn_ms.append((time.monotonic() - received) * 1000)
                if turns >= ECHO_TURNS:
                    await connection.send(json.dumps({"type": "end"}))
                    return

    def process_request(connection, request):
        if request.path == "/stats":
            times = sorted(turn_ms)
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))] if times else None
            return connection.respond(
                HTTPStatus.OK,
                json.dumps(
                    {
                        "turns": len(times),
                        "turn_ms_p95": p95,
                        "turn_ms_p50": times[len(times) // 2] if times else None,
                    }
                ),
            )
        return None

    async def main():
        async with serve(
            handler, "127.0.0.1", port, process_request=process_request, compression=None
        ):
            print("echo ready", flush=True)
            await asyncio.Future()

    run_loop(main())


# -- the client: N scripted candidates -----------------------------------------------------------


class Load:
    """What the scripted candidates saw: every turn's round trip with when its prompt was sent, so
    the hold (the steady load the target names) is told apart from the ramp and the last calls."""

    def __init__(self):
        self.live = 0
        self.peak = 0
        self.timeline: list[tuple[float, float]] = []  # (when a prompt was sent, its round trip ms)
        self.hold_from = self.hold_until = 0.0  # when the ramp ended, when the hold ends
        self.ended = 0
        self.failed: list[str] = []
        self.machine_busy = 0.0  # the share of all cores busy during the steady load

    @property
    def client_turn_ms(self) -> list[float]:
        return [ms for _, ms in self.timeline]

    def held_window(self) -> list[float]:
        """Round trips of prompts sent during the hold, after WARM_UP_SECONDS of it."""
        return [
            ms
            for sent, ms in self.timeline
            if self.hold_from + WARM_UP_SECONDS <= sent <= self.hold_until
        ]


async def agent_turn(ws) -> tuple[str, bool]:
    """The relay's next turn: its text tokens up to last: true, and whether an `end` came."""
    tokens = []
    while True:
        message = json.loads(await ws.recv())
        if message["type"] == "end":
            return "".join(tokens), True
        if message["type"] == "text":
            tokens.append(message["token"])
            if message.get("last"):
                return "".join(tokens), False


async def one_call(port: int, call_id: str, call_sid: str, load: Load, signer) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosedOK

    from plugins.calls.telephony.simulated import ScriptedCandidate

    url = f"ws://127.0.0.1:{port}/v1/calls/relay/twilio/{call_id}"
    headers = {"X-Twilio-Signature": signer(call_id)}
    candidate = ScriptedCandidate("good", "+14155550100", "Jane")
    connected = False
    try:
        async with connect(
            url, additional_headers=headers, open_timeout=60, compression=None, ping_interval=None
        ) as ws:
            load.live += 1
            connected = True
            load.peak = max(load.peak, load.live)
            await ws.send(
                json.dumps(
                    {
                        "type": "setup",
                        "callSid": call_sid,
                        "sessionId": "VX" + "0" * 32,
                        "from": "+14155550000",
                        "to": "+14155550100",
                        "direction": "outbound-api",
                    }
                )
            )
            said, ended = await agent_turn(ws)
            while not ended:
                await asyncio.sleep(random.uniform(1.0, 3.0))
                sent = time.monotonic()
                await ws.send(
                    json.dumps(
                        {
                            "type": "prompt",
                            "voicePrompt": candidate.reply(said),
                            "lang": "en-US",
                            "last": True,
                        }
                    )
                )
                said, ended = await agent_turn(ws)
                load.timeline.append((sent, (time.monotonic() - sent) * 1000))
            load.ended += 1
    except ConnectionClosedOK:
        load.ended += 1  # the server closed after its `end` (read before it, or not)
    except Exception as exc:  # noqa: BLE001 - counted and printed: a failed call is a finding
        load.failed.append(f"{type(exc).__name__}: {exc}"[:200])
    finally:
        if connected:
            load.live -= 1


async def run_load(
    port: int,
    calls: list[tuple[str, str]],
    signer,
    *,
    concurrent: int,
    ramp_seconds: float,
    hold_seconds: float,
    on_hold_middle=None,
) -> Load:
    """`concurrent` lanes, started over `ramp_seconds`, each a call after another (the next placed
    as one ends) until `hold_seconds` after the ramp: a steady load of that many live calls, with
    calls starting and ending at the rate it implies."""
    load = Load()
    waiting = iter(calls)
    load.hold_from = time.monotonic() + ramp_seconds
    load.hold_until = load.hold_from + hold_seconds

    async def lane():
        for call_id, call_sid in waiting:
            await one_call(port, call_id, call_sid, load, signer)
            if time.monotonic() >= load.hold_until:
                return
        load.failed.append("the seeded calls ran out before the hold ended")

    async def measure_hold():
        await asyncio.sleep(max(0.0, load.hold_from + WARM_UP_SECONDS - time.monotonic()))
        before = machine_cpu_ticks()
        await asyncio.sleep(max(0.0, load.hold_until - time.monotonic()))
        load.machine_busy = busy_share(before, machine_cpu_ticks())

    tasks = [asyncio.create_task(measure_hold())]
    for _ in range(concurrent):
        tasks.append(asyncio.create_task(lane()))
        await asyncio.sleep(ramp_seconds / concurrent)
    if on_hold_middle is not None:
        await asyncio.sleep(max(0.0, (load.hold_from + load.hold_until) / 2 - time.monotonic()))
        on_hold_middle(load)
    await asyncio.gather(*tasks)
    return load


# -- the relay's calls ---------------------------------------------------------------------------


def seed(database_url: str, instance: Path, calls: int) -> list[tuple[str, str]]:
    """A tenant, a job with QUESTIONS, and `calls` answered Twilio calls waiting for their relay
    socket."""
    from app.data.db import database, utcnow
    from bench.harness import fresh_database
    from plugins.applications.models import Application
    from plugins.calls.models import IN_PROGRESS, Call
    from plugins.candidates.models import Candidate

    app, tenant_id, key = fresh_database(database_url, instance)
    client = app.test_client()
    headers = {"Authorization": f"Bearer {key}"}
    job = client.post(
        "/v1/jobs",
        headers=headers,
        json={
            "source_id": "bench-job",
            "title": "ICU Nurse",
            "client_name": "Bench Health",
            "city": "Austin",
            "industry": "healthcare",
            "state_name": "Texas",
            "country": "US",
            "recruiter_name": "Rita Recruiter",
            "recruiter_email": "rita@bench.example",
            "recruiter_work_phone_no": "+15125550100",
            "status": "open",
            "desc": "ICU nurses for night shifts.",
        },
    ).json
    for n, text in enumerate(QUESTIONS):
        assert (
            client.post(
                f"/v1/jobs/{job['id']}/questions",
                headers=headers,
                json={"question_text": text, "source_id": f"q{n}"},
            ).status_code
            == 201
        )
    now = utcnow()
    with app.app_context(), database.connection_context(), database.atomic():
        candidates = [
            Candidate(
                id=uuid.uuid4(),
                tenant=tenant_id,
                source_id=f"cand-{n}",
                source="bench",
                first_name="Jane",
                last_name=f"Bench{n}",
                email=f"jane{n}@bench.example",
                phone_no="+14155550100",
            )
            for n in range(calls)
        ]
        Candidate.bulk_create(candidates, batch_size=200)
        applications = [
            Application(
                id=uuid.uuid4(),
                tenant=tenant_id,
                candidate=candidate.id,
                job=job["id"],
                candidate_source_id=candidate.source_id,
                job_source_id="bench-job",
                source_application_status="applied",
                application_stage="PASSIVE",
            )
            for candidate in candidates
        ]
        Application.bulk_create(applications, batch_size=200)
        placed = [(uuid.uuid4(), "CA" + uuid.uuid4().hex) for _ in range(calls)]
        Call.bulk_create(
            [
                Call(
                    id=call_id,
                    tenant=tenant_id,
                    application=application.id,
                    job=job["id"],
                    candidate=application.candidate_id,
                    status=IN_PROGRESS,
                    phone_no="+14155550100",
                    provider="twilio",
                    provider_call_id=call_sid,
                    dialled_at=now,
                    started_at=now,
                )
                for (call_id, call_sid), application in zip(placed, applications)
            ],
            batch_size=200,
        )
    return [(str(call_id), call_sid) for call_id, call_sid in placed]


def wait_for_completions(database_url: str, worker: subprocess.Popen) -> tuple[int, int, float]:
    """Once the relay has stopped: wait (at most a minute) for the worker to complete every call
    whose conversation ended; answers (completed, still in progress, worker CPU seconds)."""
    import psycopg2

    deadline = time.monotonic() + 60
    with psycopg2.connect(database_url) as connection, connection.cursor() as cursor:
        while True:
            cursor.execute(
                "SELECT count(*) FILTER (WHERE status = 'completed'), "
                "count(*) FILTER (WHERE status = 'in_progress' AND end_reason IS NOT NULL) "
                "FROM calls"
            )
            done, left = cursor.fetchone()
            connection.commit()
            if not left or time.monotonic() > deadline:
                break
            time.sleep(1)
    worker_cpu = cpu_seconds([worker.pid]).get(worker.pid, 0.0)
    worker.terminate()
    worker.wait(timeout=30)
    return done, left, worker_cpu


def wait_ready(process: subprocess.Popen, marker: str) -> None:
    line = process.stdout.readline()
    if marker not in line:
        process.kill()
        raise RuntimeError(f"did not start: {line}")


def run_loop(coroutine):
    """Run the load generator (and the echo server) on uvloop's event loop where it is installed, as
    the relay runs: the generator shares the machine's cores with the relay, so its CPU is taken
    from the process measured."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument(
        "--ramp",
        type=float,
        default=30.0,
        help="seconds over which the lanes place their first calls (about one call's length, so "
        "that calls start and end spread out as a steady load's do)",
    )
    parser.add_argument(
        "--hold", type=float, default=60.0, help="seconds the lanes keep their calls going after"
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get(
            "HIREKIT_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/h5"
        ),
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("HIREKIT_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14"),
        help="the queue ended calls are completed through by one worker ('' for none)",
    )
    parser.add_argument("--relay-threads", type=int, default=16)
    args = parser.parse_args()

    from twilio.request_validator import RequestValidator

    from plugins.calls.telephony.base import relay_url

    validator = RequestValidator(AUTH_TOKEN)

    def signer(call_id: str) -> str:
        return validator.compute_signature(relay_url(PUBLIC_BASE, "twilio", call_id), {})

    print(f"load average before: {load_average()}")
    instance = Path(tempfile.mkdtemp(prefix="relay-bench-"))
    secret = uuid.uuid4().hex + uuid.uuid4().hex
    os.environ["HIREKIT_SECRET_KEY"] = secret
    started = time.monotonic()
    # each lane places a call after another through the ramp and the hold: enough for calls of
    # SHORTEST_CALL_SECONDS, and a few more
    per_lane = int((args.ramp + args.hold) / SHORTEST_CALL_SECONDS) + 2
    calls = seed(args.database_url, instance, args.calls * per_lane)
    shape = {"concurrent": args.calls, "ramp_seconds": args.ramp, "hold_seconds": args.hold}
    print(f"seeded {len(calls)} answered calls in {time.monotonic() - started:.1f} s")

    # baseline: the echo server under the same client load
    echo_port = free_port()
    echo = subprocess.Popen(
        [sys.executable, __file__, "--echo-server", str(echo_port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        wait_ready(echo, "echo ready")
        echo_calls = [(str(uuid.uuid4()), "CA" + uuid.uuid4().hex) for _ in range(len(calls))]
        echo_load = run_loop(run_load(echo_port, echo_calls, signer, **shape))
        echo_stats = requests.get(f"http://127.0.0.1:{echo_port}/stats", timeout=5).json()
    finally:
        echo.terminate()
        echo.wait(timeout=10)

    relay_port = free_port()
    env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": args.database_url,
        "HIREKIT_INSTANCE_DIR": str(instance),
        "HIREKIT_TELEPHONY": "twilio",
        "HIREKIT_TWILIO_ACCOUNT_SID": ACCOUNT_SID,
        "HIREKIT_TWILIO_AUTH_TOKEN": AUTH_TOKEN,
        "HIREKIT_TWILIO_FROM_NUMBER": "+14155550000",
        "HIREKIT_TWILIO_CALLBACK_BASE_URL": PUBLIC_BASE,
        "HIREKIT_TWILIO_API_BASE_URL": "http://127.0.0.1:9",
        "HIREKIT_RELAY_PORT": str(relay_port),
        "HIREKIT_RELAY_THREADS": str(args.relay_threads),
        "HIREKIT_DATABASE_POOL_SIZE": str(args.relay_threads + 8),
        "HIREKIT_LOG_LEVEL": "WARNING",
        "HIREKIT_LLM_URL": "",
        "HIREKIT_RELAY_CONNECT_TIMEOUT": "600",
        "HIREKIT_REDIS_URL": args.redis_url,
    }
    worker = None
    if args.redis_url:
        import redis

        redis.Redis.from_url(args.redis_url).flushdb()
        worker = subprocess.Popen(
            [sys.executable, "worker.py"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    relay = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), "hirekit-relay")],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        wait_ready(relay, "relay ready")
        idle_kib = status_kib(relay.pid)
        cpu_before, run_started = cpu_seconds([relay.pid]).get(relay.pid, 0.0), time.monotonic()
        sample = {}

        def at_hold_middle(load: Load) -> None:
            sample["rss_kib"] = status_kib(relay.pid)
            sample["live"] = load.live

        client_cpu = time.process_time()
        relay_load = run_loop(
            run_load(relay_port, calls, signer, **shape, on_hold_middle=at_hold_middle)
        )
        client_cpu = time.process_time() - client_cpu
        relay_stats = requests.get(f"http://127.0.0.1:{relay_port}/stats", timeout=5).json()
        relay_cpu = cpu_seconds([relay.pid]).get(relay.pid, 0.0) - cpu_before
        relay_wall = time.monotonic() - run_started
    finally:
        relay.terminate()
        relay.wait(timeout=30)
    completion = None
    if worker is not None:
        completion = wait_for_completions(args.database_url, worker)

    print(f"load average after: {load_average()}")
    for name, load, stats in (
        ("echo baseline", echo_load, echo_stats),
        ("relay", relay_load, relay_stats),
    ):
        client = load.client_turn_ms
        print(
            f"{name}: peak {load.peak} live calls, {load.ended} ended by the server, "
            f"{len(load.failed)} failed, {stats['turns']} turns; "
            f"server turn p50 {stats['turn_ms_p50']:.2f} ms, p95 {stats['turn_ms_p95']:.2f} ms; "
            f"client round trip p95 {percentile(client, 95):.1f} ms"
        )
        held = load.held_window()
        if held:
            print(
                f"  steady load (the hold after its first {WARM_UP_SECONDS:g} s): {len(held)} "
                "turns, "
                f"client round trip p50 {percentile(held, 50):.1f} ms, p95 "
                f"{percentile(held, 95):.1f} ms (an upper bound of the server's turn time); "
                f"the whole machine {load.machine_busy:.0%} busy ({os.cpu_count()} cores)"
            )
        for failure in sorted(set(load.failed))[:5]:
            print(f"  failure: {failure}")
    ratio = relay_stats["turn_ms_p95"] / max(echo_stats["turn_ms_p95"], 1e-6)
    print(
        f"relay p95 turn {relay_stats['turn_ms_p95']:.2f} ms (target <= 20 ms) = "
        f"{ratio:.1f}x the echo server's {echo_stats['turn_ms_p95']:.2f} ms"
    )
    print(
        f"relay CPU: {relay_cpu:.1f} s over {relay_wall:.0f} s ({relay_cpu / relay_wall:.0%} of a "
        f"core), {relay_cpu * 1000 / max(relay_stats['turns'], 1):.2f} ms a turn with the calls' "
        f"opening and closing shared out ({relay_load.ended} calls)"
    )
    print(f"load generator (the scripted candidates, this process): {client_cpu:.1f} s CPU")
    if completion is not None:
        done, left, worker_cpu = completion
        print(
            f"worker: completed {done} calls ({left} still in progress after the wait), "
            f"{worker_cpu:.1f} s CPU"
        )
    if sample:
        per_call = (sample["rss_kib"] - idle_kib) / max(sample["live"], 1)
        print(
            f"memory: relay idle {idle_kib / 1024:.1f} MiB, "
            f"{sample['rss_kib'] / 1024:.1f} MiB with {sample['live']} live calls: "
            f"{per_call:.1f} KiB per live call"
        )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--echo-server":
        echo_server(int(sys.argv[2]))
    else:
        main()
