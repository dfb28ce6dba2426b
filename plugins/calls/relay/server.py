"""The relay process: ConversationRelay WebSockets from the telephony provider, one per live call,
on asyncio (the `websockets` library), so a live call holds a few kilobytes and no thread. Each
dialogue turn is synchronous (it writes the call's record), so it runs on a bounded thread pool and
what it yields is sent as soon as it is yielded.

Handshake: the path names the provider and the call (/v1/calls/relay/<provider>/<call id>); the
provider's check of the URL it reached must hold (Twilio's signature of it, the call's token in its
query for Telnyx); the call must be one being placed, with no socket yet. Anything else is refused
with an HTTP status before any frame, and nothing is recorded. Once the socket closes (an `end`
sent, the candidate hung up, the provider dropped it) the conversation ends and the call completes
at once.

Also served: GET /healthz (200 while the process runs) and GET /stats (live calls and the relay's
own turn time)."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
import time
import uuid
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request

from plugins.calls.conversation.understanding import warm_up
from plugins.calls.relay import claims
from plugins.calls.relay.protocol import MAX_MESSAGE_BYTES
from plugins.calls.dispatch import complete_all_soon
from plugins.calls.relay.records import RecordWriter
from plugins.calls.relay.session import RelaySession, Turn, conversation_factory
from plugins.calls.telephony.base import RELAY_PATH

log = logging.getLogger("hirekit.calls.relay")

SETUP_TIMEOUT_SECONDS = 10.0  # a socket that sends no setup this long after the handshake is closed
KEPT_TURN_TIMES = 20_000  # the latest turn times /stats reports percentiles over
DONE = object()


class RelayServer:
    """The process's sockets, its thread pool and the periodic sweep; `app` is the Flask app
    (config, database)."""

    def __init__(self, app, *, threads: int | None = None):
        self.app = app
        config = app.config
        # turns of live calls; and, apart so that a burst of calls starting or ending never queues
        # a live call's turn behind it, opening a call (claim, greeting) and closing it
        self.turn_pool = ThreadPoolExecutor(
            max_workers=threads or int(config["RELAY_THREADS"]),
            thread_name_prefix="relay-turn",
        )
        self.call_pool = ThreadPoolExecutor(
            max_workers=int(config["RELAY_CALL_THREADS"]),
            thread_name_prefix="relay-call",
        )
        from plugins.calls.conversation.dialogue import write_live_record

        # turns' records, written behind the turns in one transaction per interval
        self.records = RecordWriter(
            app,
            write=write_live_record,
            interval=float(config["RELAY_RECORD_INTERVAL"]),
            complete=complete_all_soon,
            completion_interval=float(config["RELAY_COMPLETION_INTERVAL"]),
        )
        self.silence_seconds = float(config["RELAY_SILENCE_SECONDS"])
        self.sweep_interval = float(config["RELAY_SWEEP_INTERVAL"])
        self.live: dict[str, RelaySession] = {}
        # connection -> (provider, call id, the provider's call id) between the handshake and the
        # handler
        self.claimed: dict[ServerConnection, tuple[str, str, object]] = {}
        self.turn_ms: deque[float] = deque(maxlen=KEPT_TURN_TIMES)
        self.refused = 0

    # -- threads ----------------------------------------------------------------------------------

    def _in_app_context(self, function, *args):
        """function(*args) in an app context of its own (its database connection goes back to the
        pool when it ends)."""
        with self.app.app_context():
            return function(*args)

    async def in_thread(self, function, *args):
        """function(*args) on the call pool: work that opens, closes or looks after calls."""
        return await asyncio.get_running_loop().run_in_executor(
            self.call_pool, self._in_app_context, function, *args
        )

    # -- handshake --------------------------------------------------------------------------------

    async def process_request(self, connection: ServerConnection, request: Request):
        path, _, query = request.path.partition("?")
        if path == "/healthz":
            return connection.respond(HTTPStatus.OK, "ok\n")
        if path == "/stats":
            response = connection.respond(HTTPStatus.OK, json.dumps(self.stats()) + "\n")
            response.headers["Content-Type"] = "application/json"
            return response
        parts = path.removeprefix(RELAY_PATH + "/").split("/")
        if not path.startswith(RELAY_PATH + "/") or len(parts) != 2 or not all(parts):
            return self._refuse(
                connection, HTTPStatus.NOT_FOUND, f"no relay socket at {path[:120]!r}"
            )
        provider_name, call_id = parts
        try:
            provider = self.provider()
        # a misconfigured provider refuses every socket, said in the log
        except Exception as exc:  # noqa: BLE001
            return self._refuse(
                connection, HTTPStatus.SERVICE_UNAVAILABLE, f"no telephony provider: {exc}"
            )
        if provider_name != provider.name or not hasattr(provider, "handshake_valid"):
            return self._refuse(
                connection, HTTPStatus.NOT_FOUND, f"no relay for provider {provider_name[:32]!r}"
            )
        if not self.handshake_valid(provider, call_id, query, request.headers):
            return self._refuse(
                connection,
                HTTPStatus.FORBIDDEN,
                f"call {call_id[:64]}: bad or missing signature (or token)",
            )
        try:
            provider_call_id = await self.in_thread(claims.claim, call_id, provider_name)
        except claims.RelayRefused as exc:
            return self._refuse(connection, HTTPStatus(exc.status), str(exc))
        # a malformed id, a database away: refused, never a half-made session
        except Exception:  # noqa: BLE001
            log.exception("relay handshake for call %s failed", call_id[:64])
            return self._refuse(
                connection, HTTPStatus.SERVICE_UNAVAILABLE, "the relay could not take the call"
            )
        self.claimed[connection] = (provider_name, str(uuid.UUID(call_id)), provider_call_id)
        return None

    def handshake_valid(self, provider, call_id: str, query: str, headers) -> bool:
        """The provider's check of the handshake that reached its relay URL with `query` (a
        signature of the URL, or a token in the query, made with the app's settings)."""
        with self.app.app_context():
            return provider.handshake_valid(provider.reached_url(call_id, query), headers)

    def _refuse(self, connection: ServerConnection, status: HTTPStatus, reason: str):
        self.refused += 1
        log.warning("relay socket refused (%d): %s", status, reason)
        return connection.respond(status, f"{reason}\n")

    def provider(self):
        from plugins.calls.telephony import get_provider

        return get_provider(self.app)

    # -- a call's socket --------------------------------------------------------------------------

    async def handle(self, connection: ServerConnection) -> None:
        provider_name, call_id, provider_call_id = self.claimed.pop(connection)
        open_conversation = conversation_factory(self.app)
        session = RelaySession(
            call_id,
            lambda *args, **kwargs: open_conversation(*args, record_writer=self.records, **kwargs),
            silence_seconds=self.silence_seconds,
            expected_call_sid=provider_call_id,
            language=self.app.config["CALL_LANGUAGE"],
        )
        self.live[call_id] = session
        turns: asyncio.Queue = asyncio.Queue()
        reader = asyncio.create_task(self._read(connection, session, turns))
        closed_by = "hung_up"
        try:
            closed_by = await self._converse(connection, session, turns, reader)
        finally:
            reader.cancel()
            del self.live[call_id]
            await self.in_thread(self._finish, session, call_id, closed_by)

    async def _read(
        self, connection: ServerConnection, session: RelaySession, turns: asyncio.Queue
    ) -> None:
        try:
            async for frame in connection:
                turn = session.accept(frame)
                if session.refused:
                    break
                if turn is not None:
                    turns.put_nowait(turn)
        except ConnectionClosed as exc:
            if exc.rcvd is None or exc.rcvd.code not in (1000, 1001):
                log.warning(
                    "relay for call %s: the socket closed abnormally (%s)", session.call_id, exc
                )
        finally:
            turns.put_nowait(DONE)

    async def _converse(
        self, connection, session: RelaySession, turns: asyncio.Queue, reader
    ) -> str:
        """Run turns in order as they come, and the silence turn when its time comes; answers why it
        stopped."""
        setup_deadline = time.monotonic() + SETUP_TIMEOUT_SECONDS
        while True:
            timeout = None
            if session.answered_at is None:
                timeout = max(0.0, setup_deadline - time.monotonic())
            elif session.silence_due is not None:
                timeout = max(0.0, session.silence_due - session.clock())
            try:
                async with asyncio.timeout(timeout):  # no task a wait, as wait_for makes
                    turn = await turns.get()
            except TimeoutError:
                if session.answered_at is None:
                    log.warning(
                        "relay for call %s: no setup within %g s",
                        session.call_id,
                        SETUP_TIMEOUT_SECONDS,
                    )
                    await connection.close(1008, "no setup")
                    return "failed"
                turn = session.silence_turn()
                if turn is None:
                    continue
            if turn is DONE:
                if session.refused:
                    await connection.close(1008, "refused")
                    return "refused"
                return "hung_up"
            await self._stream(connection, session, turn)
            if session.refused:
                await connection.close(1008, "refused")
                return "refused"
            if session.ended:
                await connection.close(1000, "conversation ended")
                return "ended"

    async def _stream(
        self, connection: ServerConnection, session: RelaySession, turn: Turn
    ) -> None:
        """Run the turn on the pool; send each message the moment the dialogue yields it."""
        loop = asyncio.get_running_loop()
        outgoing: asyncio.Queue = asyncio.Queue()

        def produce():
            for message in session.run(turn):
                loop.call_soon_threadsafe(outgoing.put_nowait, message)

        def produce_or_fail():
            try:
                self._in_app_context(produce)
            except Exception:  # noqa: BLE001 - the call ends failed rather than hang mid-turn
                log.exception("relay for call %s: the %s turn failed", session.call_id, turn.kind)
                session.refuse("the dialogue failed")
            finally:
                loop.call_soon_threadsafe(outgoing.put_nowait, DONE)

        pool = self.call_pool if turn.kind == "greet" else self.turn_pool
        work = loop.run_in_executor(pool, produce_or_fail)
        first = True
        try:
            while (message := await outgoing.get()) is not DONE:
                await connection.send(json.dumps(message, separators=(",", ":")))
                if first and turn.kind == "hear" and message.get("type") == "text":
                    self.turn_ms.append((session.clock() - turn.received_at) * 1000)
                    first = False
        except ConnectionClosed:
            # the rest of the turn is persisted by the dialogue; the caller handles the socket's end
            pass
        await work

    def _finish(self, session: RelaySession, call_id: str, closed_by: str) -> None:
        """Once the socket is gone: end the conversation, release the claim and complete the
        call."""
        from plugins.calls.lifecycle import advance
        from plugins.calls.models import COMPLETED, Call, FINAL_STATUSES
        from plugins.calls.telephony import Progress

        if session.conversation is None and closed_by == "refused":
            claims.unclaim(
                call_id
            )  # refused before a conversation: nothing kept, the call's own socket may come
            return
        claims.release(call_id, closed_by)
        if session.conversation is None:
            call = Call.get_or_none(Call.id == call_id)
            if call is not None and call.status not in FINAL_STATUSES:
                advance(
                    call.id,
                    Progress(
                        "failed", error="the relay socket closed before the conversation began"
                    ),
                )
            return
        if ended_itself(session.conversation):
            return  # the conversation wrote its end; its status is on its way (a worker's job)
        call = Call.get_or_none(Call.id == call_id)
        if call is None or call.status in FINAL_STATUSES:
            # it ended elsewhere (a voicemail left, a machine hung up on): that end is the record's
            return
        session.close("failed" if closed_by == "refused" else "hung_up")
        if ended_itself(session.conversation):
            return
        call = Call.get(Call.id == call_id)
        if call.status not in FINAL_STATUSES:
            advance(call.id, Progress(COMPLETED))

    # -- upkeep -----------------------------------------------------------------------------------

    async def upkeep(self) -> None:
        """Renew this process's claims and end calls no relay will hold, every RELAY_SWEEP_INTERVAL
        seconds."""
        while True:
            await asyncio.sleep(self.sweep_interval)
            try:
                await self.in_thread(claims.heartbeat, list(self.live))
                await self.in_thread(self.sweep)
            except Exception:  # noqa: BLE001 - the next round tries again
                log.exception("relay upkeep failed")

    def sweep(self) -> int:
        return claims.sweep_with_provider(self.app.config)

    def stats(self) -> dict:
        times = sorted(self.turn_ms)

        def percentile(p):
            return round(times[min(len(times) - 1, int(p * len(times)))], 3) if times else None

        return {
            "live_calls": len(self.live),
            "refused": self.refused,
            "records_pending": self.records.pending(),
            "records_written": self.records.written,
            "record_flushes": self.records.flushes,
            "turns": len(times),
            "turn_ms_p50": percentile(0.50),
            "turn_ms_p95": percentile(0.95),
            "turn_ms_p99": percentile(0.99),
        }

    # -- the process ------------------------------------------------------------------------------

    async def serve(
        self, host: str, port: int, *, ready=None, stop: asyncio.Future | None = None
    ) -> None:
        stop = stop or asyncio.get_running_loop().create_future()
        # the dialogue's date parser loads its data on first use (seconds): before the first call,
        # not during it
        await self.in_thread(warm_up, self.app.config["CALL_LANGUAGE"].split("-")[0])
        self.records.start()
        async with serve(
            self.handle,
            host,
            port,
            process_request=self.process_request,
            max_size=MAX_MESSAGE_BYTES,
            compression=None,
            ping_interval=20,
            ping_timeout=20,
            close_timeout=5,
            server_header=None,
        ) as server:
            upkeep = asyncio.create_task(self.upkeep())
            bound = [sock.getsockname()[1] for sock in server.sockets]
            log.info("relay listening on %s:%s", host, bound[0] if bound else port)
            if ready is not None:
                ready(bound[0] if bound else port)
            try:
                await stop
            finally:
                upkeep.cancel()
        self.turn_pool.shutdown(wait=True)
        self.call_pool.shutdown(wait=True)
        self.records.stop()


