"""The embedded default's instant call: the simulated provider's scripted candidates (picked by the
phone number's last digit) talk with the real dialogue through the relay session, and GET
/v1/calls/{id} shows the conversation."""

from __future__ import annotations

from tests.call_factories import (
    JOB_QUESTIONS,
    application_for,
    create_job_with_questions,
    instant_call,
)

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT


def simulated_call(client, tenant, last_digit: str, **job_fields) -> dict:
    job = create_job_with_questions(client, tenant, **job_fields) if job_fields else None
    application = application_for(client, tenant, phone_no=f"+1415555013{last_digit}", job=job)
    call = instant_call(client, tenant, application).json
    response = client.get(f"/v1/calls/{call['id']}", headers=tenant.headers)
    assert response.status_code == 200
    return response.json


def spoken(call: dict, speaker: str) -> list[str]:
    return [turn["text"] for turn in call["transcript"] if turn["speaker"] == speaker]


def test_a_candidate_who_answers_well_completes_the_screening(client, tenant_a):
    call = simulated_call(client, tenant_a, "0")
    assert call["status"] == "completed" and call["end_reason"] == "completed"
    assert [answer["status"] for answer in call["answers"]] == ["answered"] * len(JOB_QUESTIONS)
    assert isinstance(call["answers"][0]["value"], (int, float)) and isinstance(
        call["answers"][1]["value"], bool
    )
    at = [turn["at_ms"] for turn in call["transcript"]]
    assert at == sorted(at) and at[-1] > 0 and call["duration_seconds"] > 0
    assert call["recording"] is None  # the tenant does not record


def test_a_vague_candidate_is_followed_up_then_the_question_is_marked_unanswered(client, tenant_a):
    call = simulated_call(client, tenant_a, "2")
    first = call["answers"][0]
    assert first["status"] == "unanswered" and len(first["follow_ups"]) == 2
    assert all("it depends" in text for text in spoken(call, "candidate")[2:5])


def test_a_curious_candidate_gets_pay_and_remote_work_from_the_job(client, tenant_a):
    call = simulated_call(
        client,
        tenant_a,
        "3",
        min_pay_rate=30,
        max_pay_rate=40,
        pay_frequency="Hourly",
        pay_rate_currency="USD",
        workplace_type="Remote",
    )
    asked = {entry["question"]: entry for entry in call["candidate_questions"]}
    assert set(asked) == {"Before that, what does this job pay?", "And is the job remote?"}
    assert "30" in asked["Before that, what does this job pay?"]["answer"]
    assert asked["And is the job remote?"]["passed_to_recruiter"] is False
    assert call["end_reason"] == "completed"


def test_a_candidate_who_asks_to_be_called_back_is_not_screened_now(client, tenant_a):
    call = simulated_call(client, tenant_a, "4")
    assert "call me back tomorrow at 10 am" in spoken(call, "candidate")[1]
    assert all(answer["status"] != "answered" for answer in call["answers"])
    assert call["end_reason"] in (
        "callback_booked",
        "hung_up",
    )  # booked where the job's schedule allows it


def test_an_answering_machine_is_not_screened(client, tenant_a):
    call = simulated_call(client, tenant_a, "6")
    assert call["status"] == "no_answer" and call["end_reason"] == "no_answer"
    assert (
        call["voicemail_left"] is False and call["transcript"] == []
    )  # an instant call leaves no voicemail
