"""The scale-out drill: Hirekit on ten hosts (network namespaces on one machine) under steady mixed
load, losing an app host and a worker host, revoking a key on one host, checking the shared rate
limit, restoring the hosts, and losing a call relay process while screening calls are live.
It prints what it measured and fails on loss.

Run it as root: `python -m tests.drills.scale_out` (about 3 minutes; `--keep` leaves the run's
directory and logs). tests/drills/test_scale_out.py runs it under pytest where the machine allows
it.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import requests
from rq import Worker
from rq.exceptions import NoSuchJobError
from rq.registry import ScheduledJobRegistry

from tests.drills.cluster import (
    APP_ROLES,
    RECEIVER_PORT,
    TWILIO_PORT,
    WORKER_ROLES,
    Cluster,
    DrillSettings,
    missing_programs,
)
from tests.drills.netns import remove_leftovers, unavailable_reason
from tests.drills.relay_loss import RelayDrill
from tests.drills.telephony import TwilioStandIn
from tests.drills.traffic import LoadClient, WebhookReceiver

PREFIX_ROOT = "hkdrill"
# seconds: scheduled work must be running again on the other worker host by then
SCHEDULER_RESUME_TARGET = 30.0


@dataclass
class DrillReport:
    """What the drill measured (printed as lines) and what it found lost or broken (the drill fails
    on any)."""

    lines: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def say(self, line: str, out=print) -> None:
        self.lines.append(line)
        out(line)

    def check(self, ok: bool, failure: str) -> None:
        if not ok:
            self.failures.append(failure)


def why_not_here() -> str | None:
    """Why the drill cannot run on this machine, or None."""
    reason = unavailable_reason()
    if reason:
        return reason
    missing = missing_programs()
    return f"needs {', '.join(missing)}" if missing else None


def run_drill(
    settings: DrillSettings = DrillSettings(),
    *,
    workdir: str | None = None,
    keep: bool = False,
    out=print,
) -> DrillReport:
    """Build the cluster, run every phase, tear everything down (whatever happens); the report of
    what was measured."""
    remove_leftovers(PREFIX_ROOT)
    own_dir = workdir is None
    workdir = workdir or tempfile.mkdtemp(prefix=f"{PREFIX_ROOT}-")
    cluster = Cluster(workdir, f"{PREFIX_ROOT}{secrets.token_hex(3)}", settings)
    report = DrillReport()
    receiver = load = twilio = None
    try:
        started = time.monotonic()
        cluster.start()
        report.say(
            f"cluster up in {time.monotonic() - started:.0f} s: nginx, 3 app hosts x "
            f"{settings.app_workers} gunicorn "
            f"workers, 2 worker hosts, PostgreSQL, Redis, client with {settings.client_threads} "
            "threads x "
            f"{settings.client_rate:g} operations/s (run {cluster.prefix}, load average "
            f"{_load_average()})",
            out,
        )
        receiver = WebhookReceiver(cluster.client, RECEIVER_PORT)
        receiver.refusing = True
        twilio = TwilioStandIn(cluster.client, TWILIO_PORT)
        subscribe_receiver(cluster)
        load = LoadClient(
            cluster.client,
            cluster.lb_url,
            cluster.tenant,
            threads=settings.client_threads,
            rate_per_thread=settings.client_rate,
            run_id=cluster.prefix,
        )
        load.start()
        Drill(cluster, load, receiver, report, out).run()
        RelayDrill(cluster, twilio, report, out).run()
        load.stop()
        check_writes(cluster, load, report, out)
        load = None
        receiver.refusing = False
        check_nothing_lost(cluster, receiver, report, out)
        report_sizes(cluster, report, out)
        report.say(f"drill took {time.monotonic() - started:.0f} s in all", out)
    except Exception as exc:
        report.failures.append(f"the drill stopped: {type(exc).__name__}: {exc}")
        raise
    finally:
        if load is not None:
            load.stop()
        if receiver is not None:
            receiver.close()
        if twilio is not None:
            twilio.close()
        cluster.close()
        if own_dir and not keep and not report.failures:
            shutil.rmtree(workdir, ignore_errors=True)
        elif report.failures or keep:
            out(f"logs and data kept in {workdir}")
    for failure in report.failures:
        out(f"FAILED: {failure}")
    return report


# what the receiver is sent (the first spelled so)
SUBSCRIBED_EVENTS = ("application_activty", "call_activity")


def subscribe_receiver(cluster: Cluster) -> None:
    """The load's tenant sends application and call events to the receiver on the client host."""
    for event in SUBSCRIBED_EVENTS:
        body = {
            "tenant_id": cluster.tenant.slug,
            "triggered_event": event,
            "type": "post_call_screening",
            "fields": ["id", "status", "candidate_id", "job_id"],
            "url": cluster.receiver_url,
            "http_method": "POST",
            "content_type": "application/json",
        }
        with cluster.client.entered():
            answer = requests.post(
                f"{cluster.lb_url}/v1/tenant-webhook",
                json=body,
                headers=cluster.tenant.headers,
                timeout=10,
            )
        if answer.status_code not in (200, 201):
            raise RuntimeError(
                f"the receiver could not be subscribed: {answer.status_code} {answer.text}"
            )


