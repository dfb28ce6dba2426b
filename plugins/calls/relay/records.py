"""Live calls' records written behind their turns, so a busy relay commits a few times a second
instead of once a turn and no turn waits on a commit.

Each turn's save replaces its call's pending record (already serialized, so the turn may go on
changing its own lists); one thread writes every pending record in one transaction each
RELAY_RECORD_INTERVAL seconds. A record write never lands on an ended call (the end is written
whole, at once, by the call's close), so a pending record written after the end changes nothing.
What a process killed outright loses is at most one interval of turns of calls the sweep then
fails anyway; a process stopped with SIGTERM writes what is pending before it exits."""

from __future__ import annotations

import logging
import threading

from app.data.db import database

log = logging.getLogger("hirekit.calls.relay")


class RecordWriter:
    """save(call_id, fields) keeps the latest fields of each call; the writer thread applies them
    with `write(call_id, fields)` (the dialogue's own update, with its guard) in one transaction
    every `interval` seconds."""

    def __init__(self, app, *, write, interval: float):
        self.app = app
        self.write = write
        self.interval = interval
        self._pending: dict[str, dict] = {}
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

    def _run(self) -> None:
        while not self._stopping.wait(self.interval):
            self.flush()
