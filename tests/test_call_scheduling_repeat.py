"""repeat_calling: whether an application re-entering ACTIVE after a completed screening call is
called again."""

import pytest

from tests.call_factories import create_application, create_candidate, instant_call
from tests.test_call_scheduling import scheduled_job


def calls_of(client, tenant, application) -> list[tuple[int, str]]:
    response = client.get(
        f"/v1/calls?page=1&size=50&application_id={application['id']}", headers=tenant.headers
    )
    assert response.status_code == 200
    return [(c["attempt"], c["status"]) for c in response.json["data"]]


def move(client, tenant, application, stage: str) -> None:
    response = client.patch(
        f"/v1/applications/{application['id']}",
        json={"source_application_status": f"moved-{stage}", "application_stage": stage},
        headers=tenant.headers,
    )
    assert response.status_code == 200, response.json


def run_due(app) -> None:
    result = app.test_cli_runner().invoke(args=["calls", "run-due"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("repeat_calling", [False, True])
def test_reentering_active_after_a_completed_screening_calls_again_only_with_repeat_calling(
    app, client, tenant_a, repeat_calling
):
    job = scheduled_job(client, tenant_a, repeat_calling=repeat_calling)
    application = create_application(client, tenant_a, job, create_candidate(client, tenant_a))
    run_due(app)
    assert calls_of(client, tenant_a, application) == [(1, "completed")]
    move(client, tenant_a, application, "PASSIVE")
    move(client, tenant_a, application, "ACTIVE")
    expected = [(1, "completed"), (1, "queued")] if repeat_calling else [(1, "completed")]
    assert calls_of(client, tenant_a, application) == expected


def test_an_unreached_candidate_is_scheduled_again_on_reentry_whatever_repeat_calling_says(
    app, client, tenant_a
):
    job = scheduled_job(client, tenant_a, total_attempts=1, repeat_calling=False)
    application = create_application(
        client, tenant_a, job, create_candidate(client, tenant_a, phone_no="+14155550108")
    )
    run_due(app)
    assert calls_of(client, tenant_a, application) == [(1, "busy")]
    move(client, tenant_a, application, "PASSIVE")
    move(client, tenant_a, application, "ACTIVE")
    assert calls_of(client, tenant_a, application) == [(1, "busy"), (1, "queued")]


def test_a_completed_instant_call_counts_as_the_screening(app, client, tenant_a):
    job = scheduled_job(client, tenant_a, call_schedule_minutes=600)
    application = create_application(
        client, tenant_a, job, create_candidate(client, tenant_a), stage="PASSIVE"
    )
    # inline: completes at once
    assert instant_call(client, tenant_a, application).status_code == 202
    move(client, tenant_a, application, "ACTIVE")
    assert calls_of(client, tenant_a, application) == [(1, "completed")]