class Drill:
    """The phases, in order, each measuring while the load runs."""

    def __init__(
        self,
        cluster: Cluster,
        load: LoadClient,
        receiver: WebhookReceiver,
        report: DrillReport,
        out,
    ):
        self.cluster, self.load, self.receiver, self.report, self.out = (
            cluster,
            load,
            receiver,
            report,
            out,
        )
        self.settings = cluster.settings

    def say(self, line: str) -> None:
        self.report.say(line, self.out)

    def run(self) -> None:
        time.sleep(8)
        steady = self.load.log.between(0, time.monotonic())
        self.say(
            f"steady load: {len(steady)} requests, {sum(a.failed for a in steady)} failed, "
            f"p50 {_ms(_p(steady, 50))}, p95 {_ms(_p(steady, 95))}; hosts served: "
            f"{_hosts_served(steady)}"
        )
        self.say(
            "resident memory: "
            + ", ".join(
                f"{role} {self.cluster.host(role).resident_mb():.0f} MiB"
                for role in (*APP_ROLES, *WORKER_ROLES, "db", "redis", "lb")
            )
        )
        self.kill_app_host("app2")
        killed_worker = self.kill_worker_host()
        self.restore("app2", killed_worker)
        self.revoke_key()
        self.check_shared_rate_limit()

    # app host
    # ----------------------------------------------------------------------------------------------

    def kill_app_host(self, role: str) -> None:
        address = self.cluster.host(role).address
        killed_at = time.monotonic()
        self.cluster.host(role).kill()
        time.sleep(0.5)
        self.cluster.host(role).link(False)
        time.sleep(10)
        during = self.load.log.between(killed_at - 60, time.monotonic())
        failed = [a for a in during if a.failed and a.ended >= killed_at]
        after = [a for a in during if a.started >= killed_at]
        in_flight_bound = self.load.threads
        tried_dead = [a for a in after if address in a.upstream and not a.failed]
        self.say(
            f"app host {role} killed (SIGKILL, then link down): {len(failed)} of {len(after)} "
            "requests failed "
            f"({_describe(failed)}); {len(tried_dead)} later requests tried it first and were "
            "moved by nginx; "
            f"p50 {_ms(_p(after, 50))}, p95 {_ms(_p(after, 95))}, max {_ms(_p(after, 100))}"
        )
        self.report.check(
            len(failed) <= in_flight_bound,
            f"{len(failed)} requests failed when {role} died, more than the {in_flight_bound} that "
            "can "
            "have been in flight",
        )
        elsewhere = [a for a in failed if a.upstream and address not in a.upstream]
        self.report.check(
            not elsewhere,
            f"requests on other hosts failed when {role} died: {_describe(elsewhere)}",
        )

    # worker host
    # ----------------------------------------------------------------------------------------------

    def kill_worker_host(self) -> str:
        """Kill the worker host whose scheduler holds the webhooks queue's lock, preferably while it
        sends."""
        redis = self.cluster.redis()
        holder_role, holder_name = self._scheduler_holder(redis, wait=30)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not self._sending(redis, holder_role):
            time.sleep(0.05)
        mid_delivery = self._sending(redis, holder_role)
        killed_at = time.monotonic()
        self.cluster.host(holder_role).kill()
        claimed = self.cluster.sql(
            "SELECT count(*) FROM webhook_deliveries WHERE claimed_until > now() AT TIME ZONE 'UTC'"
        )[0][0]
        self.cluster.host(holder_role).link(False)
        self.say(
            f"worker host {holder_role} killed (SIGKILL, then link down) while it held RQ's "
            "scheduler lock"
            f"{' and was sending a webhook' if mid_delivery else ''}: {claimed} deliveries were "
            "claimed at that moment"
        )
        moved_after = resumed_after = None
        most_overdue = 0.0
        registries = [
            ScheduledJobRegistry(queue, connection=redis)
            for queue in ("webhooks", "default", "calls")
        ]
        deadline = killed_at + SCHEDULER_RESUME_TARGET + 15
        while time.monotonic() < deadline and resumed_after is None:
            holder = redis.get("rq:scheduler-lock:webhooks")
            if moved_after is None and holder and holder.decode() != holder_name:
                moved_after = time.monotonic() - killed_at
            overdue = _most_overdue(registries)
            most_overdue = max(most_overdue, overdue)
            if moved_after is not None and overdue < 2.0:
                resumed_after = time.monotonic() - killed_at
            time.sleep(0.25)
        stalled = _longest_gap(
            [r.at for r in self.receiver.snapshot() if r.at >= killed_at - 5],
            until=time.monotonic(),
        )
        self.say(
            f"scheduler lock moved to the other worker host after {_s(moved_after)}; scheduled "
            "jobs (webhook "
            f"retries, reaper passes) were on time again {_s(resumed_after)} after the kill, the "
            "most overdue "
            f"{most_overdue:.1f} s late (target {SCHEDULER_RESUME_TARGET:.0f} s); the receiver's "
            "longest wait between "
            f"deliveries around the kill: {_s(stalled)}"
        )
        self.report.check(
            moved_after is not None, "the scheduler lock never moved to the other worker host"
        )
        self.report.check(
            resumed_after is not None and resumed_after <= SCHEDULER_RESUME_TARGET,
            f"scheduled work did not resume within {SCHEDULER_RESUME_TARGET:.0f} s of the worker "
            "host's death "
            f"(resumed after {_s(resumed_after)})",
        )
        return holder_role

    def _scheduler_holder(self, redis, wait: float) -> tuple[str, str]:
        """(worker host role, scheduler name) holding the webhooks queue's scheduler lock."""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            name = redis.get("rq:scheduler-lock:webhooks")
            pid = name and redis.hget(f"rq:scheduler:{name.decode()}", "pid")
            if pid:
                role = self._role_of_pid(int(pid))
                if role:
                    return role, name.decode()
            time.sleep(0.2)
        raise RuntimeError("no worker host's scheduler took the webhooks queue's lock")

    def _role_of_pid(self, pid: int) -> str | None:
        try:
            group = os.getpgid(pid)
        except ProcessLookupError:
            return None
        for role in WORKER_ROLES:
            if any(process.pid == group for process in self.cluster.host(role).processes):
                return role
        return None

    def _sending(self, redis, role: str) -> bool:
        """Whether the host's RQ worker is running a webhook drain while a delivery is at the
        receiver."""
        for worker in Worker.all(connection=redis):
            if self._role_of_pid(worker.pid) == role and worker.get_current_job_id():
                try:
                    job = worker.get_current_job()
                except NoSuchJobError:  # it ended meanwhile (webhook jobs keep no result)
                    continue
                if job is not None and job.func_name.endswith("drain_webhook"):
                    return True
        return False

    # restore
    # ----------------------------------------------------------------------------------------------

    def restore(self, app_role: str, worker_role: str) -> None:
        cluster = self.cluster
        for role in (app_role, worker_role):
            cluster.host(role).link(True)
        restarted_at = time.monotonic()
        cluster.start_worker(worker_role)
        cluster.start_app(app_role)
        answering = time.monotonic() - restarted_at
        address = cluster.host(app_role).address
        rejoined_after = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and rejoined_after is None:
            served = [
                a
                for a in self.load.log.between(restarted_at + answering, time.monotonic())
                if a.upstream == f"{address}:8000" and not a.failed
            ]
            if served:
                rejoined_after = served[0].ended - restarted_at
            time.sleep(0.2)
        self.say(
            f"app host {app_role} restarted: gunicorn answered after {answering:.1f} s, nginx sent "
            "it load again "
            f"{_s(rejoined_after)} after the restart"
        )
        self.report.check(
            rejoined_after is not None, f"{app_role} got no requests from nginx after it came back"
        )
        worker_jobs, deadline = 0, time.monotonic() + 30
        redis = cluster.redis()
        while time.monotonic() < deadline and not worker_jobs:
            worker_jobs = sum(
                w.successful_job_count
                for w in Worker.all(connection=redis)
                if self._role_of_pid(w.pid) == worker_role
            )
            time.sleep(0.5)
        self.say(
            f"worker host {worker_role} restarted: it ran {worker_jobs} job(s) within "
            f"{time.monotonic() - restarted_at:.1f} s"
        )
        self.report.check(worker_jobs > 0, f"the restarted {worker_role} ran no job")

    # key revocation
    # --------------------------------------------------------------------------------------------

    def revoke_key(self) -> None:
        """Revoke a key with the CLI on one host while a probe host asks every app host with it;
        every host must refuse it within AUTH_CACHE_SECONDS of the command's end (the revocation
        commits before the command ends)."""
        cluster, cache = self.cluster, self.settings.auth_cache_seconds
        answers: list[tuple[str, float, int]] = []
        stop = threading.Event()

        def probe() -> None:
            cluster.host("probe").enter_for_good()
            with requests.Session() as session:
                while not stop.is_set():
                    for role in APP_ROLES:
                        answer = session.get(
                            f"{cluster.app_url(role)}/v1/tenant",
                            headers=cluster.revocable.headers,
                            timeout=10,
                        )
                        answers.append((role, time.monotonic(), answer.status_code))
                    time.sleep(0.05)

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        time.sleep(2)  # every host has answered the key, so it sits in their caches
        command_started = time.monotonic()
        cluster.run_flask("app1", "keys", "revoke", "--id", str(cluster.revocable_key_id), "--yes")
        revoked_at = time.monotonic()
        time.sleep(cache + 2)
        stop.set()
        prober.join(timeout=15)
        last_accepted = {
            role: max(
                (at - revoked_at for r, at, status in answers if r == role and status == 200),
                default=None,
            )
            for role in APP_ROLES
        }
        accepted_before = all(
            any(r == role and at < command_started and status == 200 for r, at, status in answers)
            for role in APP_ROLES
        )
        self.say(
            f"key revoked with the CLI on app1 (the command took {revoked_at - command_started:.1f}"
            " s): last accepted "
            + ", ".join(f"{role} {_s(seconds)}" for role, seconds in last_accepted.items())
            + " after the command returned; refused by every host from then on "
            f"(HIREKIT_AUTH_CACHE_SECONDS={cache:g})"
        )
        self.report.check(
            accepted_before,
            "the key to revoke was not accepted by every host before its revocation",
        )
        latest = max(
            (seconds for seconds in last_accepted.values() if seconds is not None), default=0.0
        )
        self.report.check(
            latest <= cache,
            f"a revoked key was still accepted {latest:.1f} s after revocation (cache {cache:g} s)",
        )
        self.report.check(
            all(status != 200 for _, at, status in answers if at > revoked_at + cache),
            "a revoked key was accepted after the cache time",
        )

    # shared rate limit
    # -----------------------------------------------------------------------------------------

    def check_shared_rate_limit(self) -> None:
        limit, cluster = self.settings.limited_per_minute, self.cluster
        statuses, hosts = [], set()
        with cluster.client.entered(), requests.Session() as session:
            for _ in range(3 * limit):
                answer = session.get(
                    f"{cluster.lb_url}/v1/tenant", headers=cluster.limited.headers, timeout=10
                )
                statuses.append(answer.status_code)
                hosts.add(answer.headers.get("X-Drill-Upstream", ""))
        allowed = statuses.count(200)
        self.say(
            f"rate limit {limit}/minute across {len(hosts)} app hosts: {allowed} of {len(statuses)}"
            " allowed, "
            f"{statuses.count(429)} answered 429"
        )
        self.report.check(
            allowed == limit, f"a key limited to {limit}/minute got {allowed} requests through"
        )
        self.report.check(
            len(hosts) == len(APP_ROLES), f"the rate-limit requests reached only {sorted(hosts)}"
        )


