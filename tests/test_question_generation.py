"""POST /v1/jobs/:job_id/questions/generate: rule-based questions from realistic postings, no
duplicates, the model path and its fallback."""

import json
import re
import time

import pytest
from werkzeug import Response

from tests.factories import create_job

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

NURSE = """Registered Nurse - Medical ICU (Nights)

St. Mary's Medical Center is hiring an experienced RN for our 24-bed Medical ICU.

Requirements:
- Active California RN license
- 3+ years of ICU experience in an acute care hospital
- Current BLS and ACLS certifications
- Experience with ventilator management and IV therapy
- Charting in Epic

Schedule: three 12-hour night shifts per week, every other weekend and some holidays.

Nice to have:
- CCRN certification
- Telemetry background
"""

BACKEND = """Senior Backend Engineer (Payments)

We're looking for a backend engineer to build and scale our payments platform.

What you'll need:
- 5+ years of professional experience building backend services in Python
- 2+ years running PostgreSQL in production
- Experience with Docker, Kubernetes and AWS
- Strong understanding of REST APIs and distributed systems

Nice to have:
- Go or Rust
- Kafka

This is a remote position; you must be located in the US. Monday through Friday, with a rotating on-call week.
"""  # noqa: E501

WAREHOUSE = """Warehouse Associate - 2nd shift

Join our distribution center team picking, packing and shipping customer orders.

Requirements:
- At least 1 year of warehouse or distribution center experience
- Forklift certification (or willingness to be certified within 30 days)
- Experience with RF scanner and pallet jack
- Able to lift up to 50 lbs and stand for an entire shift
- Must be 18 years of age or older
- Must pass a background check and drug screen

Hours: second shift, 3pm-11:30pm, with mandatory overtime during peak season. Start immediately.
"""

POSTINGS = {
    "nurse": dict(
        title="Registered Nurse - Medical ICU",
        desc=NURSE,
        city="San Francisco",
        state_name="California",
        country="US",
        min_pay_rate=62,
        max_pay_rate=85,
        pay_frequency="hourly",
        employment_type="full_time",
    ),
    "backend": dict(
        title="Senior Backend Engineer",
        industry="fintech",
        desc=BACKEND,
        country="US",
        state_name="New York",
        workplace_type="remote",
        min_pay_rate=160000,
        max_pay_rate=200000,
        pay_frequency="yearly",
        pay_rate_currency="USD",
        start_date="2026-03-02T00:00:00Z",
    ),
    "warehouse": dict(
        title="Warehouse Associate",
        industry="logistics",
        desc=WAREHOUSE,
        city="Reno",
        state_name="Nevada",
        country="US",
        min_pay_rate=19.5,
        max_pay_rate=22,
        pay_frequency="hourly",
    ),
}

# what each posting names, and what appears only in the others (or in its nice-to-haves)
PRESENT = {
    "nurse": [
        "ICU",
        "3",
        "RN license",
        "BLS",
        "ACLS",
        "ventilator",
        "Epic",
        "12-hour night shifts",
        "$62",
        "$85",
        "San Francisco",
    ],
    "backend": [
        "Python",
        "5",
        "PostgreSQL",
        "2",
        "Docker",
        "Kubernetes",
        "AWS",
        "remote",
        "$160,000",
        "2026-03-02",
        "on-call",
    ],
    "warehouse": [
        "warehouse",
        "1 year",
        "forklift",
        "RF scanner",
        "pallet jack",
        "50 lbs",
        "background check",
        "drug screen",
        "second shift",
        "overtime",
        "Reno",
        "$19.50",
    ],
}
ABSENT = {
    "nurse": [
        "Python",
        "PostgreSQL",
        "Kubernetes",
        "forklift",
        "warehouse",
        "CCRN",
        "telemetry",
        "lbs",
        "remote",
        "Go ",
    ],
    "backend": [
        "ICU",
        "BLS",
        "RN",
        "forklift",
        "Kafka",
        "Rust",
        "Go ",
        "lbs",
        "background check",
        "shift",
    ],
    "warehouse": ["ICU", "BLS", "Python", "Kubernetes", "18 years", "remote", "Epic"],
}
YEARS_IN_TEXT = {"nurse": {3}, "backend": {5, 2}, "warehouse": {1}}


def generate(client, tenant, job):
    response = client.post(f"/v1/jobs/{job['id']}/questions/generate", headers=tenant.headers)
    assert response.status_code == 201, response.json
    return response.json["data"]


@pytest.mark.parametrize("posting", sorted(POSTINGS))
def test_generated_questions_mention_what_the_posting_asks_and_nothing_else(
    client, tenant_a, posting
):
    job = create_job(client, tenant_a, **POSTINGS[posting])
    questions = generate(client, tenant_a, job)
    assert 5 <= len(questions) <= 10
    text = "\n".join(q["question_text"] for q in questions)
    for expected in PRESENT[posting]:
        assert expected in text, f"{expected!r} missing from:\n{text}"
    for unexpected in ABSENT[posting]:
        assert unexpected not in text, f"{unexpected!r} should not appear in:\n{text}"
    asked_years = {int(n) for n in re.findall(r"at least (\d+) years?", text)}
    assert asked_years == YEARS_IN_TEXT[posting]
    assert "authorized to work in the United States" in text
    assert [q["source_id"] for q in questions] == [
        f"generated-{n}" for n in range(1, len(questions) + 1)
    ]
    assert all(q["generated"] and q["application_id"] is None for q in questions)


