"""A person confirms a call before it is placed on the handshake revisions too: the tools/call of a
client whose session declared elicitation is answered as an event stream that asks the person
(`elicitation/create`), waits for the answer the client posts (to any worker), and only then places
the call. Through the official SDK client as hosts run it, on raw HTTP for 2025-06-18, and on a real
gunicorn of two workers."""

from __future__ import annotations

import json
import threading

import pytest
import requests

from tests.factories import create_job
from tests.oauth_flow import MemoryStorage, Person, create_user, grant, provider, run_oauth_session
from tests.test_fault_drills import gunicorn_server  # noqa: F401 - the fixture: the app under gunicorn, 2 workers
from tests.test_mcp_oauth import live_server  # noqa: F401 - the fixture
from tests.test_mcp_oauth_agent import answering, calls_of

SESSION = "Mcp-Session-Id"


def application_of(client, tenant, job, name: str, phone: str) -> dict:
    candidate = client.post(
        "/v1/candidates",
        headers=tenant.headers,
        json={
            "first_name": name,
            "email": f"{name.lower()}@example.com",
            "phone_no": phone,
            "source": "x",
            "source_id": name.lower(),
        },
    ).json
    return client.post(
        "/v1/applications",
        headers=tenant.headers,
        json={
            "candidate_source_id": candidate["source_id"],
            "job_source_id": job["source_id"],
            "source_application_status": "sourced",
            "application_stage": "ACTIVE",
        },
    ).json


@pytest.fixture
def person_and_job(client, tenant_a):
    create_user(client, tenant_a, "liv@example.com")
    return create_job(client, tenant_a, title="Theatre Nurse", source_id="theatre-nurse")


class RawClient:
    """A 2025-06-18 / 2025-11-25 host written against the transport by hand: what the SDK does, step
    by step."""

    def __init__(self, base: str, token: str, version: str, path: str = "/mcp"):
        self.url, self.version = base + path, version
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        }

    def initialize(self, capabilities: dict) -> requests.Response:
        answer = requests.post(
            self.url,
            headers=self.headers,
            timeout=20,
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": self.version,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            },
        )
        assert answer.status_code == 200, answer.text
        self.headers["MCP-Protocol-Version"] = answer.json()["result"]["protocolVersion"]
        if SESSION in answer.headers:
            self.headers[SESSION] = answer.headers[SESSION]
        return answer

    def post(self, message: dict, **options) -> requests.Response:
        return requests.post(self.url, headers=self.headers, json=message, timeout=30, **options)

    def call_tool(self, name: str, arguments: dict) -> requests.Response:
        return self.post(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            },
            stream=True,
        )


def events(response: requests.Response):
    """The JSON-RPC messages of an event stream, as they arrive."""
    data: list[str] = []
    for line in response.iter_lines(decode_unicode=True):
        if line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "" and data:
            yield json.loads("\n".join(data))
            data = []


def test_the_sdk_on_2025_11_25_asks_the_person_and_places_the_call_only_on_yes(
    client, tenant_a, live_url, person_and_job
):
    application = application_of(client, tenant_a, person_and_job, "Amara", "+44 20 7946 0958")

    def connect(action: str, asked: list):
        async def steps(mcp):
            return await mcp.call_tool("start_instant_call", {"application_id": application["id"]})

        auth = provider(f"{live_url}/mcp", Person("liv@example.com"), MemoryStorage())
        return run_oauth_session(
            f"{live_url}/mcp",
            auth,
            steps,
            mode="legacy",
            elicitation_callback=answering(action, asked),
        )

    for action in ("decline", "cancel"):
        asked: list = []
        refused = connect(action, asked)
        assert (
            len(asked) == 1
            and refused.is_error
            and "did not confirm: nothing was done" in refused.content[0].text
        )
    assert calls_of(client, tenant_a) == 0

    asked = []
    placed = connect("accept", asked)
    (question,) = asked
    assert "Amara" in question.message and "United Kingdom" in question.message
    assert "Theatre Nurse" in question.message
    assert not placed.is_error and placed.structured_content["application_id"] == application["id"]
    assert calls_of(client, tenant_a) == 1


def test_a_2025_06_18_host_is_asked_on_the_stream_and_its_answer_reaches_the_held_call(
    client, tenant_a, live_url, person_and_job
):
    application = application_of(client, tenant_a, person_and_job, "Bo", "+1 415 555 2671")
    _, token = grant(live_url, Person("liv@example.com"))
    host = RawClient(live_url, token["access_token"], "2025-06-18")
    host.initialize({"elicitation": {}})
    assert SESSION in host.headers

    with host.call_tool("start_instant_call", {"application_id": application["id"]}) as held:
        assert held.headers["Content-Type"].startswith("text/event-stream")
        stream = events(held)
        question = next(stream)
        # 2025-06-18's shape
        assert question["method"] == "elicitation/create" and "mode" not in question["params"]
        assert "United States" in question["params"]["message"]
        assert question["params"]["requestedSchema"]["required"] == ["confirm"]
        assert calls_of(client, tenant_a) == 0  # nothing placed while the person reads
        answered = host.post(
            {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"confirm": True}},
            }
        )
        assert answered.status_code == 202
        result = next(stream)
    assert result["id"] == 7 and result["result"]["isError"] is False
    assert result["result"]["structuredContent"]["application_id"] == application["id"]
    assert calls_of(client, tenant_a) == 1


