"""The candidate's own page: reached from the link in a reminder, rendered by the server, working
without JavaScript in a real browser (headless Chromium): a reschedule made with the keyboard alone
and an opt-out clicked through show in the API, and every page's text meets WCAG AA's contrast;
forged, expired and used links show one plain page; the forms are CSRF-protected and the only
cookie is the CSRF one."""

from __future__ import annotations

import datetime as dt
import re
import threading
import time
from zoneinfo import ZoneInfo

import pytest
from werkzeug.serving import make_server

from tests.call_factories import create_application, create_candidate, create_job_with_questions
from tests.headless_chromium import Chromium
from tests.test_call_reminders import SMS_NOW, get_call, run_due
from tests.test_call_scheduling import calls_of

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

LINK = re.compile(r"https?://\S+/c/[A-Za-z0-9._-]+")


@pytest.fixture
def served(make_app):
    """(app, base URL) of the app behind a real server, its links pointing at it."""
    app = make_app()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_port}"
    app.config["CANDIDATE_PAGE_BASE_URL"] = base
    yield app, base
    server.shutdown()
    thread.join(timeout=5)


def reminded_call(
    app, tenant, window=("09:00:00", "17:00:00"), days=(1, 2, 3, 4, 5)
) -> tuple[dict, dict, str]:
    """(candidate, queued call, the link in its SMS reminder) of a Chicago candidate on a job with
    scheduling on and the window (by default 09:00-17:00, Monday to Friday). The reminder goes a
    week before the call, so it is due now whenever the test runs (the call is a day away, then
    moved into the window's next open day: up to three days away)."""
    from plugins.calls.telephony import get_provider

    client = app.test_client()
    job = create_job_with_questions(client, tenant, title="ICU Nurse", client_name="Mercy Hospital")
    client.put(
        f"/v1/jobs/{job['id']}/schedule-setting",
        json={
            "window_start_time": window[0],
            "window_end_time": window[1],
            "days_of_week": list(days),
            "call_schedule_minutes": 60 * 24,
            **SMS_NOW,
            "sms_notify_minutes": 60 * 24 * 7,
        },
        headers=tenant.headers,
    )
    client.patch(
        f"/v1/jobs/{job['id']}/scheduling", json={"scheduling": True}, headers=tenant.headers
    )
    candidate = create_candidate(client, tenant, phone_no="+13125550100")
    (call,) = calls_of(client, tenant, create_application(client, tenant, job, candidate))
    assert run_due(app) == "0 scheduled call(s) run, 1 reminder(s) sent"
    with app.app_context():
        (message,) = [sms for sms in get_provider().messages if sms["to"] == candidate["phone_no"]]
    return candidate, call, LINK.search(message["body"]).group(0)


