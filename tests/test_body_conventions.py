"""The conventions of every JSON body: "" on an optional text field is absent (null), a required one
must not be blank, and integers and booleans are JSON integers and booleans (query strings and forms
keep their text forms)."""

import io

import pytest

from tests.factories import application_body, create_candidate, create_job, job_body, pdf_bytes
from tests.test_mcp_protocol import call_tool, tool_result

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

WINDOW = {"window_start_time": "09:00:00", "window_end_time": "17:00:00"}


def fields_of(response) -> dict:
    assert response.status_code == 422, response.json
    return response.json["error"]["fields"]


# ---- blank strings --------------------------------------------------------


def test_blank_optional_job_fields_are_stored_as_null(client, tenant_a):
    created = client.post(
        "/v1/jobs",
        json=job_body(zip_code="", city="  ", client_name="", start_date="", pay_rate_currency=""),
        headers=tenant_a.headers,
    )
    assert created.status_code == 201, created.json
    job = client.get(f"/v1/jobs/{created.json['id']}", headers=tenant_a.headers).json
    assert [
        job[name] for name in ("zip_code", "city", "client_name", "start_date", "pay_rate_currency")
    ] == [None] * 5


def test_a_blank_patch_clears_an_optional_field(client, tenant_a):
    job = create_job(client, tenant_a, zip_code="94110")
    cleared = client.patch(
        f"/v1/jobs/{job['id']}",
        json={"title": job["title"], "zip_code": ""},
        headers=tenant_a.headers,
    )
    assert cleared.status_code == 200 and cleared.json["zip_code"] is None
    candidate = create_candidate(client, tenant_a, city="Oakland")
    update = {
        key: candidate[key] for key in ("first_name", "email", "phone_no", "source", "source_id")
    }
    cleared = client.patch(
        f"/v1/candidates/{candidate['id']}",
        json={**update, "city": "", "recruiter_email": ""},
        headers=tenant_a.headers,
    )
    assert cleared.status_code == 200, cleared.json
    assert cleared.json["city"] is None and cleared.json["recruiter_email"] is None


def test_blank_optional_application_and_candidate_fields_are_absent(client, tenant_a):
    candidate = client.post(
        "/v1/candidates",
        json={
            "first_name": "Jane",
            "last_name": "",
            "email": "jane.blank@example.com",
            "phone_no": "+14155552671",
            "city": "",
            "state_name": "",
            "country": "",
            "source": "referral",
            "source_id": "cand-blank",
        },
        headers=tenant_a.headers,
    )
    assert candidate.status_code == 201, candidate.json
    assert [candidate.json[name] for name in ("last_name", "city", "state_name", "country")] == [
        None
    ] * 4
    job = create_job(client, tenant_a)
    application = client.post(
        "/v1/applications",
        json=application_body(candidate.json, job, source_id="", file=""),
        headers=tenant_a.headers,
    )
    assert application.status_code == 201, application.json
    assert application.json["source_id"] is None and application.json["resume"] is None


@pytest.mark.parametrize("blank", ["", "   "])
def test_required_fields_refuse_blank_saying_so(client, tenant_a, blank):
    for field in ("title", "source_id", "desc"):
        assert fields_of(
            client.post("/v1/jobs", json=job_body(**{field: blank}), headers=tenant_a.headers)
        ) == {field: ["Must not be blank."]}
    job = create_job(client, tenant_a)
    body = application_body(
        create_candidate(client, tenant_a), job, source_application_status=blank
    )
    assert fields_of(client.post("/v1/applications", json=body, headers=tenant_a.headers)) == {
        "source_application_status": ["Must not be blank."]
    }


def test_blank_is_reported_with_the_other_problems_of_the_body(client, tenant_a):
    problems = fields_of(
        client.post(
            "/v1/jobs",
            json=job_body(title="", recruiter_email="not an email"),
            headers=tenant_a.headers,
        )
    )
    assert problems["title"] == ["Must not be blank."] and "recruiter_email" in problems