def ended_itself(conversation) -> bool:
    """Whether the conversation wrote its own end (the dialogue's do; a test's double may not)."""
    return getattr(conversation, "end_reason", None) is not None


def main(argv=None) -> None:
    """hirekit-relay [--host H] [--port P]: serve ConversationRelay sockets until SIGTERM/SIGINT."""
    import argparse

    from app import create_app

    app = create_app()
    sys.setswitchinterval(float(app.config["RELAY_SWITCH_INTERVAL"]))
    parser = argparse.ArgumentParser(prog="hirekit-relay", description=main.__doc__)
    parser.add_argument("--host", default=app.config["RELAY_HOST"])
    parser.add_argument("--port", type=int, default=int(app.config["RELAY_PORT"]))
    args = parser.parse_args(argv)

    async def run():
        loop = asyncio.get_running_loop()
        stop = loop.create_future()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, lambda: stop.done() or stop.set_result(None))
        await RelayServer(app).serve(
            args.host,
            args.port,
            stop=stop,
            ready=lambda port: print(f"relay ready on {args.host}:{port}", flush=True),
        )

    run_event_loop(run())


def run_event_loop(main_coroutine) -> None:
    """The relay's event loop: uvloop's (libuv; a dependency except on Windows, which it does not
    support), asyncio's own where it is absent. The relay spends most of its CPU in the loop and the
    sockets' reads and writes, which uvloop does in C."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main_coroutine)
        return
    uvloop.run(main_coroutine)


if __name__ == "__main__":
    main()