def test_a_candidate_moves_then_stops_calls_from_their_page_in_a_browser(served, tenant_a):
    app, base = served
    client = app.test_client()
    candidate, call, link = reminded_call(app, tenant_a)
    assert link.startswith(base)
    browser = Chromium()
    try:
        browser.goto(link)
        assert browser.evaluate("document.documentElement.lang") == "en"
        assert "ICU Nurse" in browser.text("main") and "Mercy Hospital" in browser.text("main")
        assert "America/Chicago" in browser.text("#call-time")
        assert browser.evaluate(
            "[...document.querySelectorAll('input[type=radio]')].every(i => i.labels.length)"
        )
        assert browser.low_contrast_text() == []
        chosen = browser.evaluate("document.querySelector('#slot-2').value")
        chosen_label = browser.evaluate(
            "document.querySelector('label[for=slot-2]').innerText"
        ).strip()
        # the keyboard alone: the first Tab stop is the choice of time, an arrow picks the next
        # one, and the next Tab stop is the button that moves the call
        browser.press("Tab")
        assert browser.focused() == "input#slot-1"
        browser.press("ArrowDown")
        assert browser.focused() == "input#slot-2"
        assert browser.evaluate("document.querySelector('#slot-2').checked") is True
        browser.press("Tab")
        assert browser.focused() == "button#move"
        browser.press_and_wait(
            "Enter", lambda page: page.text("[role=status]") == "Your call has been moved."
        )
        assert browser.text("#call-time") == chosen_label
        assert browser.low_contrast_text() == []  # the notice too
        assert [cookie["name"] for cookie in browser.cookies()] == ["hk_csrf"]
        assert browser.cookies()[0]["httpOnly"] and browser.cookies()[0]["sameSite"] == "Strict"

        moved = get_call(client, tenant_a, call["id"])
        assert moved["status"] == "queued" and moved["booked_by"] == "candidate_page"
        assert moved["scheduled_for"].startswith(chosen)

        browser.click_and_wait(
            "#stop-calls", lambda page: page.text("#done") == "We will not call you again."
        )
        assert browser.low_contrast_text() == []
        shown = client.get(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).json
        assert shown["consent"]["voice"]["granted"] is False
        assert shown["consent"]["voice"]["source"] == "candidate_page"
        assert get_call(client, tenant_a, call["id"])["status"] == "canceled"

        browser.goto(link)  # the first link was used
        assert browser.text("h1") == "This link is not available"
        assert browser.low_contrast_text() == []
    finally:
        browser.close()


def page_unavailable(response) -> bool:
    body = response.get_data(as_text=True)
    return "This link is not available" in body and "ICU" not in body and "Mercy" not in body


def test_forged_expired_and_used_links_reveal_nothing(served, tenant_a):
    app, base = served
    client = app.test_client()
    candidate, call, link = reminded_call(app, tenant_a)
    path = link[len(base) :]
    assert client.get(path).status_code == 200
    token = path.rsplit("/", 1)[1]
    forged = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    for attempt in (f"/c/{forged}", "/c/nothing", "/c/" + "x" * 400):
        response = client.get(attempt)
        assert response.status_code == 404 and page_unavailable(response)
        assert "Set-Cookie" not in response.headers
    app.config["CANDIDATE_PAGE_TTL_DAYS"] = (
        1 / 86400
    )  # a lifetime of one second, and the link is older
    time.sleep(2.1)
    expired = client.get(path)
    assert expired.status_code == 404 and page_unavailable(expired)


def test_the_forms_refuse_a_cross_site_post(served, tenant_a):
    app, base = served
    client = app.test_client()
    candidate, call, link = reminded_call(app, tenant_a)
    path = link[len(base) :]
    page = client.get(path)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.get_data(as_text=True)).group(1)
    other = app.test_client()  # another browser: no CSRF cookie of its own for this form
    refused = other.post(path, data={"action": "cancel", "csrf": csrf})
    assert refused.status_code == 403 and page_unavailable(refused)
    forged = client.post(path, data={"action": "cancel", "csrf": "0" * 64})
    assert forged.status_code == 403
    assert get_call(client, tenant_a, call["id"])["status"] == "queued"
    done = client.post(path, data={"action": "cancel", "csrf": csrf})
    assert done.status_code == 200 and "Your call has been canceled." in done.get_data(as_text=True)
    assert get_call(client, tenant_a, call["id"])["status"] == "canceled"
    assert client.post(path, data={"action": "cancel", "csrf": csrf}).status_code == 404  # used


def test_a_time_not_offered_is_refused_on_the_page(served, tenant_a):
    app, base = served
    client = app.test_client()
    _, call, link = reminded_call(app, tenant_a)
    path = link[len(base) :]
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get(path).get_data(as_text=True)).group(
        1
    )
    refused = client.post(
        path, data={"action": "reschedule", "slot": "2026-12-25T03:00", "csrf": csrf}
    )
    assert (
        refused.status_code == 200
        and "Please choose one of the times offered." in refused.get_data(as_text=True)
    )
    assert get_call(client, tenant_a, call["id"])["scheduled_for"] == call["scheduled_for"]


