"""RQ's scheduler, made to come back within seconds of a worker restart instead of ten minutes.

Why: RQ moves scheduled jobs (webhook retries, scheduled calls, reaper passes) onto their queues
from one scheduler process per queue, the one whose worker holds `rq:scheduler-lock:<queue>`. The
lock's value is the scheduler's name, its TTL 61 s, refreshed every second by the scheduler's
heartbeat. A worker that finds the lock taken at start runs without a scheduler and only tries again
at its maintenance pass, every 10 minutes. A worker killed by SIGKILL (OOM, crash) leaves its lock
for up to 61 s, so a replacement started 2 s later (systemd's RestartSec=2) left scheduled work
waiting for ten minutes.

How: every worker here forks its scheduler process at start, holding the locks or not (a standby). A
scheduler without all of its queues' locks tries again every LOCK_RETRY_SECONDS, and takes over a
lock whose holder has not refreshed it for STALE_AFTER_SECONDS. "Not refreshed for" is read from the
lock key's remaining TTL (a holder refreshes it to 61 s every second), on Redis's own clock: no host
clocks are compared. After a crash, scheduled work resumes at most about STALE_AFTER_SECONDS +
LOCK_RETRY_SECONDS + 1 s after the dead holder's last heartbeat, whatever the restart delay.

Why this runs no job twice beyond RQ's at-least-once:
- Taking a lock is one Lua script (read holder and TTL, then SET): of two standbys racing for a dead
  holder's lock one wins, and the other then finds a lock its new holder refreshes every second.
- A live scheduler refreshes its lock every second, so it loses it only after STALE_AFTER_SECONDS
  (15 heartbeats) of silence. Its next heartbeat, which RQ runs before every enqueue pass, sees
  another owner and drops the queue (RQScheduler.heartbeat), so from then on it moves nothing.
- What remains is a scheduler frozen for 15 s or more in the middle of an enqueue pass (after
  reading the due job ids, before its pipeline runs): on waking it may put on the queue a job the
  new holder also moved, which then runs twice. RQ has the same window when its 61 s lock expires
  under a frozen holder, and a worker killed mid-job re-runs that job too: jobs are delivered at
  least once, and the jobs here are written for it (a webhook delivery is claimed row by row and
  carries the same `webhook-id` on every attempt, a reaper pass is idempotent).
"""

from __future__ import annotations

import logging
from datetime import datetime

from rq.defaults import DEFAULT_LOGGING_DATE_FORMAT, DEFAULT_LOGGING_FORMAT
from rq.scheduler import RQScheduler

log = logging.getLogger("hirekit.worker")

# What this module relies on in RQ beyond its documented API (tests/test_private_overrides.py checks
# it against the code), each with what a user would notice without it.
PRIVATE_OVERRIDES = {
    "rq": {
        "private ._queue_names": "RQScheduler's queues: a worker restarted after a crash leaves "
        "scheduled work (webhook "
        "retries, scheduled calls) waiting up to 10 minutes instead of about 21 s",
        "private ._process": "the scheduler's process, started at once when none runs (the same 10 "
        "minutes)",
        "StandbyScheduler touches self._queue_names of rq.scheduler.RQScheduler": "see "
        "._queue_names "
        "(10 minutes)",
        "StandbyScheduler touches self._process of rq.scheduler.RQScheduler": "see ._process (10 "
        "minutes)",
        "StandbyScheduler touches self._acquired_locks of rq.scheduler.RQScheduler": "the locks "
        "taken over, "
        "which RQ's "
        "heartbeat refreshes every 1 s (without it the taken-over queues wait the 10 minutes)",
        "StandbyScheduler "
        "touches self._scheduled_job_registries of rq.scheduler.RQScheduler": "reset "
        "with the locks, as "
        "RQ's acquire_locks does, so the registries of 1 or more queues taken over are read again",
    }
}

LOCK_RETRY_SECONDS = 5  # how often a scheduler without all its locks tries again (RQ: 10 minutes)
# a lock not refreshed for this long belongs to a dead scheduler (it refreshes every second)
STALE_AFTER_SECONDS = 15

