"""Live calls' records written behind their turns, so a busy relay commits a few times a second
instead of once a turn and no turn waits on a commit; and ended calls' completions handed to the
workers a few at a time, in one job, instead of one job each.

Each turn's save replaces its call's pending record (already serialized, so the turn may go on
changing its own lists); one thread writes every pending record in one transaction each
RELAY_RECORD_INTERVAL seconds. A record write never lands on an ended call (the end is written
whole, at once, by the call's close), so a pending record written after the end changes nothing.
What a process killed outright loses is at most one interval of turns of calls the sweep then
fails anyway; a process stopped with SIGTERM writes what is pending before it exits.

A call's end is written at once by its close; what that end means (status, assessment, event) is
a worker's job. Ends wait at most RELAY_COMPLETION_INTERVAL seconds after the previous hand-on
(none when the relay was idle), so at 500 live calls a job carries several calls and the workers
pay a job's own cost once for them."""

from __future__ import annotations

import logging
import threading
import time

from app.data.db import database

log = logging.getLogger("hirekit.calls.relay")


class RecordWriter:
    """save(call_id, fields) keeps the latest fields of each call; the writer thread applies them
    with `write(call_id, fields)` (the dialogue's own update, with its guard) in one transaction
    every `interval` seconds."""

    def __init__(
        self, app, *, write, interval: float, complete=None, completion_interval: float = 0.0
    ):
        self.app = app
        self.write = write
        self.interval = interval
        # complete(ends): the ended calls' completions, handed on in one go
        self.complete_ends = complete
        self.completion_interval = completion_interval
        self._pending: dict[str, dict] = {}
        self._ends: list[tuple] = []
        self._ends_due = 0.0  # the monotonic time before which ends wait for company
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.written = 0  # records written, for /stats
        self.flushes = 0

    def save(self, call_id: str, fields: dict) -> None:
        with self._lock:
            self._pending[call_id] = fields

    def pending(self) -> int:
        return len(self._pending)

    def complete(
        self, call_id: str, status: str, *, error: str | None, voicemail_left: bool
    ) -> None:
        """Hand the ended call's completion on with the next batch (its end is already written)."""
        with self._lock:
            self._ends.append((str(call_id), status, error, voicemail_left))

    def hand_on_ends(self, *, force: bool = False) -> int:
        """Hand the waiting ends on in one go once their time has come (or now, with `force`); on
        failure they wait for the next pass. Answers how many were handed on."""
        with self._lock:
            if not self._ends or (not force and time.monotonic() < self._ends_due):
                return 0
            ends, self._ends = self._ends, []
        try:
            with self.app.app_context():
                self.complete_ends(ends)
        except Exception:  # noqa: BLE001 - the queue is away: kept for the next pass
            log.exception("handing on %d ended calls failed; kept for the next pass", len(ends))
            with self._lock:
                self._ends = ends + self._ends
            return 0
        self._ends_due = time.monotonic() + self.completion_interval
        return len(ends)

    def flush(self) -> int:
        """Write every pending record in one transaction; on failure they stay pending (unless a
        newer save replaced one) for the next pass. Answers how many were written."""
        with self._lock:
            batch, self._pending = self._pending, {}
        if not batch:
            return 0
        try:
            with self.app.app_context(), database.atomic():
                for call_id, fields in batch.items():
                    self.write(call_id, fields)
        except Exception:  # noqa: BLE001 - the database is away: kept for the next pass
            log.exception("writing %d live call records failed; kept for the next pass", len(batch))
            with self._lock:
                self._pending = {**batch, **self._pending}
            return 0
        self.written += len(batch)
        self.flushes += 1
        return len(batch)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="relay-records", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and write what is pending."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        self.flush()
        self.hand_on_ends(force=True)

    def _run(self) -> None:
        while not self._stopping.wait(self.interval):
            self.flush()
            self.hand_on_ends()