def test_call_me_now_is_offered_when_allowed_and_places_the_call(served, tenant_a):
    app, base = served
    client = app.test_client()
    _, call, link = reminded_call(app, tenant_a, window=("00:00:00", "23:59:59"), days=range(1, 8))
    path = link[len(base) :]
    page = client.get(path).get_data(as_text=True)
    assert 'id="call-now"' in page
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    done = client.post(path, data={"action": "call_now", "csrf": csrf})
    assert done.status_code == 200 and "We will call you in a moment." in done.get_data(
        as_text=True
    )
    called = get_call(client, tenant_a, call["id"])
    assert called["status"] == "completed" and called["booked_by"] == "candidate_page"


def offers_on(page: str) -> list[tuple[str, str]]:
    """(value, label) of each time the page's reschedule form offers."""
    found = re.findall(
        r'<input type="radio" id="slot-\d+" name="slot" value="([^"]+)"[^>]*>\s*([^<]+)</label>',
        page,
    )
    return [(value, " ".join(label.split())) for value, label in found]


def csrf_of(page: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def test_every_time_offered_is_inside_the_window_days_and_calling_hours_in_the_candidates_zone(
    served, tenant_a
):
    app, base = served
    client = app.test_client()
    days = (1, 3, 5, 6)
    candidate, call, link = reminded_call(app, tenant_a, window=("06:00:00", "23:00:00"), days=days)
    hours = {"calling_hours_start": "08:00", "calling_hours_end": "21:00"}
    client.put("/v1/tenant/contact-settings", json=hours, headers=tenant_a.headers)
    zone = (
        "Asia/Kolkata"  # not the number's zone (Chicago): the page reads times in the candidate's
    )
    client.put(
        f"/v1/candidates/{candidate['id']}/timezone",
        json={"timezone": zone},
        headers=tenant_a.headers,
    )
    asked_at = dt.datetime.now(dt.timezone.utc)
    offers = offers_on(client.get(link[len(base) :]).get_data(as_text=True))
    assert len(offers) > 4  # more than one day's
    per_day: dict[dt.date, int] = {}
    for value, label in offers:
        when = dt.datetime.fromisoformat(value).replace(tzinfo=dt.timezone.utc)
        local = when.astimezone(ZoneInfo(zone))
        assert asked_at < when <= asked_at + dt.timedelta(days=7), value
        assert local.isoweekday() in days, value  # the job's days
        assert dt.time(8) <= local.time() < dt.time(21) and local.minute == 0, (
            value
        )  # calling hours
        assert f"{local:%A} {local.day} {local:%B %Y} at {local:%H:%M}" in label and zone in label
        per_day[local.date()] = per_day.get(local.date(), 0) + 1
    assert max(per_day.values()) <= 4


def test_call_me_now_is_not_offered_in_the_quiet_hours_nor_done_when_asked(served, tenant_a):
    from tests.test_calling_hours import zone_with_local_hour

    app, base = served
    client = app.test_client()
    candidate, call, link = reminded_call(
        app, tenant_a, window=("00:00:00", "23:59:59"), days=range(1, 8)
    )
    client.put(
        "/v1/tenant/contact-settings",
        json={"calling_hours_start": "08:00", "calling_hours_end": "21:00"},
        headers=tenant_a.headers,
    )
    client.put(
        f"/v1/candidates/{candidate['id']}/timezone",
        json={"timezone": zone_with_local_hour(3)},
        headers=tenant_a.headers,
    )
    path = link[len(base) :]
    page = client.get(path).get_data(as_text=True)
    assert 'id="call-now"' not in page and 'value="call_now"' not in page
    asked = client.post(path, data={"action": "call_now", "csrf": csrf_of(page)})
    assert "We cannot call you right now" in asked.get_data(as_text=True)
    kept = get_call(client, tenant_a, call["id"])
    assert kept["status"] == "queued" and kept["scheduled_for"] == call["scheduled_for"]