def test_an_answer_from_another_authorization_or_too_late_places_nothing(
    make_app,
    live_server,  # noqa: F811
    tenant_a,
    person_and_job,
    client,
):
    app = make_app(MCP_CONFIRMATION_SECONDS=1.5)
    base = live_server(app)
    application = application_of(client, tenant_a, person_and_job, "Cy", "+1 415 555 2671")
    _, token = grant(base, Person("liv@example.com"))
    # the same person through another client: another grant
    _, other = grant(base, Person("liv@example.com"))
    host, intruder = (
        RawClient(base, token["access_token"], "2025-11-25"),
        RawClient(base, other["access_token"], "2025-11-25"),
    )
    host.initialize({"elicitation": {"form": {}}})

    with host.call_tool("start_instant_call", {"application_id": application["id"]}) as held:
        stream = events(held)
        question = next(stream)
        assert question["params"]["mode"] == "form"
        intruder.post(
            {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"confirm": True}},
            }
        )
        rest = list(stream)
    assert rest[0] == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": question["id"], "reason": "not answered in time"},
    }
    assert (
        rest[-1]["result"]["isError"]
        and "did not answer within 1.5 s" in rest[-1]["result"]["content"][0]["text"]
    )
    late = host.post(
        {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"action": "accept", "content": {"confirm": True}},
        }
    )
    # accepted as a message, but there is no question left for it to answer
    assert late.status_code == 202
    assert calls_of(client, tenant_a) == 0


def test_only_oauth_hosts_that_declare_elicitation_get_a_session_and_a_foreign_session_is_404(
    client, tenant_a, live_url, person_and_job
):
    application = application_of(client, tenant_a, person_and_job, "Di", "+1 415 555 2671")
    _, token = grant(live_url, Person("liv@example.com"))
    keyed = RawClient(live_url, tenant_a.key, "2025-11-25")
    assert SESSION not in keyed.initialize({"elicitation": {}}).headers  # API keys are never asked
    mute = RawClient(live_url, token["access_token"], "2025-11-25")
    assert SESSION not in mute.initialize({}).headers
    refused = mute.call_tool("start_instant_call", {"application_id": application["id"]}).json()[
        "result"
    ]
    assert (
        refused["isError"]
        and "declares the elicitation capability" in refused["content"][0]["text"]
    )
    old = RawClient(live_url, token["access_token"], "2025-03-26")
    # no elicitation in that revision
    assert SESSION not in old.initialize({"elicitation": {}}).headers

    asking = RawClient(live_url, token["access_token"], "2025-11-25")
    asking.initialize({"elicitation": {}})
    forged = dict(asking.headers, **{SESSION: asking.headers[SESSION][:-2] + "xx"})
    answer = requests.post(
        asking.url, headers=forged, timeout=10, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
    )
    assert answer.status_code == 404 and answer.json()["error"]["type"] == "session_not_found"
    _, other = grant(live_url, Person("liv@example.com"))
    stolen = dict(asking.headers, Authorization=f"Bearer {other['access_token']}")
    assert (
        requests.post(
            asking.url,
            headers=stolen,
            timeout=10,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        ).status_code
        == 404
    )
    assert calls_of(client, tenant_a) == 0


def test_a_worker_holds_at_most_its_share_of_questions(
    make_app,
    live_server,  # noqa: F811
    tenant_a,
    person_and_job,
    client,
):
    app = make_app(MCP_HELD_CONFIRMATIONS=1, MCP_CONFIRMATION_SECONDS=30)
    base = live_server(app)
    application = application_of(client, tenant_a, person_and_job, "Ed", "+1 415 555 2671")
    _, token = grant(base, Person("liv@example.com"))
    host = RawClient(base, token["access_token"], "2025-11-25")
    host.initialize({"elicitation": {}})
    with host.call_tool("start_instant_call", {"application_id": application["id"]}) as first:
        question = next(events(first))
        with host.call_tool("start_instant_call", {"application_id": application["id"]}) as second:
            (busy,) = list(events(second))
        assert (
            busy["result"]["isError"]
            and "Too many confirmations" in busy["result"]["content"][0]["text"]
        )
        host.post({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}})
    assert calls_of(client, tenant_a) == 0


@pytest.mark.slow
def test_on_gunicorn_the_answer_reaches_the_worker_holding_the_question(
    gunicorn_server,  # noqa: F811
    client,
    tenant_a,
    person_and_job,
):
    """Two workers: each host's answer lands on whichever worker the connection pool picks, and
    every held call sees its own person's yes (or no) and nothing else."""
    applications = [
        application_of(client, tenant_a, person_and_job, f"Fay{n}", "+1 415 555 2671")
        for n in range(4)
    ]
    base, _port = gunicorn_server(HIREKIT_MCP_HELD_CONFIRMATIONS="4", HIREKIT_WEB_THREADS="6")
    _, token = grant(base, Person("liv@example.com"))
    outcomes: dict[int, dict] = {}

    def host_run(n: int):
        host = RawClient(base, token["access_token"], "2025-11-25")
        host.initialize({"elicitation": {}})
        with host.call_tool(
            "start_instant_call", {"application_id": applications[n]["id"]}
        ) as held:
            stream = events(held)
            question = next(stream)
            yes = n % 2 == 0
            host.post(
                {
                    "jsonrpc": "2.0",
                    "id": question["id"],
                    "result": {
                        "action": "accept" if yes else "decline",
                        "content": {"confirm": True} if yes else None,
                    },
                }
            )
            outcomes[n] = next(stream)

    threads = [threading.Thread(target=host_run, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == [0, 1, 2, 3]
    for n, outcome in outcomes.items():
        assert outcome["result"]["isError"] is (n % 2 == 1)
    placed = client.get("/v1/calls?page=1&size=100", headers=tenant_a.headers).json["data"]
    assert sorted(call["application_id"] for call in placed) == sorted(
        applications[n]["id"] for n in (0, 2)
    )