# ---- exact scalars ---------------------------------------------------------


@pytest.mark.parametrize(
    "field, value",
    [
        ("daily_attempts", 2.7),
        ("daily_attempts", "3"),
        ("retry_interval", "60"),
        ("daily_attempts", True),
        ("email_enabled", "yes"),
        ("email_enabled", 1),
        ("email_enabled", "true"),
        ("sms_repeat", 0),
        ("days_of_week", [1, "2"]),
        ("days_of_week", [1.5]),
    ],
)
def test_schedule_setting_takes_only_json_integers_and_booleans(client, tenant_a, field, value):
    job = create_job(client, tenant_a)
    response = client.put(
        f"/v1/jobs/{job['id']}/schedule-setting",
        json={**WINDOW, field: value},
        headers=tenant_a.headers,
    )
    # days_of_week.1 for a list item
    assert [key.split(".")[0] for key in fields_of(response)] == [field]


def test_schedule_setting_takes_json_integers_and_booleans(client, tenant_a):
    job = create_job(client, tenant_a)
    response = client.put(
        f"/v1/jobs/{job['id']}/schedule-setting",
        headers=tenant_a.headers,
        json={
            **WINDOW,
            "daily_attempts": 3,
            "retry_interval": 60.0,
            "email_enabled": True,
            "days_of_week": [1, 2],
        },
    )
    assert response.status_code == 200, response.json
    assert (
        response.json["daily_attempts"],
        response.json["retry_interval"],
        response.json["email_enabled"],
    ) == (3, 60, True)


@pytest.mark.parametrize(
    "body, field",
    [
        ({"scheduling": "true"}, "scheduling"),
        ({"scheduling": 1}, "scheduling"),
    ],
)
def test_the_scheduling_toggle_takes_a_json_boolean(client, tenant_a, body, field):
    job = create_job(client, tenant_a)
    assert field in fields_of(
        client.patch(f"/v1/jobs/{job['id']}/scheduling", json=body, headers=tenant_a.headers)
    )


@pytest.mark.parametrize("value", ["yes", 1, "true"])
def test_webhook_is_active_takes_a_json_boolean(client, tenant_a, value):
    from tests.webhook_helpers import webhook_body

    body = webhook_body(tenant_a, "http://127.0.0.1:9/hook", is_active=value)
    assert "is_active" in fields_of(
        client.post("/v1/tenant-webhook", json=body, headers=tenant_a.headers)
    )


@pytest.mark.parametrize("value", ["12.5", True])
def test_pay_rates_take_json_numbers(client, tenant_a, value):
    assert "min_pay_rate" in fields_of(
        client.post("/v1/jobs", json=job_body(min_pay_rate=value), headers=tenant_a.headers)
    )


def test_mcp_tool_arguments_follow_the_same_conventions(client, tenant_a):
    create_job(client, tenant_a)
    assert (
        tool_result(client, tenant_a, "list_jobs", {"page": 1, "size": 1})["structuredContent"][
            "total"
        ]
        == 1
    )
    for arguments in ({"page": "1"}, {"size": 2.5}):
        reply = call_tool(client, tenant_a, "list_jobs", arguments)
        assert reply.get("error", {}).get("code") == -32602 or reply["result"].get("isError"), reply


def test_query_strings_and_forms_keep_their_text_forms(client, tenant_a):
    create_job(client, tenant_a)
    listed = client.get("/v1/jobs?page=1&size=5", headers=tenant_a.headers)
    assert listed.status_code == 200 and listed.json["size"] == 5
    job = create_job(client, tenant_a)
    candidate = create_candidate(client, tenant_a)
    form = {
        **application_body(candidate, job, source_id=""),
        "file": (io.BytesIO(pdf_bytes()), "cv.pdf"),
    }
    created = client.post(
        "/v1/applications", data=form, headers=tenant_a.headers, content_type="multipart/form-data"
    )
    assert created.status_code == 201, created.json
    assert created.json["source_id"] is None and created.json["resume"]["file_name"] == "cv.pdf"
