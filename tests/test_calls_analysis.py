"""Call analysis by an OpenAI-compatible model (a local server plays it), and the rules taking over
when it fails."""

import json

import pytest

from tests.call_factories import JOB_QUESTIONS, application_for, instant_call

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

MODEL_SUMMARY = (
    "Jane spoke with the screener about the ICU nurse role. She has six years of ICU work, holds "
    "BLS, "
    "and described triaging a hard night shift calmly."
)


def chat_completion(content: str) -> dict:
    return {
        "id": "chatcmpl-7",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


def model_assessment(**overrides) -> dict:
    answer = {"question": "?", "answer": "yes", "meets_requirement": True, "note": "clear"}
    body = {
        "summary": MODEL_SUMMARY,
        "score": 88,
        "recommendation": "advance",
        "answers": [dict(answer, question=q) for q in JOB_QUESTIONS],
    }
    body.update(overrides)
    return body


@pytest.fixture
def model_client(make_app, httpserver):
    app = make_app(LLM_URL=httpserver.url_for("/v1"), LLM_API_KEY="sk-test", LLM_MODEL="test-model")
    return app.test_client()


def analysis_requests(httpserver) -> list:
    """The requests that asked the model to analyse a finished call (the call's conversation asks
    it too, for its turns, when a model is configured)."""
    json_object = {"type": "json_object"}
    return [
        request
        for request, _ in httpserver.log
        if (request.get_json(silent=True) or {}).get("response_format") == json_object
    ]


def completed_call(client, tenant) -> dict:
    call = instant_call(client, tenant, application_for(client, tenant)).json
    response = client.get(f"/v1/calls/{call['id']}", headers=tenant.headers)
    assert response.status_code == 200 and response.json["status"] == "completed"
    return response.json


def test_the_configured_model_writes_summary_and_assessment_from_the_transcript(
    model_client, tenant_a, httpserver
):
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_json(
        chat_completion(json.dumps(model_assessment()))
    )
    call = completed_call(model_client, tenant_a)
    assert call["summary"] == MODEL_SUMMARY
    assert [a["question"] for a in call["assessment"]["answers"]] == list(JOB_QUESTIONS)

    (request,) = analysis_requests(httpserver)
    assert request.headers["Authorization"] == "Bearer sk-test"
    body = request.get_json()
    assert body["model"] == "test-model" and body["response_format"] == {"type": "json_object"}
    asked = json.loads(body["messages"][-1]["content"])
    assert asked["questions"] == list(JOB_QUESTIONS)
    answered = [
        turn["text"]
        for turn in asked["transcript"]
        if turn["speaker"] == "candidate" and turn.get("question_index") is not None
    ]
    assert len(answered) == len(JOB_QUESTIONS) and all(answered)


@pytest.mark.parametrize(
    "failure", ["http_500", "not_json", "score_out_of_range", "answers_missing"]
)
def test_a_failing_or_unusable_model_falls_back_to_the_rules(
    model_client, tenant_a, httpserver, failure
):
    expectation = httpserver.expect_request("/v1/chat/completions")
    if failure == "http_500":
        expectation.respond_with_data("upstream exploded", status=500)
    elif failure == "not_json":
        expectation.respond_with_json(chat_completion("The candidate seems great!"))
    elif failure == "score_out_of_range":
        expectation.respond_with_json(chat_completion(json.dumps(model_assessment(score=140))))
    else:
        expectation.respond_with_json(chat_completion(json.dumps(model_assessment(answers=[]))))
    call = completed_call(model_client, tenant_a)
    assert len(analysis_requests(httpserver)) == 1  # the model was asked, once
    assert call["summary"] != MODEL_SUMMARY
    for question in JOB_QUESTIONS:
        assert question in call["summary"]
