"""The screening conversation with a model: a local OpenAI-compatible stand-in streams the agent's
words and issues tool calls; tokens reach the relay as they arrive, validated tools change the
record, and a bad tool call, an error or a timeout leaves a safe line and the rules' turn, with
nothing unvalidated recorded."""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections import deque
from zoneinfo import ZoneInfo

import pytest
from werkzeug import Response

from app.data.db import database
from plugins.calls.conversation.contract import open_conversation
from tests.call_factories import create_job_with_questions
from tests.conversation_script import (
    application_for_call,
    converse,
    local,
    open_every_day,
    placed_call,
    queued_callbacks,
    read_call,
)

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

SAFE_LINE = "Sorry, let me get that right."
OPENING = [
    "Yes, speaking.",
    "Sure.",
]  # the rules hold the opening; the model speaks from the first question


def tool_call(name: str, arguments: dict | str, *, call_id: str = "call_1") -> list[dict]:
    """A tool call as a model streams it: the name first, then the arguments in two pieces."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    half = len(text) // 2
    return [
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": text[:half]},
                }
            ]
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": text[half:]}}]},
    ]


def words(*tokens: str) -> list[dict]:
    return [{"content": token} for token in tokens]


class ModelStandIn:
    """Chat completions on 127.0.0.1: each streamed request answers the next scripted reply (deltas,
    an HTTP status, or a gate the stream waits at); a plain request (the call's analysis) answers a
    summary."""

    def __init__(self, httpserver):
        self.replies: deque = deque()
        self.requests: list[dict] = []
        self.finished_streams = 0
        httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(
            self.handle
        )

    def handle(self, request):
        body = request.get_json()
        self.requests.append(body)
        if not body.get("stream"):
            content = json.dumps(
                {
                    "summary": "Model summary of the call.",
                    "score": 50,
                    "recommendation": "hold",
                    "answers": [{"question": "q", "answer": "a", "meets_requirement": True}] * 3,
                }
            )
            return Response(
                json.dumps(
                    {
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": content}}
                        ]
                    }
                ),
                content_type="application/json",
            )
        reply = self.replies.popleft() if self.replies else words("Sorry, I lost my place.")
        if isinstance(reply, int):
            return Response("model exploded", status=reply)

        def events():
            for item in reply:
                if isinstance(item, threading.Event):
                    item.wait(10)
                    continue
                yield f"data: {json.dumps({'choices': [{'index': 0, 'delta': item}]})}\n\n"
            # counted before [DONE] goes out: a client that has read it must find the stream
            # counted, however late this server thread resumes after the yield
            self.finished_streams += 1
            yield "data: [DONE]\n\n"

        return Response(events(), content_type="text/event-stream")


@pytest.fixture
def model_app(make_app, httpserver):
    return make_app(
        LLM_URL=httpserver.url_for("/v1"),
        LLM_API_KEY="sk-test",
        LLM_MODEL="test-model",
        LLM_TIMEOUT=2.0,
    )


@pytest.fixture
def model(httpserver):
    return ModelStandIn(httpserver)


def test_the_model_speaks_and_records_through_tools(model_app, model, tenant_a):
    client = model_app.test_client()
    call_id = placed_call(model_app, application_for_call(client, tenant_a))
    model.replies.extend(
        [
            tool_call(
                "record_answer",
                {"question_index": 0, "value": 6, "evidence": "six years in the ICU"},
            ),
            words("Great, ", "thank you. ", "Do you hold a current ", "BLS certification?"),
            tool_call(
                "record_answer", {"question_index": 1, "value": True, "evidence": "Yes I do"}
            ),
            words("And tell me about a difficult shift."),
        ]
    )
    talk = converse(model_app, call_id, OPENING + ["I have six years in the ICU.", "Yes I do."])
    streamed = [m for m in talk.messages if m["type"] == "text" and not m["last"]]
    assert [m["token"] for m in streamed][:4] == [
        "Great, ",
        "thank you. ",
        "Do you hold a current ",
        "BLS certification?",
    ]
    assert "Great, thank you. Do you hold a current BLS certification?" in talk.lines

    call = read_call(client, tenant_a, call_id)
    assert call["analyzer"] == "llm:test-model"
    years, bls, story = call["answers"]
    assert (
        years["value"] == 6 and years["evidence"] == "six years in the ICU" and years["score"] == 5
    )
    assert bls["value"] is True and story["status"] == "pending"
    asked = model.requests[0]
    assert asked["stream"] is True and asked["model"] == "test-model"
    assert {tool["function"]["name"] for tool in asked["tools"]} == {
        "record_answer",
        "answer_candidate_question",
        "book_callback",
        "opt_out",
        "end_call",
    }
    assert asked["messages"][-1] == {"role": "user", "content": "I have six years in the ICU."}
    after_tool = model.requests[1]["messages"]
    assert after_tool[-1]["role"] == "tool" and "ask question 1 next" in after_tool[-1]["content"]


def test_the_first_token_leaves_before_the_model_has_finished(model_app, model, tenant_a):
    client = model_app.test_client()
    call_id = placed_call(model_app, application_for_call(client, tenant_a))
    gate = threading.Event()
    model.replies.append([{"content": "Thanks"}, gate, {"content": " for that."}])
    with model_app.app_context(), database.connection_context():
        conversation = open_conversation(call_id)
        list(conversation.greet(at_ms=0))
        for line in OPENING:
            list(conversation.hear(line, at_ms=1000))
        turn = conversation.hear("Quite a few years.", at_ms=5000)
        first = next(turn)
        unfinished_then = model.finished_streams
        gate.set()
        rest = list(turn)
    assert first == {"type": "text", "token": "Thanks", "last": False, "interruptible": True}
    assert unfinished_then == 0  # the stream was still open when the token went out
    assert rest[-1]["last"] is True and model.finished_streams == 1


@pytest.mark.parametrize(
    "bad_reply",
    [
        tool_call("record_answer", {"question_index": 7, "value": 6, "evidence": "six years"}),
        tool_call("record_answer", {"question_index": 0, "value": "lots", "evidence": "six years"}),
        tool_call(
            "record_answer",
            {"question_index": 0, "value": 60, "evidence": "sixty years of nursing"},
        ),
        tool_call("record_answer", "{not json"),
        tool_call("fire_the_candidate", {}),
        tool_call("end_call", {"reason": "completed"}),
        [
            *tool_call("book_callback", {"when": "half past never"}),
            {"content": "Booked you for 3 am Sunday!"},
        ],
    ],
    ids=[
        "unknown-question",
        "untyped-value",
        "evidence-not-said",
        "not-json",
        "unknown-tool",
        "end-with-questions-open",
        "unreadable-time-with-words",
    ],
)
def test_a_bad_tool_call_gives_a_safe_line_and_the_rules_turn(
    model_app, model, tenant_a, bad_reply
):
    client = model_app.test_client()
    call_id = placed_call(model_app, application_for_call(client, tenant_a))
    model.replies.append(bad_reply)
    talk = converse(model_app, call_id, OPENING + ["I have six years in the ICU."])
    # the safe line, then the rules' turn, in one utterance
    assert talk.lines[-1] == f"{SAFE_LINE} Thank you. Do you hold a current BLS certification?"
    assert "3 am" not in talk.said
    years = read_call(client, tenant_a, call_id)["answers"][0]
    assert (
        years["value"] == 6 and years["evidence"] == "I have six years in the ICU."
    )  # read by the rules


@pytest.mark.parametrize("failure", ["http_500", "timeout"])
def test_a_failing_or_slow_model_gives_a_safe_line_and_the_rules_turn(
    model_app, model, tenant_a, failure
):
    client = model_app.test_client()
    call_id = placed_call(model_app, application_for_call(client, tenant_a))
    never = threading.Event()
    model.replies.append(500 if failure == "http_500" else [never, {"content": "Too late."}])
    talk = converse(model_app, call_id, OPENING + ["Yes, I have six years."])
    never.set()
    assert talk.lines[-1] == f"{SAFE_LINE} Thank you. Do you hold a current BLS certification?"
    assert "Too late." not in talk.said
    assert read_call(client, tenant_a, call_id)["answers"][0]["value"] == 6


def test_candidate_questions_are_answered_from_the_record_never_by_the_model(
    model_app, model, tenant_a
):
    client = model_app.test_client()
    application = application_for_call(
        client,
        tenant_a,
        min_pay_rate=30,
        max_pay_rate=40,
        pay_frequency="Hourly",
        pay_rate_currency="USD",
    )
    call_id = placed_call(model_app, application)
    model.replies.extend(
        [
            tool_call(
                "answer_candidate_question", {"question": "What's the pay?", "source": "pay"}
            ),
            words("So, how many years of ICU experience do you have?"),
            tool_call(
                "answer_candidate_question",
                {"question": "Is there a dental plan?", "source": "benefits"},
            ),
            tool_call(
                "answer_candidate_question",
                {"question": "Is there a dental plan?", "source": "recruiter"},
            ),
            words("Back to my question: how many years?"),
        ]
    )
    talk = converse(
        model_app,
        call_id,
        OPENING + ["What's the pay?", "Is there a dental plan?", "Is there a dental plan?"],
    )
    assert (
        "The pay is 30 to 40 USD hourly. So, how many years of ICU experience do you have?"
        in talk.lines
    )
    assert sum(SAFE_LINE in line for line in talk.lines) == 1  # the invented source "benefits"
    call = read_call(client, tenant_a, call_id)
    sources = [
        (q["question"], q["source"], q["passed_to_recruiter"]) for q in call["candidate_questions"]
    ]
    assert sources == [
        ("What's the pay?", "pay", False),
        ("Is there a dental plan?", None, True),
        ("Is there a dental plan?", None, True),
    ]


def test_the_model_ends_a_finished_screening_and_the_record_is_scored(model_app, model, tenant_a):
    client = model_app.test_client()
    call_id = placed_call(model_app, application_for_call(client, tenant_a))
    story = "A patient crashed on a night shift and I kept the whole team calm."
    model.replies.extend(
        [
            tool_call("record_answer", {"question_index": 0, "value": 6, "evidence": "six years"}),
            words("Do you hold BLS?"),
            tool_call("record_answer", {"question_index": 1, "value": True, "evidence": "Yes"}),
            words("Tell me about a hard shift."),
            tool_call("record_answer", {"question_index": 2, "value": story, "evidence": story}),
            words("Any questions for me?"),
            tool_call("end_call", {"reason": "completed"}),
        ]
    )
    talk = converse(model_app, call_id, OPENING + ["Six years.", "Yes.", story, "No, thanks."])
    assert talk.finished and talk.messages[-1]["type"] == "end"
    call = read_call(client, tenant_a, call_id)
    assert call["status"] == "completed" and call["end_reason"] == "completed"
    assert call["summary"] == "Model summary of the call."  # the model's summary of the transcript
    assessment = call["assessment"]  # the scorecard of the validated answers, not the model's score
    assert assessment["analyzer"] == "llm:test-model" and assessment["recommendation"] == "advance"
    assert [a["value"] for a in assessment["answers"]] == [6, True, story]


def test_the_model_opts_the_candidate_out_through_the_dialogue(model_app, model, tenant_a):
    client = model_app.test_client()
    application = application_for_call(client, tenant_a)
    call_id = placed_call(model_app, application)
    model.replies.append(tool_call("opt_out", {}))
    talk = converse(model_app, call_id, OPENING + ["Take me off your list, never call again."])
    assert "won't call you again" in talk.lines[-1]
    assert read_call(client, tenant_a, call_id)["end_reason"] == "opted_out"
    candidate = client.get(
        f"/v1/candidates/{application['candidate_id']}", headers=tenant_a.headers
    ).json
    assert candidate["contact_opt_out"] is True


def test_the_model_books_a_callback_the_dialogue_checks_and_confirms(model_app, model, tenant_a):
    client = model_app.test_client()
    job = create_job_with_questions(client, tenant_a)
    open_every_day(client, tenant_a, job)
    application = application_for_call(client, tenant_a, job=job)
    call_id = placed_call(model_app, application)
    tomorrow = dt.datetime.now(ZoneInfo("America/Los_Angeles")).date() + dt.timedelta(days=1)
    model.replies.append(tool_call("book_callback", {"when": f"{tomorrow.isoformat()}T10:30"}))
    talk = converse(model_app, call_id, OPENING + ["Could you call me back tomorrow at 10:30?"])
    assert "I've booked a call back for" in talk.lines[-1] and "10:30 AM" in talk.lines[-1]
    (booked,) = queued_callbacks(client, tenant_a, application)
    when = local(booked["scheduled_for"])
    assert (when.date(), when.hour, when.minute) == (tomorrow, 10, 30)
    assert read_call(client, tenant_a, call_id)["end_reason"] == "callback_booked"
