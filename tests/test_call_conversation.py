"""The screening conversation on its deterministic rules, driven through the relay's contract by
scripted candidates: the opening, follow-ups, the candidate's own questions, stops, silence, keys,
barge-in, resuming, rubric scoring, and the record GET /v1/calls/{id} returns."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from app.data.db import database, utcnow
from plugins.calls.conversation.contract import ConversationRefused, open_conversation
from plugins.calls.models import Call
from tests.call_factories import create_job_with_questions
from tests.conversation_script import (
    GOOD,
    SILENCE,
    application_for_call,
    barge,
    converse,
    key,
    local,
    open_every_day,
    placed_call,
    queued_callbacks,
    read_call,
)

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT


def test_a_candidate_who_answers_well_is_screened_and_scored(app, client, tenant_a):
    application = application_for_call(client, tenant_a, client_name="Acme Health")
    call_id = placed_call(app, application)
    talk = converse(app, call_id, GOOD)

    opening = talk.lines[0]
    assert "Acme Health" in opening and application["job"]["title"] in opening
    assert "automated" in opening and "Jane?" in opening and "recorded" not in opening
    assert "good time" in talk.lines[1]
    assert talk.messages[-1]["type"] == "end" and talk.finished

    call = read_call(client, tenant_a, call_id)
    assert call["status"] == "completed" and call["end_reason"] == "completed"
    assert call["language"] == "en-US" and call["analyzer"] == "rules"
    assert call["duration_seconds"] == 15
    values = [entry["value"] for entry in call["answers"]]
    assert values[:2] == [6, True] and values[2].startswith("A patient crashed")
    assert [entry["status"] for entry in call["answers"]] == ["answered"] * 3
    assert [entry["score"] for entry in call["answers"]][:2] == [5, 5]
    assert call["answers"][0]["evidence"] == "I have six years in the ICU."
    assessment = call["assessment"]
    assert assessment["recommendation"] == "advance" and assessment["knockouts_failed"] == []
    assert assessment["answers"][0]["note"] == "6 stated, 3 required"
    turns = call["transcript"]
    assert [turn["at_ms"] for turn in turns] == sorted(turn["at_ms"] for turn in turns)
    asked = [turn for turn in turns if turn["speaker"] == "agent" and turn["question_index"] == 1]
    assert asked and asked[0]["text"].endswith("Do you hold a current BLS certification?")
    answered = [
        turn for turn in turns if turn["speaker"] == "candidate" and turn["question_index"] == 0
    ]
    assert [turn["text"] for turn in answered] == ["I have six years in the ICU."]
    assert not any(turn["interrupted"] for turn in turns)


def test_a_vague_candidate_is_followed_up_twice_then_the_question_is_marked_unanswered(
    app, client, tenant_a
):
    call_id = placed_call(app, application_for_call(client, tenant_a))
    talk = converse(
        app,
        call_id,
        [
            "Yes.",
            "Okay.",
            "Hmm, quite a while.",
            "It's hard to say really.",
            "Not sure.",
            "Maybe.",
            "Yes, I do.",
        ],
    )
    call = read_call(client, tenant_a, call_id)
    years, bls, story = call["answers"]
    assert years["status"] == "unanswered" and years["value"] is None and years["score"] == 0
    assert len(years["follow_ups"]) == 2 and all(line in talk.lines for line in years["follow_ups"])
    assert years["answer"] == "Hmm, quite a while. It's hard to say really. Not sure."
    assert bls["follow_ups"] == [
        "Sorry, is that a yes or a no? You can also press 1 for yes or 2 for no."
    ]
    assert bls["value"] is True and bls["status"] == "answered"
    assert story["status"] == "pending"
    # hung up with a question left: a failed attempt, so a schedule tries again
    assert call["status"] == "failed" and call["end_reason"] == "hung_up"


def test_the_number_of_follow_ups_is_a_setting(make_app, tenant_a):
    app = make_app(CALL_FOLLOW_UPS=0)
    client = app.test_client()
    call_id = placed_call(app, application_for_call(client, tenant_a))
    converse(app, call_id, ["Yes.", "Yes.", "Quite a while."])
    years = read_call(client, tenant_a, call_id)["answers"][0]
    assert years["status"] == "unanswered" and years["follow_ups"] == []


def test_candidate_questions_are_answered_from_the_job_and_faq_and_the_rest_goes_to_the_recruiter(
    app, client, tenant_a
):
    job = create_job_with_questions(
        client,
        tenant_a,
        min_pay_rate=30,
        max_pay_rate=40,
        pay_frequency="Hourly",
        pay_rate_currency="USD",
        workplace_type="Hybrid",
    )
    faq = client.put(
        f"/v1/jobs/{job['id']}/faq",
        headers=tenant_a.headers,
        json={
            "entries": [
                {
                    "question": "Is there parking at the hospital?",
                    "answer": "Yes, staff park for free in the east garage.",
                }
            ]
        },
    )
    assert faq.status_code == 200
    call_id = placed_call(app, application_for_call(client, tenant_a, job=job))
    talk = converse(
        app,
        call_id,
        [
            "Yes.",
            "What's the pay? Is it remote?",
            "Sure, go ahead.",
            "Eight years.",
            "Yes. Is there parking?",
            "A patient crashed and I led the team through it.",
            "Do you offer dental insurance?",
            "No, that's all.",
        ],
    )
    assert "30 to 40 USD hourly" in talk.said and "hybrid" in talk.said
    assert "east garage" in talk.said
    dental_reply = next(
        line for line in talk.lines if "pass that question to the recruiter" in line
    )
    assert "dental" not in dental_reply.lower()

    call = read_call(client, tenant_a, call_id)
    asked = {entry["question"]: entry for entry in call["candidate_questions"]}
    assert (
        asked["What's the pay?"]["source"] == "pay"
        and asked["Is it remote?"]["source"] == "workplace"
    )
    assert (
        asked["Is there parking?"]["source"] == "faq:0"
        and not asked["Is there parking?"]["passed_to_recruiter"]
    )
    dental = asked["Do you offer dental insurance?"]
    assert dental["passed_to_recruiter"] and dental["answer"] is None and dental["source"] is None
    assert call["answers"][1]["value"] is True  # the answer part of "Yes. Is there parking?"
    assert call["end_reason"] == "completed"
    assert "Do you offer dental insurance?" in call["summary"]


def test_dont_call_me_again_opts_the_candidate_out(app, client, tenant_a):
    application = application_for_call(client, tenant_a)
    call_id = placed_call(app, application)
    talk = converse(app, call_id, ["Yes.", "Please don't call me again."])
    assert "won't call you again" in talk.lines[-1] and talk.messages[-1]["type"] == "end"
    call = read_call(client, tenant_a, call_id)
    assert call["end_reason"] == "opted_out" and call["assessment"] is None
    candidate = client.get(
        f"/v1/candidates/{application['candidate_id']}", headers=tenant_a.headers
    ).json
    assert candidate["contact_opt_out"] is True
    again = client.post(
        f"/v1/applications/{application['id']}/instant-call", headers=tenant_a.headers
    )
    assert again.status_code == 409
    events = client.get("/v1/events?size=100", headers=tenant_a.headers)
    assert events.status_code == 200, events.json
    consent = [event for event in events.json["data"] if event["type"] == "candidate.consent"]
    assert consent and {change["source"] for change in consent[-1]["payload"]["changes"]} == {
        "candidate_call"
    }


@pytest.mark.parametrize(
    "reply, reason",
    [
        ("Sorry, wrong number.", "wrong_person"),
        ("No, this isn't Jane.", "wrong_person"),
        ("I'm not interested anymore, I found another job.", "completed"),
    ],
)
def test_wrong_number_and_not_interested_end_the_call(app, client, tenant_a, reply, reason):
    application = application_for_call(client, tenant_a)
    call_id = placed_call(app, application)
    talk = converse(app, call_id, [reply, "Hello?"])
    assert talk.finished and len(talk.lines) == 2  # nothing is said after the end
    call = read_call(client, tenant_a, call_id)
    assert (
        call["status"] == "completed"
        and call["end_reason"] == reason
        and call["assessment"] is None
    )
    candidate = client.get(
        f"/v1/candidates/{application['candidate_id']}", headers=tenant_a.headers
    ).json
    assert candidate["contact_opt_out"] is False


def test_silence_reprompts_once_then_moves_on_and_keys_answer_yes_or_no(app, client, tenant_a):
    call_id = placed_call(app, application_for_call(client, tenant_a))
    talk = converse(app, call_id, ["Yes.", key("1"), SILENCE, SILENCE, key("2"), key("7")])
    question = "How many years of ICU experience do you have?"
    assert talk.lines[3] == f"Are you still there? Great. {question}"
    assert talk.lines[4] == "Let's move on. Do you hold a current BLS certification?"
    call = read_call(client, tenant_a, call_id)
    years, bls, _ = call["answers"]
    assert years["status"] == "unanswered"
    assert bls["value"] is False and bls["meets_requirement"] is False
    keyed = [turn["text"] for turn in call["transcript"] if turn["text"].startswith("[pressed")]
    assert keyed == ["[pressed 1: yes]", "[pressed 2: no]"]  # 7 means nothing here and is not kept


def test_barge_in_keeps_only_what_the_agent_actually_said(app, client, tenant_a):
    call_id = placed_call(app, application_for_call(client, tenant_a))
    converse(app, call_id, ["Yes.", barge("Thanks. I have 3 short"), "Yes, go ahead."])
    turns = read_call(client, tenant_a, call_id)["transcript"]
    cut = [turn for turn in turns if turn["interrupted"]]
    assert [turn["text"] for turn in cut] == ["Thanks. I have 3 short"] and cut[0][
        "speaker"
    ] == "agent"


def test_a_dropped_call_is_resumed_at_the_first_unanswered_question(app, client, tenant_a):
    application = application_for_call(client, tenant_a)
    first = placed_call(app, application)
    converse(app, first, ["Yes.", "Yes.", "Four years."])  # the line drops here
    dropped = read_call(client, tenant_a, first)
    assert dropped["status"] == "failed" and dropped["end_reason"] == "hung_up"

    second = placed_call(app, application)
    talk = converse(app, second, ["Yes, that's me.", "Yes."] + GOOD[3:])
    assert "Am I speaking with Jane?" in talk.lines[0]
    assert "pick up where we left off" in talk.lines[1] and "2 short questions" in talk.lines[1]
    assert talk.lines[2].endswith("Do you hold a current BLS certification?")
    call = read_call(client, tenant_a, second)
    years = call["answers"][0]
    assert years["value"] == 4 and years["from_call_id"] == first
    assert call["end_reason"] == "completed" and call["status"] == "completed"
    assert not any("How many years" in line for line in talk.lines)


def test_the_rubric_weighs_the_score_and_a_failed_knockout_rejects(app, client, tenant_a):
    job = create_job_with_questions(client, tenant_a)
    questions = client.get(f"/v1/jobs/{job['id']}/questions", headers=tenant_a.headers).json["data"]
    years_q, bls_q, story_q = (q["id"] for q in questions)
    base = f"/v1/jobs/{job['id']}/questions"
    assert (
        client.put(
            f"{base}/{years_q}/rubric",
            headers=tenant_a.headers,
            json={"answer_type": "number", "minimum": 5, "weight": 3},
        ).status_code
        == 200
    )
    assert (
        client.put(
            f"{base}/{bls_q}/rubric",
            headers=tenant_a.headers,
            json={"answer_type": "yes_no", "expected": "yes", "knockout": True},
        ).status_code
        == 200
    )
    assert (
        client.put(
            f"{base}/{story_q}/rubric", headers=tenant_a.headers, json={"weight": 0}
        ).status_code
        == 200
    )

    call_id = placed_call(app, application_for_call(client, tenant_a, job=job))
    converse(
        app,
        call_id,
        [
            "Yes.",
            "Yes.",
            "About three years.",
            "No, it lapsed last year.",
            "I handled a hard night by staying calm and calling for help early.",
            "No thanks.",
        ],
    )
    assessment = read_call(client, tenant_a, call_id)["assessment"]
    years, bls, story = assessment["answers"]
    assert years["score"] == 3 and years["meets_requirement"] is False and years["weight"] == 3
    assert bls["value"] is False and bls["knockout"] is True
    assert assessment["score"] == round(100 * (3 * 3 / 5 + 0) / 4)
    assert assessment["recommendation"] == "reject"
    assert assessment["knockouts_failed"] == ["Do you hold a current BLS certification?"]


def test_a_choice_rubric_reads_the_option_named(app, client, tenant_a):
    job = create_job_with_questions(client, tenant_a, questions=("Which shift do you prefer?",))
    question = client.get(f"/v1/jobs/{job['id']}/questions", headers=tenant_a.headers).json["data"][
        0
    ]
    rubric = client.put(
        f"/v1/jobs/{job['id']}/questions/{question['id']}/rubric",
        headers=tenant_a.headers,
        json={
            "answer_type": "choice",
            "choices": ["day", "night", "weekend"],
            "accepted": ["night"],
        },
    )
    assert rubric.status_code == 200 and rubric.json["inferred_answer_type"] == "choice"
    call_id = placed_call(app, application_for_call(client, tenant_a, job=job))
    talk = converse(app, call_id, ["Yes.", "Yes.", "Whatever works.", "Nights, definitely.", "No."])
    assert "Which would it be: day, night or weekend?" in talk.lines
    answer = read_call(client, tenant_a, call_id)["answers"][0]
    assert (
        answer["value"] == "night" and answer["meets_requirement"] is True and answer["score"] == 5
    )


def test_a_conversation_is_refused_for_a_call_not_being_placed(app, client, tenant_a):
    application = application_for_call(client, tenant_a)
    call_id = placed_call(app, application)
    converse(app, call_id, GOOD)
    with app.app_context(), database.connection_context():
        with pytest.raises(ConversationRefused):
            open_conversation(call_id)  # finished
        with pytest.raises(ConversationRefused):
            open_conversation("00000000-0000-4000-8000-000000000000")
        with pytest.raises(ConversationRefused):
            open_conversation("not-a-uuid")
        Call.update(status="queued", dialled_at=None).where(Call.id == call_id).execute()
        with pytest.raises(ConversationRefused):
            open_conversation(call_id)  # queued, not claimed for dialling


def test_close_is_kept_once_and_the_record_stays_consistent(app, client, tenant_a):
    call_id = placed_call(app, application_for_call(client, tenant_a))
    with app.app_context(), database.connection_context():
        conversation = open_conversation(call_id)
        list(conversation.greet(at_ms=0))
        list(conversation.hear("Yes.", at_ms=2000))
        with pytest.raises(ConversationRefused):
            open_conversation(call_id)  # a second socket for the same call
        conversation.close("failed", at_ms=5000)
        conversation.close("completed", at_ms=9000)
        assert list(conversation.hear("Hello?", at_ms=9500)) == []
    call = read_call(client, tenant_a, call_id)
    assert (
        call["status"] == "failed"
        and call["end_reason"] == "failed"
        and call["duration_seconds"] == 5
    )
    assert [turn["speaker"] for turn in call["transcript"]] == ["agent", "candidate", "agent"]


def test_faq_and_rubric_sub_resources_validate_and_404(client, tenant_a, tenant_b):
    job = create_job_with_questions(client, tenant_a)
    question = client.get(f"/v1/jobs/{job['id']}/questions", headers=tenant_a.headers).json["data"][
        0
    ]
    empty = client.get(f"/v1/jobs/{job['id']}/faq", headers=tenant_a.headers)
    assert (
        empty.status_code == 200
        and empty.json["entries"] == []
        and empty.json["updated_at"] is None
    )
    too_many = [{"question": f"q{n}?", "answer": "a"} for n in range(101)]
    for body in ({"entries": too_many}, {"entries": [{"question": "", "answer": "a"}]}, {}):
        refused = client.put(f"/v1/jobs/{job['id']}/faq", headers=tenant_a.headers, json=body)
        assert refused.status_code == 422 and refused.json["error"]["fields"]
    assert client.get(f"/v1/jobs/{job['id']}/faq", headers=tenant_b.headers).status_code == 404

    rubric_url = f"/v1/jobs/{job['id']}/questions/{question['id']}/rubric"
    default = client.get(rubric_url, headers=tenant_a.headers).json
    assert default["answer_type"] is None and default["inferred_answer_type"] == "number"
    assert default["knockout"] is False and default["weight"] == 1.0
    for body in (
        {"answer_type": "choice"},
        {"answer_type": "yes_no", "minimum": 3},
        {"answer_type": "choice", "choices": ["a"], "accepted": ["b"]},
        {"answer_type": "essay"},
        {"weight": -1},
        {"answer_type": "choice", "choices": [f"option {n}" for n in range(21)]},
    ):
        refused = client.put(rubric_url, headers=tenant_a.headers, json=body)
        assert refused.status_code == 422, body
    assert client.get(rubric_url, headers=tenant_b.headers).status_code == 404
    missing = f"/v1/jobs/{job['id']}/questions/00000000-0000-4000-8000-000000000000/rubric"
    assert client.get(missing, headers=tenant_a.headers).status_code == 404


@pytest.mark.parametrize(
    "script, hour",
    [
        (["Yes.", "Can you call me back tomorrow at 10?"], 10),
        (["Yes, but it's not a good time, I'm driving.", "Tomorrow at 10 works."], 10),
        (["Yes.", "No, not really.", "After 5 tomorrow."], 17),
    ],
    ids=["tomorrow-at-10", "not-now-then-a-time", "after-5"],
)
def test_a_callback_is_booked_as_the_next_attempt_and_confirmed_aloud(
    app, client, tenant_a, script, hour
):
    job = create_job_with_questions(client, tenant_a)
    open_every_day(client, tenant_a, job)
    application = application_for_call(client, tenant_a, job=job)  # +1415...: Los Angeles
    call_id = placed_call(app, application)
    talk = converse(app, call_id, script)
    call = read_call(client, tenant_a, call_id)
    assert (
        call["end_reason"] == "callback_booked"
        and call["status"] == "completed"
        and call["assessment"] is None
    )
    (booked,) = queued_callbacks(client, tenant_a, application)
    when = local(booked["scheduled_for"])
    tomorrow = dt.datetime.now(ZoneInfo("America/Los_Angeles")).date() + dt.timedelta(days=1)
    assert (when.date(), when.hour, when.minute) == (tomorrow, hour, 0)
    assert booked["trigger"] == "callback"
    spoken = f"{when.strftime('%A, %B')} {when.day} at {when.strftime('%I:%M %p').lstrip('0')}"
    assert f"I've booked a call back for {spoken}" in talk.lines[-1]
    assert talk.messages[-1]["type"] == "end"


def test_a_callback_outside_the_window_is_offered_the_next_allowed_time(app, client, tenant_a):
    job = create_job_with_questions(client, tenant_a)
    open_every_day(client, tenant_a, job)
    application = application_for_call(client, tenant_a, job=job)
    call_id = placed_call(app, application)
    talk = converse(app, call_id, ["Yes.", "Call me back tomorrow at 11 pm.", "Yes, that works."])
    offer = talk.lines[-2]
    assert "The earliest I can call you back is" in offer and "8:00 AM" in offer
    (booked,) = queued_callbacks(client, tenant_a, application)
    when = local(booked["scheduled_for"])
    assert (when.hour, when.minute) == (8, 0)
    assert read_call(client, tenant_a, call_id)["end_reason"] == "callback_booked"


def test_a_candidate_who_asks_for_a_callback_mid_screening_is_resumed_on_it(app, client, tenant_a):
    job = create_job_with_questions(client, tenant_a)
    open_every_day(client, tenant_a, job)
    application = application_for_call(client, tenant_a, job=job)
    first = placed_call(app, application)
    converse(
        app,
        first,
        ["Yes.", "Yes.", "Seven years.", "Actually, can you call me back tomorrow at 10?"],
    )
    (booked,) = queued_callbacks(client, tenant_a, application)
    with app.app_context(), database.connection_context():
        Call.update(status="ringing", dialled_at=utcnow()).where(Call.id == booked["id"]).execute()
    talk = converse(app, booked["id"], ["Yes.", "Yes."])
    assert talk.lines[2].endswith("Do you hold a current BLS certification?")
    assert read_call(client, tenant_a, booked["id"])["answers"][0]["value"] == 7


def test_a_conversation_record_matches_the_openapi_document(app, client, tenant_a):
    from tests.test_openapi_answers import assert_answer_matches_the_document, strict_document

    job = create_job_with_questions(client, tenant_a, min_pay_rate=30, pay_frequency="Hourly")
    call_id = placed_call(app, application_for_call(client, tenant_a, job=job))
    converse(
        app,
        call_id,
        [
            "Yes.",
            "Yes.",
            "Six years.",
            barge("Thank you. Do you"),
            "What's the pay?",
            "No.",
            "A patient crashed on a night shift and I kept the team calm.",
            "Is there a gym?",
            "No, that's all.",
        ],
    )
    response = client.get(f"/v1/calls/{call_id}", headers=tenant_a.headers)
    record = response.json
    assert record["assessment"]["answers"][1]["value"] is False and record["candidate_questions"]
    assert_answer_matches_the_document(strict_document(client), response, "GET /v1/calls/{id}")
    listed = client.get("/v1/calls", headers=tenant_a.headers, query_string={"page": 1, "size": 5})
    assert_answer_matches_the_document(strict_document(client), listed, "GET /v1/calls")


def test_an_overlong_utterance_is_kept_bounded(app, client, tenant_a):
    call_id = placed_call(app, application_for_call(client, tenant_a))
    converse(app, call_id, ["Yes.", "Yes.", "seven " * 2000])
    call = read_call(client, tenant_a, call_id)
    said = [turn["text"] for turn in call["transcript"] if turn["speaker"] == "candidate"]
    assert len(said[-1]) == 2000 and call["answers"][0]["value"] == 7


def test_the_goodbye_goes_out_before_the_end_is_written_and_the_end_before_the_end_message(
    app, client, tenant_a
):
    call_id = placed_call(app, application_for_call(client, tenant_a))
    with app.app_context(), database.connection_context():
        conversation = open_conversation(call_id)
        list(conversation.greet(at_ms=0))
        turn = conversation.hear("Wrong number, sorry.", at_ms=2000)
        goodbye = next(turn)
        status_at_goodbye = Call.get_by_id(call_id).end_reason
        end = next(turn)
        status_at_end = Call.get_by_id(call_id).end_reason
    assert goodbye["type"] == "text" and end["type"] == "end"
    assert (status_at_goodbye, status_at_end) == (None, "wrong_person")


def test_an_ending_the_relay_never_delivered_is_kept_on_close(app, client, tenant_a):
    call_id = placed_call(app, application_for_call(client, tenant_a))
    with app.app_context(), database.connection_context():
        conversation = open_conversation(call_id)
        list(conversation.greet(at_ms=0))
        next(conversation.hear("Please stop calling me.", at_ms=2000))  # the socket went then
        conversation.close("hung_up", at_ms=2500)
    call = read_call(client, tenant_a, call_id)
    assert call["end_reason"] == "opted_out" and call["status"] == "completed"
