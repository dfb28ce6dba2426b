"""A fair share of each worker's request threads that wastes none.

A tenant alone may use every thread, and only while another tenant is being served does it keep to
TENANT_MAX_IN_FLIGHT requests in progress in one worker process, so a tenant sending its slowest
legal requests from many connections leaves threads to the others.

Rate limits count requests over a minute; they cannot stop eight slow requests at once from taking
all eight threads of two workers, which is what let one tenant hold another's GET by id for seconds.
So when another tenant has a request in progress in the worker, or had one within
OTHERS_PRESENT_SECONDS (a client between two requests is still there), a request over its tenant's
cap waits up to TENANT_IN_FLIGHT_WAIT seconds for one of its tenant's requests to finish (a burst of
quick requests passes), but only while a thread of the worker stays free for the others (a waiter
holds a thread too); otherwise, or when no place came, it answers 429 with `Retry-After` at once,
before its body is read. With no other tenant around the cap does not apply: an integration's
parallel sync on an idle server is never refused for concurrency. Requests without a caller (health
checks, the public board) are not counted: unauthenticated floods meet the failed-authentication
limit instead (app.security.limits).

The counts are per worker process, the unit that owns the threads: under contention a tenant holds
at most W x cap threads of a host's W x HIREKIT_WEB_THREADS, and every worker keeps threads free for
the others."""

from __future__ import annotations

import threading
import time

from flask import g

from app.errors import error_response

GATE_ATTRIBUTE = "in_flight_tenant"  # on g: the tenant this request was counted for


OTHERS_PRESENT_SECONDS = (
    1.0  # how long after its last request ended another tenant still makes the cap bind
)


class InFlightGate:
    """Counts each tenant's requests in progress in this process. Past its cap, while another
    tenant is present, `enter` may wait a little for a free place, as long as waiting leaves a
    thread of the worker's `threads` free for the other tenants."""

    def __init__(
        self,
        cap: int,
        wait_seconds: float,
        threads: int,
        present_seconds: float = OTHERS_PRESENT_SECONDS,
    ):
        self.cap = cap
        self.wait_seconds = wait_seconds
        self.threads = threads
        self.present_seconds = present_seconds
        self._counts: dict[str, int] = {}
        self._last_seen: dict[str, float] = {}  # tenant -> when its last request entered or left
        self._admitted = 0  # requests of every tenant in progress
        self._waiting = 0  # requests holding a thread while they wait for a place
        self._freed = threading.Condition(threading.Lock())

    def enter(self, tenant_id: str) -> bool:
        """Count a request for the tenant; over its cap while another tenant is present, wait up to
        wait_seconds for a place when a thread would still be free for others meanwhile. False when
        no place came."""
        with self._freed:
            counts = self._counts
            if counts.get(tenant_id, 0) >= self.cap and self._others_present(tenant_id):
                if (
                    self._admitted + self._waiting + 2 > self.threads
                ):  # this waiter and one thread kept for others
                    return False
                self._waiting += 1
                try:
                    if not self._freed.wait_for(
                        lambda: (
                            counts.get(tenant_id, 0) < self.cap
                            or not self._others_present(tenant_id)
                        ),
                        timeout=self.wait_seconds,
                    ):
                        return False
                finally:
                    self._waiting -= 1
            counts[tenant_id] = counts.get(tenant_id, 0) + 1
            self._admitted += 1
            self._last_seen[tenant_id] = time.monotonic()
            return True

    def leave(self, tenant_id: str) -> None:
        with self._freed:
            remaining = self._counts[tenant_id] - 1
            if remaining:
                self._counts[tenant_id] = remaining
            else:
                del self._counts[tenant_id]
            self._admitted -= 1
            self._last_seen[tenant_id] = time.monotonic()
            self._freed.notify_all()

    def in_progress(self, tenant_id: str) -> int:
        with self._freed:
            return self._counts.get(tenant_id, 0)

    def _others_present(self, tenant_id: str) -> bool:
        """Whether another tenant has a request in progress here or had one within
        present_seconds (under the lock); tenants gone longer are forgotten on the way."""
        horizon = time.monotonic() - self.present_seconds
        present = False
        for other, seen in list(self._last_seen.items()):
            if other in self._counts or seen >= horizon:
                present = present or other != tenant_id
            else:
                del self._last_seen[other]
        return present


def tenant_cap(config) -> int:
    """TENANT_MAX_IN_FLIGHT; when it is 0, half of the worker's request threads (at least one);
    below 0, no cap."""
    configured = int(config["TENANT_MAX_IN_FLIGHT"])
    if configured < 0:
        return 0
    return configured or max(1, int(config["WEB_THREADS"]) // 2)


def init_app(app) -> None:
    """Register the gate after authentication and the rate limit (a tenant over its rate is refused
    without waiting)."""
    gate = InFlightGate(
        tenant_cap(app.config),
        float(app.config["TENANT_IN_FLIGHT_WAIT"]),
        int(app.config["WEB_THREADS"]),
    )
    app.extensions["hirekit_fair_share"] = gate
    if gate.cap <= 0:
        return

    def admit():
        ctx = g._get_current_object()
        caller = ctx.get("caller")
        if caller is None:
            return None
        tenant_id = caller.tenant_id
        if not gate.enter(tenant_id):
            return error_response(
                429,
                f"Your organisation already has {gate.cap} requests in progress on this server: "
                "retry when one has finished (Retry-After), or send fewer at once. Higher limits "
                "are available on request.",
                headers={"Retry-After": "1"},
            )
        setattr(ctx, GATE_ATTRIBUTE, tenant_id)
        return None

    def release(_exception=None):
        tenant_id = g.pop(GATE_ATTRIBUTE, None)
        if tenant_id is not None:
            gate.leave(tenant_id)

    app.before_request(admit)
    app.teardown_request(release)
