"""Scheduling: the toggle round trip and every bound of the schedule setting."""

import pytest

from tests.factories import create_job

pytestmark = pytest.mark.plugins("jobs", "scheduling")

WINDOW = {"window_start_time": "09:00:00", "window_end_time": "17:00:00"}


@pytest.fixture
def job(client, tenant_a):
    return create_job(client, tenant_a)


def test_scheduling_is_off_until_enabled_and_toggles_back(client, tenant_a, job):
    url = f"/v1/jobs/{job['id']}/scheduling"
    assert client.get(url, headers=tenant_a.headers).json == {
        "job_id": job["id"],
        "scheduling": False,
    }
    assert client.patch(url, json={"scheduling": True}, headers=tenant_a.headers).json == {
        "job_id": job["id"],
        "scheduling": True,
    }
    assert client.get(url, headers=tenant_a.headers).json["scheduling"] is True
    client.patch(url, json={"scheduling": False}, headers=tenant_a.headers)
    assert client.get(url, headers=tenant_a.headers).json["scheduling"] is False


@pytest.mark.parametrize("body", [{}, {"scheduling": "maybe"}, {"scheduling": True, "extra": 1}])
def test_toggle_body_is_validated(client, tenant_a, job, body):
    response = client.patch(f"/v1/jobs/{job['id']}/scheduling", json=body, headers=tenant_a.headers)
    assert response.status_code == 422


def test_setting_defaults_before_any_put(client, tenant_a, job):
    setting = client.get(f"/v1/jobs/{job['id']}/schedule-setting", headers=tenant_a.headers).json
    assert setting["window_start_time"] == "09:00:00" and setting["window_end_time"] == "17:00:00"
    assert setting["days_of_week"] == [1, 2, 3, 4, 5]
    assert setting["daily_attempts"] == 2 and setting["scheduling"] is False


def test_put_replaces_setting_and_keeps_scheduling_flag(client, tenant_a, job):
    client.patch(
        f"/v1/jobs/{job['id']}/scheduling", json={"scheduling": True}, headers=tenant_a.headers
    )
    body = {
        **WINDOW,
        "daily_attempts": 3,
        "days_of_week": [6, 1, 1],
        "sms_enabled": True,
        "name": "Weekend",
    }
    put = client.put(f"/v1/jobs/{job['id']}/schedule-setting", json=body, headers=tenant_a.headers)
    assert put.status_code == 200
    got = client.get(f"/v1/jobs/{job['id']}/schedule-setting", headers=tenant_a.headers).json
    assert got == put.json
    assert (
        got["daily_attempts"] == 3 and got["days_of_week"] == [1, 6] and got["sms_enabled"] is True
    )
    assert got["scheduling"] is True and got["total_attempts"] == 5  # default for a field not sent
    second = client.put(
        f"/v1/jobs/{job['id']}/schedule-setting", json=WINDOW, headers=tenant_a.headers
    )
    assert second.status_code == 200, second.json
    second = second.json
    assert second["daily_attempts"] == 2 and second["sms_enabled"] is False


@pytest.mark.parametrize(
    "field, value",
    [
        ("daily_attempts", 0),
        ("daily_attempts", 5),
        ("total_attempts", 0),
        ("retry_interval", 0),
        ("days_of_week", [7]),
        ("call_schedule_minutes", 0),
    ],
)
def test_setting_bounds_accept_edges(client, tenant_a, job, field, value):
    response = client.put(
        f"/v1/jobs/{job['id']}/schedule-setting",
        json={**WINDOW, field: value},
        headers=tenant_a.headers,
    )
    assert response.status_code == 200, response.json
    assert response.json[field] == value


@pytest.mark.parametrize(
    "field, value",
    [
        ("daily_attempts", -1),
        ("daily_attempts", 6),
        ("total_attempts", -1),
        ("retry_interval", -5),
        ("email_notify_minutes", -1),
        ("sms_notify_minutes", -1),
        ("call_schedule_minutes", -1),
        ("days_of_week", [8]),
        ("days_of_week", [0]),
        ("window_start_time", "9am"),
        ("window_end_time", "24:00:00"),
    ],
)
def test_setting_bounds_reject_out_of_range(client, tenant_a, job, field, value):
    response = client.put(
        f"/v1/jobs/{job['id']}/schedule-setting",
        json={**WINDOW, field: value},
        headers=tenant_a.headers,
    )
    assert response.status_code == 422
    # list items are named days_of_week.0
    assert field in {name.split(".")[0] for name in response.json["error"]["fields"]}


def test_window_must_end_after_it_starts(client, tenant_a, job):
    body = {"window_start_time": "18:00:00", "window_end_time": "08:00:00"}
    response = client.put(
        f"/v1/jobs/{job['id']}/schedule-setting", json=body, headers=tenant_a.headers
    )
    assert response.status_code == 422
    assert "window_end_time" in response.json["error"]["fields"]


def test_window_times_are_required(client, tenant_a, job):
    response = client.put(
        f"/v1/jobs/{job['id']}/schedule-setting",
        json={"daily_attempts": 1},
        headers=tenant_a.headers,
    )
    assert set(response.json["error"]["fields"]) == {"window_start_time", "window_end_time"}


def test_unknown_or_foreign_job_is_404(client, tenant_a, tenant_b, job):
    for path in ("scheduling", "schedule-setting"):
        assert (
            client.get(f"/v1/jobs/{job['id']}/{path}", headers=tenant_b.headers).status_code == 404
        )
        assert (
            client.get(
                f"/v1/jobs/00000000-0000-4000-8000-000000000000/{path}", headers=tenant_a.headers
            ).status_code
            == 404
        )
    assert (
        client.patch(
            f"/v1/jobs/{job['id']}/scheduling", json={"scheduling": True}, headers=tenant_b.headers
        ).status_code
        == 404
    )
    assert (
        client.put(
            f"/v1/jobs/{job['id']}/schedule-setting", json=WINDOW, headers=tenant_b.headers
        ).status_code
        == 404
    )