# KEYS[1] lock key; ARGV[1] our name; ARGV[2] TTL in seconds; ARGV[3] silence (ms) after which a
# holder counts as dead. Returns 1 acquired (free), 2 refreshed (ours), 3 taken over (holder silent
# too long), 0 held by a live holder.
ACQUIRE_OR_TAKE_OVER_LOCK = """
local holder = redis.call('GET', KEYS[1])
if not holder then
    redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
    return 1
elseif holder == ARGV[1] then
    redis.call('EXPIRE', KEYS[1], ARGV[2])
    return 2
end
local silent_ms = tonumber(ARGV[2]) * 1000 - redis.call('PTTL', KEYS[1])
if silent_ms >= tonumber(ARGV[3]) then
    redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
    return 3
end
return 0
"""
OUTCOMES = {0: "taken", 1: "acquired", 2: "refreshed", 3: "taken over"}


class StandbyScheduler(RQScheduler):
    """An RQScheduler that re-checks its locks every few seconds and takes over the lock of a
    scheduler that died."""

    lock_retry_seconds = LOCK_RETRY_SECONDS
    stale_after_seconds = STALE_AFTER_SECONDS

    @property
    def lock_ttl(self) -> int:
        return self.interval + 60  # what RQ sets and what its heartbeat refreshes to

    @property
    def should_reacquire_locks(self) -> bool:
        if self._queue_names == self.acquired_locks:
            return False
        if not self.lock_acquisition_time:
            return True
        return (
            datetime.now() - self.lock_acquisition_time
        ).total_seconds() >= self.lock_retry_seconds

    def acquire_or_take_over(self, name: str) -> str:
        """Take one queue's lock: free, already ours, or left by a holder silent for
        stale_after_seconds."""
        script = self.connection.register_script(ACQUIRE_OR_TAKE_OVER_LOCK)
        key = self.get_locking_key(name)
        holder = self.connection.get(key)
        outcome = OUTCOMES[
            script(
                keys=[key], args=[self.name, self.lock_ttl, int(self.stale_after_seconds * 1000)]
            )
        ]
        if outcome == "taken over":
            log.warning(
                "scheduler %s took over the scheduler lock of queue %s from %s, silent for %ss or "
                "more",
                self.name,
                name,
                holder.decode() if isinstance(holder, bytes) else holder,
                self.stale_after_seconds,
            )
        elif outcome == "acquired":
            log.info("scheduler %s acquired the scheduler lock of queue %s", self.name, name)
        return outcome

    def acquire_locks(self, auto_start: bool = False):
        """RQ's acquire_locks with takeover; auto_start starts the scheduler process even without a
        lock (standby)."""
        owned = {name for name in self._queue_names if self.acquire_or_take_over(name) != "taken"}
        self._scheduled_job_registries = []
        self._acquired_locks = owned
        self.lock_acquisition_time = datetime.now()
        if auto_start and (not self._process or not self._process.is_alive()):
            self.start()
        return owned


class StandbySchedulerWorker:
    """Worker mixin: the scheduler is a StandbyScheduler, started whether or not it got its locks at
    start."""

    def _start_scheduler(
        self,
        burst: bool = False,
        logging_level: str | None = "INFO",
        date_format: str = DEFAULT_LOGGING_DATE_FORMAT,
        log_format: str = DEFAULT_LOGGING_FORMAT,
    ):
        self.scheduler = StandbyScheduler(
            self.queues,
            connection=self.connection,
            logging_level=logging_level if logging_level is not None else self.log.level,
            date_format=date_format,
            log_format=log_format,
            serializer=self.serializer,
        )
        self.scheduler.acquire_locks()
        if not burst:
            self.scheduler.start()
            return
        if self.scheduler.acquired_locks:  # burst: move what is due once, as RQ does, and let go
            try:
                self.scheduler.register_birth()
                self.scheduler.enqueue_scheduled_jobs()
            finally:
                self.scheduler.release_locks()
                self.scheduler.register_death()


def with_standby_scheduler(worker_class: type) -> type:
    """`worker_class` (an RQ worker class) with a StandbyScheduler."""
    return type(
        worker_class.__name__, (StandbySchedulerWorker, worker_class), {"__module__": __name__}
    )