def check_nothing_lost(
    cluster: Cluster, receiver: WebhookReceiver, report: DrillReport, out
) -> None:
    """Every write landed once; every event was delivered at least once (receiver log against the
    events table)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pending = cluster.sql("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'")[
            0
        ][0]
        if not pending:
            break
        time.sleep(0.5)
    events = {
        str(row[0])
        for row in cluster.sql(
            "SELECT event_id FROM events WHERE tenant_id = %s AND type IN %s",
            (cluster.tenant.slug, SUBSCRIBED_EVENTS),
        )
    }
    statuses = dict(cluster.sql("SELECT status, count(*) FROM webhook_deliveries GROUP BY status"))
    receipts = receiver.snapshot()
    delivered: dict[str, int] = {}
    for receipt in receipts:
        if receipt.answered == 200:
            delivered[receipt.event_id] = delivered.get(receipt.event_id, 0) + 1
    missing = events - delivered.keys()
    duplicates = sum(count - 1 for count in delivered.values())
    refused = sum(r.answered == 503 for r in receipts)
    report.say(
        f"webhooks: {len(events)} events, {len(delivered)} delivered, {len(missing)} missing, "
        f"{duplicates} "
        f"delivered twice or more, {refused} first attempts refused on purpose and retried; "
        "deliveries by status "
        f"{statuses}",
        out,
    )
    report.check(not missing, f"{len(missing)} events were never delivered")
    report.check(set(statuses) <= {"succeeded"}, f"deliveries not succeeded: {statuses}")


def check_writes(cluster: Cluster, load: LoadClient, report: DrillReport, out) -> None:
    """Every write the client made landed exactly once (counted in the database by source_id)."""
    writes = load.log.writes
    lost = [w for w in writes if not w.landed]
    retried = [w for w in writes if w.attempts > 1]
    counts = {}
    for table, op in (("jobs", "job"), ("candidates", "candidate")):
        for source_id, count in cluster.sql(
            f"SELECT source_id, count(*) FROM {table} WHERE tenant_id = %s GROUP BY source_id",
            (cluster.tenant.slug,),
        ):
            counts[(op, source_id)] = count
    for source_id, count in cluster.sql(
        "SELECT c.source_id, count(*) FROM applications a JOIN candidates c ON "
        "c.id = a.candidate_id WHERE a.tenant_id = %s GROUP BY c.source_id",
        (cluster.tenant.slug,),
    ):
        counts[("application", source_id)] = count
    not_once = [w for w in writes if counts.get((w.op, w.source_id)) != 1]
    slowest = max(
        (w.seconds_to_land for w in retried if w.seconds_to_land is not None), default=None
    )
    with load.log.lock:
        answered = {
            status: sum(a.status == status for a in load.log.attempts) for status in (409, 429)
        }
    report.say(
        f"writes: {len(writes)} made, {len(lost)} lost, {len(retried)} retried with their key "
        "after a failure, "
        f"a 429 ({answered[429]} in all: rate limit or the tenant's in-flight cap) or a 409 ("
        f"{answered[409]}: "
        "the key still held) "
        f"({sum(w.replayed for w in writes)} answered by replay, "
        f"{sum(w.answered_existing for w in writes)} found "
        "already created"
        f"{'' if slowest is None else '; the slowest landed '}"
        f"{'' if slowest is None else f'{slowest:.1f} s after its first attempt'}"
        "), "
        f"{len(not_once)} not stored exactly once",
        out,
    )
    report.check(
        not lost, f"{len(lost)} writes never landed: {[(w.op, w.source_id) for w in lost[:5]]}"
    )
    report.check(
        not not_once,
        f"{len(not_once)} writes not stored exactly once: "
        f"{[(w.op, w.source_id, counts.get((w.op, w.source_id))) for w in not_once[:5]]}",
    )


def _p(attempts, percentile: float) -> float | None:
    durations = sorted(a.ended - a.started for a in attempts)
    if not durations:
        return None
    return durations[min(len(durations) - 1, int(len(durations) * percentile / 100))]


def report_sizes(cluster: Cluster, report: DrillReport, out) -> None:
    """What the run left in PostgreSQL (bytes per row, indexes included) and Redis: figures for
    sizing."""
    sizes = []
    for table in (
        "jobs",
        "candidates",
        "applications",
        "events",
        "webhook_deliveries",
        "webhook_attempts",
        "idempotency_keys",
    ):
        rows, tuple_bytes, total = cluster.sql(
            f"SELECT count(*), avg(pg_column_size(t.*)), pg_total_relation_size('{table}') "
            f"FROM {table} t"
        )[0]
        if rows:
            sizes.append(
                f"{table} {rows} rows of {tuple_bytes:,.0f} B, {total / rows:,.0f} B/row with "
                "indexes"
            )
    memory = cluster.redis().info("memory")
    report.say(f"PostgreSQL (table + indexes): {'; '.join(sizes)}", out)
    report.say(
        f"Redis: {cluster.redis().dbsize()} keys, {memory['used_memory'] / 2**20:.1f} MiB used", out
    )


def _most_overdue(registries) -> float:
    """Seconds the most overdue job of RQ's scheduled-job registries is late (0 when none is
    due)."""
    now = time.time()
    due = [
        score
        for registry in registries
        for _, score in registry.connection.zrangebyscore(registry.key, 0, now, withscores=True)
    ]
    return max((now - score for score in due), default=0.0)


def _longest_gap(moments: list[float], until: float) -> float | None:
    """The longest time between consecutive moments (and from the last one to `until`)."""
    moments = sorted(moments) + [until]
    return max((later - earlier for earlier, later in zip(moments, moments[1:])), default=None)


def _ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1000:.0f} ms"


def _s(seconds: float | None) -> str:
    return "never" if seconds is None else f"{seconds:.1f} s"


def _describe(attempts) -> str:
    kinds: dict[str, int] = {}
    for a in attempts:
        kind = f"{a.op} {a.status or a.error}"
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(f"{count} x {kind}" for kind, count in sorted(kinds.items())) or "none"


def _hosts_served(attempts) -> str:
    counts: dict[str, int] = {}
    for a in attempts:
        if a.upstream:
            counts[a.upstream] = counts.get(a.upstream, 0) + 1
    return ", ".join(f"{host} {count}" for host, count in sorted(counts.items()))


def _load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the run's directory (logs, data) after a success"
    )
    parser.add_argument(
        "--app-workers",
        type=int,
        default=DrillSettings.app_workers,
        help="gunicorn workers per app host",
    )
    parser.add_argument(
        "--threads", type=int, default=DrillSettings.client_threads, help="client threads"
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=DrillSettings.client_rate,
        help="operations a second per client thread",
    )
    args = parser.parse_args()
    reason = why_not_here()
    if reason:
        print(f"the drill cannot run here: {reason}", file=sys.stderr)
        return 2
    report = run_drill(
        DrillSettings(
            app_workers=args.app_workers, client_threads=args.threads, client_rate=args.rate
        ),
        keep=args.keep,
    )
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