def test_years_question_names_the_skill_it_counts(client, tenant_a):
    job = create_job(client, tenant_a, **POSTINGS["nurse"])
    years = [
        q["question_text"]
        for q in generate(client, tenant_a, job)
        if q["question_text"].startswith("How many years")
    ]
    assert years == [
        "How many years of ICU experience do you have? This role asks for at least 3 years."
    ]


def test_generating_twice_adds_no_duplicates(client, tenant_a):
    job = create_job(client, tenant_a, **POSTINGS["backend"])
    first = generate(client, tenant_a, job)
    assert generate(client, tenant_a, job) == []
    listed = client.get(f"/v1/jobs/{job['id']}/questions", headers=tenant_a.headers).json["data"]
    assert [q["id"] for q in listed] == [q["id"] for q in first]


def test_generation_skips_questions_the_job_already_has_and_numbers_after_them(client, tenant_a):
    job = create_job(client, tenant_a, **POSTINGS["warehouse"])
    expected = generate(
        client,
        tenant_a,
        create_job(client, tenant_a, **{**POSTINGS["warehouse"], "source_id": "twin"}),
    )
    existing = expected[2]["question_text"]
    client.post(
        f"/v1/jobs/{job['id']}/questions",
        json={"question_text": existing.upper(), "source_id": "mine"},
        headers=tenant_a.headers,
    )
    created = generate(client, tenant_a, job)
    assert existing not in [q["question_text"] for q in created]
    assert len(created) == len(expected) - 1
    assert created[0]["position"] == 2


def test_generate_for_unknown_or_foreign_job_is_404(client, tenant_a, tenant_b):
    job = create_job(client, tenant_a)
    assert (
        client.post(
            f"/v1/jobs/{job['id']}/questions/generate", headers=tenant_b.headers
        ).status_code
        == 404
    )
    assert (
        client.post("/v1/jobs/not-a-job/questions/generate", headers=tenant_a.headers).status_code
        == 404
    )


# ---- the model path -----------------------------------------------------------

MODEL_QUESTIONS = [
    "Walk me through a Python service you built that handles payments.",
    "How have you tuned PostgreSQL queries under production load?",
    "Which Kubernetes objects have you written by hand?",
    "Are you authorized to work in the US without sponsorship?",
    "When could you start?",
    "Does a base salary of $160k-$200k fit your expectations?",
]


def chat_completion(content: str) -> dict:
    return {
        "id": "chatcmpl-1",
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


@pytest.fixture
def model_app(make_app, httpserver):
    def build(**overrides):
        return make_app(
            LLM_URL=httpserver.url_for("/v1"),
            LLM_API_KEY="sk-test",
            LLM_MODEL="test-model",
            **overrides,
        )

    return build


def test_configured_model_writes_the_questions(model_app, make_tenant, httpserver):
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_json(
        chat_completion(json.dumps({"questions": MODEL_QUESTIONS}))
    )
    client, tenant = model_app().test_client(), make_tenant("model-co")
    job = create_job(client, tenant, **POSTINGS["backend"])
    questions = generate(client, tenant, job)
    assert [q["question_text"] for q in questions] == MODEL_QUESTIONS
    assert all(q["generated"] for q in questions)
    ((request, _),) = httpserver.log
    sent = request.get_json()
    assert request.headers["Authorization"] == "Bearer sk-test" and sent["model"] == "test-model"
    assert (
        "5+ years of professional experience building backend services in Python"
        in sent["messages"][-1]["content"]
    )


def test_model_answer_in_a_code_fence_is_accepted(model_app, make_tenant, httpserver):
    fenced = "```json\n" + json.dumps({"questions": MODEL_QUESTIONS}) + "\n```"
    httpserver.expect_request("/v1/chat/completions").respond_with_json(chat_completion(fenced))
    client, tenant = model_app().test_client(), make_tenant("fenced")
    assert len(generate(client, tenant, create_job(client, tenant, **POSTINGS["backend"]))) == len(
        MODEL_QUESTIONS
    )


@pytest.mark.parametrize("failure", ["http_500", "not_json", "too_few", "timeout"])
def test_model_failure_falls_back_to_the_rules(model_app, make_tenant, httpserver, failure):
    if failure == "http_500":
        httpserver.expect_request("/v1/chat/completions").respond_with_data(
            "upstream exploded", status=500
        )
    elif failure == "not_json":
        httpserver.expect_request("/v1/chat/completions").respond_with_json(
            chat_completion("Sure! Here are some questions...")
        )
    elif failure == "too_few":
        httpserver.expect_request("/v1/chat/completions").respond_with_json(
            chat_completion(json.dumps({"questions": MODEL_QUESTIONS[:2]}))
        )
    else:

        def slow(request):
            time.sleep(0.6)
            return Response(
                json.dumps(chat_completion(json.dumps({"questions": MODEL_QUESTIONS}))),
                content_type="application/json",
            )

        httpserver.expect_request("/v1/chat/completions").respond_with_handler(slow)
    client, tenant = model_app(LLM_TIMEOUT=0.2).test_client(), make_tenant("fallback")
    questions = generate(client, tenant, create_job(client, tenant, **POSTINGS["nurse"]))
    texts = [q["question_text"] for q in questions]
    assert (
        texts[0]
        == "How many years of ICU experience do you have? This role asks for at least 3 years."
    )
    assert not set(texts) & set(MODEL_QUESTIONS)
    deadline = time.monotonic() + 5
    # a timed-out request is logged when its handler ends
    while not httpserver.log and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(httpserver.log) == 1  # the model was asked once, then the rules answered
