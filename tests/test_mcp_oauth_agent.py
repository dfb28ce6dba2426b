"""What an agent connected with OAuth does: carry a person from a candidate to a screened
application with the candidates, applications and calls tools, read the call as resources and a
prompt, and never place a call the person who connected it did not confirm. Through the official SDK
client, as a host runs it."""

from __future__ import annotations

import time

import mcp_types as types
import pytest

from app.data.db import database
from tests.factories import create_job
from tests.oauth_flow import MemoryStorage, Person, create_user, provider, run_oauth_session
from tests.test_mcp_client import run_session
from tests.test_mcp_oauth import live_server  # noqa: F401 - the fixture


def calls_of(client, tenant) -> int:
    return client.get("/v1/calls?page=1&size=100", headers=tenant.headers).json["total"]


def answering(action: str, asked: list):
    """An elicitation callback that records what it was asked and answers `action` (yes when
    accepting)."""

    async def callback(context, params):
        asked.append(params)
        return types.ElicitResult(
            action=action, content={"confirm": True} if action == "accept" else None
        )

    return callback


@pytest.fixture
def connected(live_url, client, tenant_a):
    """A person of tenant A and a job; connect(steps, **client options) runs `steps` through a fresh
    OAuth client."""
    create_user(client, tenant_a, "liv@example.com")
    job = create_job(client, tenant_a, title="Theatre Nurse", source_id="theatre-nurse")

    def connect(steps, **options):
        auth = provider(f"{live_url}/mcp", Person("liv@example.com"), MemoryStorage())
        return run_oauth_session(f"{live_url}/mcp", auth, steps, **options)

    return job, connect


def test_an_agent_carries_a_candidate_to_a_screened_application_after_the_person_confirms(
    client, tenant_a, connected
):
    job, connect = connected
    asked: list = []

    async def steps(mcp):
        candidate = await mcp.call_tool(
            "upsert_candidate",
            {
                "first_name": "Amara",
                "last_name": "Okafor",
                "email": "amara@example.com",
                "phone_no": "+44 20 7946 0958",
                "source": "people_search",
                "source_id": "person-17",
                "idempotency_key": "agent-run-1",
            },
        )
        again = await mcp.call_tool(
            "upsert_candidate",
            {
                "first_name": "Amara",
                "last_name": "Okafor",
                "email": "amara@example.com",
                "phone_no": "+44 20 7946 0958",
                "source": "people_search",
                "source_id": "person-17",
                "idempotency_key": "agent-run-1",
            },
        )
        invalid = await mcp.call_tool(
            "upsert_candidate",
            {
                "first_name": "No",
                "email": "not-an-email",
                "phone_no": "12",
                "source": "x",
                "source_id": "y",
            },
        )
        application = await mcp.call_tool(
            "upsert_application",
            {
                "candidate_source_id": "person-17",
                "job_source_id": "theatre-nurse",
                "source_application_status": "sourced",
                "application_stage": "passive",
                "source_id": "app-17",
            },
        )
        call = await mcp.call_tool(
            "start_instant_call", {"application_id": application.structured_content["id"]}
        )
        listed = await mcp.list_resources()
        return candidate, again, invalid, application, call, listed

    candidate, again, invalid, application, call, listed = connect(
        steps, elicitation_callback=answering("accept", asked)
    )
    # replayed, not twice
    assert not candidate.is_error and again.structured_content == candidate.structured_content
    assert (
        invalid.is_error
        and "email" in invalid.content[0].text
        and "phone_no" in invalid.content[0].text
    )
    assert (
        not application.is_error
        and application.structured_content["application_stage"] == "PASSIVE"
    )
    assert application.structured_content["candidate"]["id"] == candidate.structured_content["id"]

    (question,) = asked
    assert "Amara Okafor" in question.message and "United Kingdom" in question.message
    assert "Theatre Nurse" in question.message
    assert (
        not call.is_error
        and call.structured_content["application_id"] == application.structured_content["id"]
    )
    assert calls_of(client, tenant_a) == 1
    call_id = call.structured_content["id"]
    uris = [str(resource.uri) for resource in listed.resources]
    assert f"hirekit://jobs/{job['id']}/description" in uris

    async def review(mcp):
        scorecard = await mcp.read_resource(f"hirekit://calls/{call_id}/scorecard")
        description = await mcp.read_resource(f"hirekit://jobs/{job['id']}/description")
        templates = await mcp.list_resource_templates()
        prompt = await mcp.get_prompt(
            "review_screened_candidate", {"application_id": application.structured_content["id"]}
        )
        return scorecard, description, templates, prompt

    scorecard, description, templates, prompt = connect(review)
    assert f'"call_id": "{call_id}"' in scorecard.contents[0].text
    assert description.contents[0].text.startswith("# Theatre Nurse")
    assert {t.uri_template for t in templates.resource_templates} >= {
        "hirekit://calls/{call_id}/transcript",
        "hirekit://jobs/{job_id}/questions",
    }
    text = prompt.messages[0].content.text
    assert "Amara Okafor" in text and f"hirekit://calls/{call_id}/scorecard" in text


