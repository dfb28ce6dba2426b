"""The scale-out drill's call phase: screening calls placed through the API, dialled by the worker
hosts, answered through nginx by the app hosts' relay processes; one relay process is killed while
its calls are live. No call may stay in progress: the dead relay's calls end failed, on the
provider's `completed` event, or, for the one whose event the drill withholds, by another relay's
sweep after HIREKIT_RELAY_QUIET_SECONDS (which also hangs it up at the provider); every other call
talks to its end and completes, and calls placed after the kill all reach a live relay."""

from __future__ import annotations

import os
import signal
import time

import requests

from plugins.calls.models import FINAL_STATUSES
from tests.drills.cluster import APP_ROLES, Cluster
from tests.drills.telephony import TwilioStandIn
from tests.factories import job_body

CALLS_BEFORE = 9  # live when a relay dies: about three a relay
CALLS_AFTER = 6  # placed right after it died
QUESTIONS = (
    "How many years of ICU experience do you have?",
    "Do you hold a current BLS certification?",
    "Can you work night shifts?",
)


class RelayDrill:
    """The phase, run while the drill's load goes on; what it measures goes to the drill's
    report."""

    def __init__(self, cluster: Cluster, twilio: TwilioStandIn, report, out):
        self.cluster, self.twilio, self.report, self.out = cluster, twilio, report, out
        self.settings = cluster.settings
        self.session = requests.Session()
        self.headers = cluster.tenant.headers

    def say(self, line: str) -> None:
        self.report.say(line, self.out)

    def api(self, method: str, path: str, **options) -> requests.Response:
        with self.cluster.client.entered():
            return self.session.request(
                method, f"{self.cluster.lb_url}{path}", headers=self.headers, timeout=30, **options
            )

    def run(self) -> None:
        job = self.job()
        before = [self.place(job, n) for n in range(CALLS_BEFORE)]
        talking = self.wait_talking(before, timeout=60)
        live = {role: self.live_calls(role) for role in APP_ROLES}
        self.say(
            f"{len(talking)} of {CALLS_BEFORE} screening calls placed through the API were talking "
            "through the "
            "relays; live calls per relay: "
            f"{', '.join(f'{role} {count}' for role, count in live.items())}"
        )
        self.report.check(
            len(talking) == CALLS_BEFORE, f"only {len(talking)} of {CALLS_BEFORE} calls connected"
        )
        victim = max(live, key=lambda role: live[role])
        dead = f"{self.cluster.host(victim).address}:"
        on_victim = [
            call
            for call in self.twilio.snapshot()
            if call.call_id in talking and dead in call.upstream
        ]
        if on_victim:
            # its provider event never comes: only the sweep can end it
            on_victim[0].completed_lost = True
        killed_at = time.monotonic()
        os.killpg(self.cluster.relays[victim].pid, signal.SIGKILL)
        self.cluster.relays[victim].wait(timeout=10)
        after = [self.place(job, CALLS_BEFORE + n) for n in range(CALLS_AFTER)]
        bound = self.settings.relay_quiet_seconds + 3 * self.settings.relay_sweep_interval + 60
        final = self.wait_final(before + after, timeout=bound)
        self.check(victim, killed_at, before, after, final)
        self.cluster.start_relay(victim)
        restarted = self.cluster.wait_until_answers(
            f"{self.cluster.relay_url(victim)}/healthz", f"{victim}-relay"
        )
        self.say(f"relay on {victim} restarted: answering after {restarted:.1f} s")

    def job(self) -> dict:
        created = self.api(
            "POST", "/v1/jobs", json=job_body(source_id=f"relay-drill-{self.cluster.prefix}")
        )
        assert created.status_code == 201, created.text
        job = created.json()
        for n, text in enumerate(QUESTIONS):
            added = self.api(
                "POST",
                f"/v1/jobs/{job['id']}/questions",
                json={"question_text": text, "source_id": f"relay-drill-q{n}"},
            )
            assert added.status_code == 201, added.text
        return job

    def place(self, job: dict, n: int) -> str:
        """A candidate and application through the API, then an instant call: the call's id."""
        source_id = f"relay-drill-{self.cluster.prefix}-{n}"
        candidate = self.api(
            "POST",
            "/v1/candidates",
            json={
                "first_name": "Jane",
                "last_name": f"Drill{n}",
                "email": f"jane.drill{n}@example.com",
                "phone_no": f"+1415555{n:04d}",
                "source": "referral",
                "source_id": source_id,
            },
        )
        assert candidate.status_code == 201, candidate.text
        application = self.api(
            "POST",
            "/v1/applications",
            json={
                "candidate_source_id": source_id,
                "job_source_id": job["source_id"],
                "source_application_status": "applied",
                "application_stage": "ACTIVE",
            },
        )
        assert application.status_code == 201, application.text
        call = self.api("POST", f"/v1/applications/{application.json()['id']}/instant-call")
        assert call.status_code in (200, 201, 202), call.text
        return call.json()["id"]

    def wait_talking(self, call_ids: list[str], timeout: float) -> list[str]:
        deadline = time.monotonic() + timeout
        while True:
            calls = {call.call_id: call for call in self.twilio.snapshot()}
            talking = [i for i in call_ids if i in calls and calls[i].outcome == "talking"]
            if len(talking) == len(call_ids) or time.monotonic() > deadline:
                return talking
            time.sleep(0.2)

    def live_calls(self, role: str) -> int:
        with self.cluster.client.entered():
            return int(
                self.session.get(f"{self.cluster.relay_url(role)}/stats", timeout=10).json()[
                    "live_calls"
                ]
            )

    def wait_final(self, call_ids: list[str], timeout: float) -> dict[str, tuple[dict, float]]:
        """Each call's record once its status is final, and when that was seen; calls not final by
        the deadline are left out."""
        final: dict[str, tuple[dict, float]] = {}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and (
            len(final) < len(call_ids) or self.phones_busy(call_ids)
        ):
            for call_id in call_ids:
                if call_id not in final:
                    record = self.api("GET", f"/v1/calls/{call_id}").json()
                    if record.get("status") in FINAL_STATUSES:
                        final[call_id] = (record, time.monotonic())
            time.sleep(0.5)
        return final

    def phones_busy(self, call_ids: list[str]) -> bool:
        """Whether the provider's side of any of the calls is still ringing or talking."""
        phone = {call.call_id: call for call in self.twilio.snapshot()}
        return any(i not in phone or phone[i].ended_at is None for i in call_ids)

    def check(
        self,
        victim: str,
        killed_at: float,
        before: list[str],
        after: list[str],
        final: dict[str, tuple[dict, float]],
    ) -> None:
        phone = {call.call_id: call for call in self.twilio.snapshot()}
        dropped = [i for i in before if phone[i].outcome == "dropped"]
        stuck = [i for i in before + after if i not in final]
        lost_event = [i for i in dropped if phone[i].completed_lost]
        by_event = [i for i in dropped if not phone[i].completed_lost]
        by_event_after = max(
            (final[i][1] - killed_at for i in by_event if i in final), default=None
        )
        swept_after = max((final[i][1] - killed_at for i in lost_event if i in final), default=None)
        sweep_bound = self.settings.relay_quiet_seconds + 2 * self.settings.relay_sweep_interval + 5
        self.say(
            f"relay on {victim} killed (SIGKILL) with {len(dropped)} live call(s): {len(by_event)} "
            "ended failed "
            f"on the provider's completed event, the last {_s(by_event_after)} after the kill; the "
            "one whose "
            f"event was withheld was failed by another relay's sweep {_s(swept_after)} after the "
            "kill "
            f"(HIREKIT_RELAY_QUIET_SECONDS={self.settings.relay_quiet_seconds:g}, sweep every "
            f"{self.settings.relay_sweep_interval:g} s) and hung up at the provider: "
            f"{all(phone[i].sid in self.twilio.hang_ups for i in lost_event)}"
        )
        self.report.check(
            len(dropped) >= 2, f"fewer than two live calls were on the killed relay ({victim})"
        )
        self.report.check(
            not stuck, f"{len(stuck)} call(s) never reached a final status: {stuck[:3]}"
        )
        for call_id in dropped:
            record = final.get(call_id, ({}, 0))[0]
            expected = (
                "the relay process holding the call stopped"
                if phone[call_id].completed_lost
                else "the call ended before the screening finished"
            )
            self.report.check(
                record.get("status") == "failed" and expected in (record.get("error") or ""),
                f"call {call_id} of the dead relay ended {record.get('status')}: "
                f"{record.get('error')}",
            )
        self.report.check(
            len(lost_event) == 1 and swept_after is not None and swept_after <= sweep_bound,
            f"the call whose event was withheld was not swept within {sweep_bound:g} s ("
            f"{swept_after})",
        )
        self.report.check(
            all(phone[i].sid in self.twilio.hang_ups for i in lost_event),
            "the swept call was not hung up at the provider",
        )
        refused_events = [
            (i, phone[i].events)
            for i in before + after
            if i in phone and any(status not in (200, 204) for status in phone[i].events)
        ]
        self.report.check(not refused_events, f"status events were not taken: {refused_events[:3]}")
        others = [i for i in before + after if i not in dropped]
        talked = [
            i
            for i in others
            if phone.get(i)
            and phone[i].outcome == "ended"
            and final.get(i, ({}, 0))[0].get("status") == "completed"
        ]
        dead = f"{self.cluster.host(victim).address}:"
        moved = [i for i in after if phone.get(i) and dead in phone[i].upstream]
        self.say(
            f"{len(talked)} of {len(others)} other calls ({len(after)} placed after the kill) "
            "talked to their "
            f"end and completed; {len(moved)} of the calls placed after the kill tried the dead "
            "relay first and "
            "were moved by nginx"
        )
        self.report.check(
            len(talked) == len(others),
            "calls on live relays did not all complete: "
            + "; ".join(
                f"{i}: {phone[i].outcome if i in phone else 'never placed'} "
                f"{final.get(i, ({}, 0))[0].get('status')} {phone[i].detail if i in phone else ''}"
                for i in others
                if i not in talked
            )[:600],
        )


def _s(seconds: float | None) -> str:
    return "never" if seconds is None else f"{seconds:.1f} s"