def test_a_declined_confirmation_places_no_call(client, tenant_a, connected):
    job, connect = connected
    application = client.post(
        "/v1/applications",
        headers=tenant_a.headers,
        json={
            "candidate_source_id": client.post(
                "/v1/candidates",
                headers=tenant_a.headers,
                json={
                    "first_name": "Bo",
                    "email": "bo@example.com",
                    "phone_no": "+1 415 555 2671",
                    "source": "x",
                    "source_id": "bo",
                },
            ).json["source_id"],
            "job_source_id": job["source_id"],
            "source_application_status": "sourced",
            "application_stage": "ACTIVE",
        },
    ).json
    for action in ("decline", "cancel"):
        asked: list = []

        async def steps(mcp):
            return await mcp.call_tool("start_instant_call", {"application_id": application["id"]})

        refused = connect(steps, elicitation_callback=answering(action, asked))
        assert len(asked) == 1 and "United States" in asked[0].message
        assert refused.is_error and "did not confirm: nothing was done" in refused.content[0].text
    assert calls_of(client, tenant_a) == 0


def test_a_client_that_cannot_ask_gets_a_clear_error_and_api_keys_are_not_asked(
    live_url, client, tenant_a, connected
):
    job, connect = connected
    candidate = client.post(
        "/v1/candidates",
        headers=tenant_a.headers,
        json={
            "first_name": "Cy",
            "email": "cy@example.com",
            "phone_no": "+1 415 555 2671",
            "source": "x",
            "source_id": "cy",
        },
    ).json
    application = client.post(
        "/v1/applications",
        headers=tenant_a.headers,
        json={
            "candidate_source_id": candidate["source_id"],
            "job_source_id": job["source_id"],
            "source_application_status": "sourced",
            "application_stage": "ACTIVE",
        },
    ).json

    async def steps(mcp):
        return await mcp.call_tool("start_instant_call", {"application_id": application["id"]})

    no_elicitation = connect(steps)  # 2026-07-28, but no elicitation capability declared
    assert (
        no_elicitation.is_error
        and "did not declare the elicitation capability" in no_elicitation.content[0].text
    )
    handshake = connect(steps, mode="legacy")  # 2025-11-25 without the elicitation capability
    assert (
        handshake.is_error
        and "Connect with protocol version 2026-07-28" in handshake.content[0].text
    )
    assert "declares the elicitation capability at initialize" in handshake.content[0].text
    assert calls_of(client, tenant_a) == 0

    # an API key: today's behaviour
    placed = run_session(f"{live_url}/mcp", tenant_a.key, "auto", steps)
    assert not placed.is_error and calls_of(client, tenant_a) == 1


def test_the_sdk_refreshes_an_expired_access_token_and_keeps_working(
    make_app,
    live_server,  # noqa: F811
    tenant_a,
):
    app = make_app(OAUTH_ACCESS_TOKEN_SECONDS=1)
    base = live_server(app)
    with app.test_client() as test_client:
        create_user(test_client, tenant_a, "max@example.com")
    storage = MemoryStorage()
    auth = provider(f"{base}/mcp", Person("max@example.com"), storage)

    async def steps(mcp):
        first = await mcp.call_tool("list_jobs", {})
        issued = storage.tokens.access_token
        time.sleep(1.5)  # past the access token's life: the next call must refresh first
        second = await mcp.call_tool("list_jobs", {})
        return first, issued, second

    first, issued, second = run_oauth_session(f"{base}/mcp", auth, steps)
    assert not first.is_error and not second.is_error
    assert storage.tokens.access_token != issued
    from plugins.oauth.models import OAuthToken

    with app.app_context(), database.connection_context():
        rotated = OAuthToken.select().where(OAuthToken.rotated_at.is_null(False)).count()
    assert rotated >= 1
