"""Tenant isolation matrix: every registered route and method, called with tenant B's key at tenant
A's records.

Routes are read from app.url_map, so a new route fails the matrix until it says how to fill its path
parameters and what body reaches its ownership check (a 422 would prove nothing). Nothing of A's may
be returned (no A id or source_id in any 2xx body), changed or deleted (A's records read the same
afterwards); MCP tools see only the caller's tenant; a revoked key is refused on every authenticated
route.
"""

from __future__ import annotations

import io
import json
import re

import pytest

from app.security.auth import scheme_for
from app.data.db import database
from app.data.tenancy import revoke_key
from tests.factories import candidate_body, create_job, job_body, pdf_bytes
from tests.tenant_records import seed_records

# routes that hold no tenant data: health, the API document, and the person dataset (shared,
# read-only) /oauth and /.well-known: the authorization server reaches a tenant only through a
# person's sign-in (test_mcp_oauth)
NO_TENANT_DATA = re.compile(
    r"^/(healthz|readyz|openapi\.json|docs|static/|v[12]/(sandbox/)?person/|oauth/|\.well-known/)"
)
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
SCHEDULE_SETTING = {
    "window_start_time": "09:00:00",
    "window_end_time": "17:00:00",
    "daily_attempts": 1,
    "total_attempts": 1,
    "retry_interval": 60,
    "days_of_week": [1, 2, 3, 4, 5],
}


def request_for(rule: str, method: str, a: dict) -> dict | None:
    """What tenant B sends to `method rule` aimed at A's records: client.open kwargs; None when the
    matrix does not know."""
    question_query = {"source_id": a["question_source_id"]}
    known = {
        ("PATCH", "/v1/jobs/<job_id>"): {"json": {"title": "Taken over"}},
        ("PATCH", "/v1/candidates/<candidate_id>"): {"json": candidate_body(first_name="Mallory")},
        ("PATCH", "/v1/applications/<application_id>"): {
            "json": {"source_application_status": "rejected", "application_stage": "PASSIVE"}
        },
        ("POST", "/v1/applications/<application_id>/instant-call"): {},
        ("POST", "/v1/candidates/<candidate_id>/opt-out"): {},
        ("PUT", "/v1/candidates/<candidate_id>/timezone"): {"json": {"timezone": "Europe/Paris"}},
        ("PUT", "/v1/candidates/<candidate_id>/consent"): {"json": {"voice": False}},
        ("POST", "/v1/calls/<call_id>/cancel"): {},
        ("POST", "/v1/calls/<call_id>/reschedule"): {
            "json": {"scheduled_for": "2030-01-07T10:00:00Z"}
        },
        ("PUT", "/v1/tenant/contact-settings"): {
            "json": {"calling_hours_start": "09:00"}
        },  # B's own settings
        ("POST", "/v1/do-not-call"): {"json": {"phone_no": "+14155550123"}},  # B's own list
        ("DELETE", "/v1/do-not-call/<phone_no>"): {},
        ("POST", "/c/<token>"): {"data": {"action": "cancel", "csrf": "x"}},
        ("DELETE", "/v1/candidates/<candidate_id>/opt-out"): {},
        ("POST", "/v1/jobs/<job_id>/questions"): {
            "json": {"question_text": "Planted?", "source_id": "planted"}
        },
        ("POST", "/v1/jobs/<job_id>/questions/generate"): {},
        ("PATCH", "/v1/jobs/<job_id>/questions/<question_id>"): {
            "query_string": question_query,
            "json": {"question_text": "Changed?", "source_id": "changed"},
        },
        ("DELETE", "/v1/jobs/<job_id>/questions/<question_id>"): {"query_string": question_query},
        ("DELETE", "/v1/candidates/<candidate_id>"): {},
        ("POST", "/v1/candidates/<candidate_id>/anonymize"): {
            "json": {"fields": ["first_name", "email"]}
        },
        ("PATCH", "/v1/jobs/<job_id>/scheduling"): {"json": {"scheduling": True}},
        ("PUT", "/v1/jobs/<job_id>/schedule-setting"): {"json": SCHEDULE_SETTING},
        ("PUT", "/v1/jobs/<job_id>/faq"): {
            "json": {"entries": [{"question": "Planted?", "answer": "planted"}]}
        },
        ("PUT", "/v1/jobs/<job_id>/questions/<question_id>/rubric"): {"json": {"knockout": True}},
        ("PUT", "/v1/call-settings"): {"json": {"recording": True}},  # B's own setting, not A's
        ("POST", "/v1/tenant-webhook/subscribe/<tenant_webhook_id>"): {},
        ("POST", "/v1/tenant-webhook/unsubscribe/<tenant_webhook_id>"): {},
        ("POST", "/v1/tenant-webhook/deliveries/<delivery_id>/redeliver"): {},
        ("POST", "/v1/tenant-webhook/<tenant_webhook_id>/test"): {},
        ("POST", "/v1/tenant-webhook/<tenant_webhook_id>/replay"): {
            "json": {"since": "2026-01-01T00:00:00Z"}
        },
        ("POST", "/jobs/<int(max=2147483647):number>/apply"): {
            "data": lambda: {
                "name": "Mallory B",
                "email": "mallory@example.com",
                "resume": (io.BytesIO(pdf_bytes()), "cv.pdf"),
            }
        },
        # creates: the body names A's records by their source ids or A's tenant id; B must not reach
        # them
        ("POST", "/v1/applications"): {
            "json": {
                "candidate_source_id": a["candidate_source_id"],
                "job_source_id": a["job_source_id"],
                "source_application_status": "applied",
                "application_stage": "ACTIVE",
            }
        },
        ("POST", "/v1/applications/with-questions"): {
            "json": {
                "candidate_source_id": a["candidate_source_id"],
                "job_source_id": a["job_source_id"],
                "source_application_status": "applied",
                "application_stage": "ACTIVE",
                "questions": [{"question_text": "Planted?", "source_id": "planted"}],
            }
        },
        ("POST", "/v1/tenant-webhook"): {
            "json": {
                "tenant_id": a["tenant_id"],
                "triggered_event": "application_activty",
                "type": "post_call_screening",
                "fields": ["id"],
                "url": "http://127.0.0.1:9/b",
                "http_method": "POST",
                "content_type": "application/json",
            }
        },
        # upserts by A's source id: B pushes to its own tenant (A's record is not touched), or names
        # A's records (422)
        ("PUT", "/v1/jobs/by-source-id/<path:source_id>"): {"json": without_source_id(job_body())},
        ("PUT", "/v1/candidates/by-source-id/<path:source_id>"): {
            "json": without_source_id(candidate_body())
        },
        ("PUT", "/v1/applications/by-source-id/<path:source_id>"): {
            "json": {
                "candidate_source_id": a["candidate_source_id"],
                "job_source_id": a["job_source_id"],
                "source_application_status": "applied",
                "application_stage": "ACTIVE",
            }
        },
        # batches of upserts naming A's source ids: B's own records, or refused items
        ("PUT", "/v1/jobs/by-source-id"): {"json": {"items": [job_body(source_id=a["source_id"])]}},
        ("PUT", "/v1/candidates/by-source-id"): {
            "json": {"items": [candidate_body(source_id=a["source_id"])]}
        },
        ("PUT", "/v1/applications/by-source-id"): {
            "json": {
                "items": [
                    {
                        "candidate_source_id": a["candidate_source_id"],
                        "job_source_id": a["job_source_id"],
                        "source_id": "b-app",
                        "source_application_status": "applied",
                        "application_stage": "ACTIVE",
                    }
                ]
            }
        },
        # creates that name nothing of A's: they land in B's tenant
        ("POST", "/v1/jobs"): {"json": job_body()},
        ("POST", "/v1/candidates"): {"json": candidate_body()},
        ("POST", "/v1/users"): {
            "json": {
                "email": "mallory@example.com",
                "name": "Mallory",
                "password": "correct horse battery staple",
            }
        },
        ("PATCH", "/v1/users/<user_id>"): {"json": {"name": "Mallory", "disabled": True}},
        ("DELETE", "/v1/users/<user_id>"): {},
        ("DELETE", "/v1/users/<user_id>/authorizations/<authorization_id>"): {},
        ("GET", "/v1/events"): {"query_string": {"size": 100}},
        # the authorization server's forms and endpoints, sent without a sign-in, a form token or a
        # client
        ("POST", "/oauth/authorize"): {"data": {"decision": "allow"}},
        ("POST", "/oauth/sign-in"): {"data": {"email": "mallory@example.com", "password": "guess"}},
        ("POST", "/oauth/sign-out"): {},
        ("POST", "/oauth/authorizations/<consent_id>/revoke"): {},
        ("POST", "/oauth/token"): {"data": {"grant_type": "authorization_code", "code": "stolen"}},
        ("POST", "/oauth/revoke"): {"data": {"token": "hkat_stolen"}},
        ("POST", "/oauth/register"): {
            "json": {
                "redirect_uris": ["https://app.example/cb"],
                "token_endpoint_auth_method": "none",
            }
        },  # the event feed has no pages, only `after`
        # Twilio calls back with its signature, not a key: an unsigned callback about A's call is
        # refused
        ("POST", "/v1/calls/callbacks/twilio"): {
            "query_string": {"call_id": a["call_id"]},
            "data": {"CallStatus": "completed"},
        },
        # and an unsigned STOP opts nobody out
        ("POST", "/v1/calls/callbacks/twilio/sms"): {
            "data": {"Body": "STOP", "From": "+14155550100"}
        },
        # Telnyx signs its callbacks with Ed25519: an unsigned one about A's call is refused
        ("POST", "/v1/calls/callbacks/telnyx"): {
            "query_string": {"call_id": a["call_id"]},
            "data": {"CallStatus": "completed"},
        },
        # and an unsigned STOP to its messaging webhook opts nobody out
        ("POST", "/v1/calls/callbacks/telnyx/sms"): {
            "json": {
                "data": {
                    "event_type": "message.received",
                    "payload": {"from": {"phone_number": "+14155550100"}, "text": "STOP"},
                }
            }
        },
    }
    if (method, rule) in known:
        return known[(method, rule)]
    if method == "GET":
        return {
            "query_string": {"page": 1, "size": 100}
        }  # lists require them; single records ignore them
    return None


# what B may be answered on upserts by one of A's source ids: its own new record (201), or 422
# naming A's records
UPSERT_EXPECTED = {
    "/v1/jobs/by-source-id/<path:source_id>": {201},
    "/v1/candidates/by-source-id/<path:source_id>": {201},
    "/v1/applications/by-source-id/<path:source_id>": {422},
}
BATCH_EXPECTED = {
    "/v1/jobs/by-source-id": {200, 201},
    "/v1/candidates/by-source-id": {200, 201},
    "/v1/applications/by-source-id": {422},
}  # 200: B replaces the record it upserted on the route before


def without_cursors(response) -> str:
    """The answer's text without its signed cursors (next_after, next_cursor): random base64url
    text, in which a short identifier of A's (the person id "p1") turns up by chance in a few runs
    out of a hundred."""
    answer = response.json if response.is_json else None
    if not isinstance(answer, dict) or not {"next_after", "next_cursor"} & set(answer):
        return response.get_data(as_text=True)
    return json.dumps(
        {key: value for key, value in answer.items() if key not in ("next_after", "next_cursor")}
    )


def without_source_id(body: dict) -> dict:
    return {name: value for name, value in body.items() if name != "source_id"}


# what B may be answered on creates that name A's records (never 2xx); creates in B's own tenant are
# 201
CREATE_EXPECTED = {
    "/v1/applications": {404, 422},
    "/v1/applications/with-questions": {404, 422},
    "/v1/tenant-webhook": {403},
    "/v1/jobs": {201},
    "/v1/candidates": {201},
    "/v1/calls/callbacks/twilio": {403, 404},
    "/v1/calls/callbacks/twilio/sms": {403, 404},
    "/v1/calls/callbacks/telnyx": {403, 404},
    "/v1/calls/callbacks/telnyx/sms": {403, 404},
    "/v1/users": {201},
    "/v1/do-not-call": {201},
}


@pytest.fixture
def isolated(app, client, tenant_a, tenant_b):
    """A with twenty jobs (so its seeded job has a number B does not reach, even after the jobs B
    creates while the matrix walks the routes), B with its own records."""
    for _ in range(19):
        create_job(client, tenant_a)
    a = seed_records(client, tenant_a)
    b = seed_records(client, tenant_b)
    a.update(
        tenant_id=tenant_a.id,
        job_source_id=f"{tenant_a.id}-job",
        candidate_source_id=f"{tenant_a.id}-candidate",
        question_source_id=f"{tenant_a.id}-question",
        source_id=f"{tenant_a.id}-job",
    )
    assert a["number"] > b["number"]
    return a, b


def identifiers(a: dict) -> set[str]:
    """Strings that must never appear in an answer to B: A's ids, source ids and tenant id."""
    return {str(value) for key, value in a.items() if key != "number"}


def path_for(rule, a: dict) -> str:
    values = {}
    for name in rule.arguments:
        if name not in a:
            pytest.fail(
                f"the isolation matrix does not know how to fill <{name}> of {rule.rule}: "
                "add it to seed_records"
            )
        values[name] = a[name]
    return rule.build(values, append_unknown=False)[1]


def snapshot(client, tenant, a: dict) -> dict:
    """Everything of A's, read with A's key."""
    pages = "?page=1&size=100"
    paths = [
        f"/v1/jobs/{a['job_id']}",
        f"/v1/candidates/{a['candidate_id']}",
        f"/v1/applications/{a['application_id']}",
        f"/v1/calls/{a['call_id']}",
        f"/v1/jobs/{a['job_id']}/questions",
        f"/v1/jobs/{a['job_id']}/scheduling",
        f"/v1/jobs/{a['job_id']}/schedule-setting",
        f"/v1/jobs/{a['job_id']}/questions/{a['question_id']}",
        f"/v1/users/{a['user_id']}",
        f"/v1/jobs/{a['job_id']}/faq",
        f"/v1/jobs/{a['job_id']}/questions/{a['question_id']}/rubric",
        f"/v1/tenant-webhook/{a['tenant_webhook_id']}/deliveries{pages}",
        f"/v1/candidates/{a['candidate_id']}/resume",
        "/v1/tenant-webhook",
        f"/v1/jobs{pages}",
        f"/v1/candidates{pages}",
        f"/v1/applications{pages}",
        f"/v1/calls{pages}",
        "/v1/events?size=100",
        f"/v1/candidates/{a['candidate_id']}/export",
        f"/v1/privacy/erasures{pages}",
        "/v1/candidates?cursor=&size=100",
        "/v1/call-settings",
    ]
    state = {}
    for path in paths:
        response = client.get(path, headers=tenant.headers)
        assert response.status_code == 200, (path, response.status_code)
        body = response.json if response.is_json else response.get_data()  # the resume is a file
        if isinstance(body, dict):  # a signed cursor carries the time it was signed: not A's data
            body.pop("next_after", None)
            body.pop("next_cursor", None)
            body.pop("exported_at", None)  # when the export was assembled
        state[path] = body
    return state


def send_matrix_request(app, client, rule, method: str, a: dict, tenant):
    """`method rule` aimed at A's records (request_for's request), sent with `tenant`'s key in the
    route's scheme."""
    sent = request_for(rule.rule, method, a)
    assert sent is not None, (
        f"the isolation matrix has no request for {method} {rule.rule}: add one to request_for"
    )
    sent = {k: (v() if callable(v) else v) for k, v in sent.items()}
    with app.app_context(), database.connection_context():
        scheme = scheme_for(rule.endpoint.split(".")[0])
    headers = tenant.person_headers if scheme == "api_key" else tenant.headers
    return client.open(path_for(rule, a), method=method, headers=headers, **sent)


def test_tenant_b_reaches_nothing_of_tenant_a_on_any_route(
    app, client, tenant_a, tenant_b, isolated
):
    a, b = isolated
    before = snapshot(client, tenant_a, a)
    leaks = identifiers(a)
    checked = 0
    for rule in app.url_map.iter_rules():
        if NO_TENANT_DATA.match(rule.rule) or rule.rule.startswith("/mcp"):
            continue  # the MCP endpoints are walked tool by tool below
        for method in sorted(set(rule.methods) & set(METHODS)):
            response = send_matrix_request(app, client, rule, method, a, tenant_b)
            label = f"{method} {rule.rule} -> {response.status_code}"
            if rule.rule in UPSERT_EXPECTED:
                assert response.status_code in UPSERT_EXPECTED[rule.rule], (
                    label,
                    response.get_data(as_text=True),
                )
                # B's own record carries the source id B sent, nothing else of A's (a 422 names what
                # B sent)
                body = response.get_data(as_text=True).replace(f'"{a["source_id"]}"', '""')
                assert response.status_code >= 300 or not [s for s in leaks if s in body], (
                    f"{label} answered A's records: {body[:300]}"
                )
                checked += 1
                continue
            if (
                rule.rule in BATCH_EXPECTED
            ):  # the item B sent is B's own record (a new one), or refused
                assert response.status_code == 200, (label, response.get_data(as_text=True))
                (item,) = response.json["items"]
                assert (
                    item["status"] in BATCH_EXPECTED[rule.rule] and item.get("id") not in leaks
                ), (label, item)
                checked += 1
                continue
            if rule.arguments:
                assert response.status_code in (403, 404), (label, response.get_data(as_text=True))
            elif method == "POST":
                assert response.status_code in CREATE_EXPECTED[rule.rule], (
                    label,
                    response.get_data(as_text=True),
                )
            else:
                assert response.status_code == 200, label
            if response.status_code < 300:
                body = without_cursors(response)
                assert not [s for s in leaks if s in body], (
                    f"{label} answered A's records: {body[:300]}"
                )
            checked += 1
    assert checked > 30
    assert snapshot(client, tenant_a, a) == before, "B changed something of A's"


def test_list_filters_naming_a_records_find_nothing_for_b(client, tenant_b, isolated):
    a, _ = isolated
    filters = {
        "/v1/jobs": {"source_id": a["job_source_id"]},
        "/v1/candidates": {"source_id": a["candidate_source_id"]},
        "/v1/applications": {"job_id": a["job_id"], "candidate_id": a["candidate_id"]},
        "/v1/calls": {"application_id": a["application_id"], "job_id": a["job_id"]},
    }
    for path, query in filters.items():
        for name, value in query.items():
            response = client.get(
                path, query_string={"page": 1, "size": 100, name: value}, headers=tenant_b.headers
            )
            assert response.status_code in (200, 404, 422), (path, name, response.status_code)
            if response.status_code == 200:
                assert response.json["data"] == [], (path, name)


def test_webhook_deliveries_stay_with_their_tenant(client, tenant_a, tenant_b, isolated):
    a, b = isolated
    for tenant, own, other in ((tenant_a, a, b), (tenant_b, b, a)):
        hooks = client.get("/v1/tenant-webhook", headers=tenant.headers).get_data(as_text=True)
        assert own["tenant_webhook_id"] in hooks and other["tenant_webhook_id"] not in hooks
        log = client.get(
            f"/v1/tenant-webhook/{own['tenant_webhook_id']}/deliveries?page=1&size=100",
            headers=tenant.headers,
        ).json
        assert log["data"] and {d["payload"]["id"] for d in log["data"]} == {own["application_id"]}


def rpc(client, tenant, path, method, params, request_id=1):
    response = client.post(
        path,
        data=json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}),
        content_type="application/json",
        headers={
            **tenant.headers,
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.json


def tool_arguments(schema: dict, a: dict) -> dict:
    """Arguments for a tool from its input schema: A's ids and source ids where the tool takes them,
    else plain values."""
    plain = {"string": "x", "integer": 1, "number": 1, "boolean": False, "array": [], "object": {}}
    arguments = {}
    for name, prop in schema.get("properties", {}).items():
        if name in a:
            arguments[name] = a[name]
        elif name == "source_id" and "job_id" in schema.get("properties", {}):
            arguments[name] = a["job_source_id"]
        elif name in schema.get("required", []):
            arguments[name] = prop.get("enum", [None])[0] or plain.get(prop.get("type"), "x")
    return arguments


@pytest.mark.parametrize("endpoint", ["/mcp", "/mcp/sourcing"])
def test_mcp_tools_see_only_the_callers_tenant(app, client, tenant_a, tenant_b, isolated, endpoint):
    a, _ = isolated
    before = snapshot(client, tenant_a, a)
    leaks = identifiers(a)
    tools = rpc(client, tenant_b, endpoint, "tools/list", {})["result"]["tools"]
    assert tools
    for tool in tools:
        arguments = tool_arguments(tool["inputSchema"], a)
        reply = rpc(
            client, tenant_b, endpoint, "tools/call", {"name": tool["name"], "arguments": arguments}
        )
        result = reply.get("result", {})
        if not result.get("isError") and "error" not in reply:
            text = json.dumps(result)
            assert not [s for s in leaks if s in text], (
                f"{tool['name']}({arguments}) answered A's records: {text[:300]}"
            )
    assert snapshot(client, tenant_a, a) == before, (
        "an MCP tool called by B changed something of A's"
    )


def test_a_revoked_key_is_refused_on_every_authenticated_route(
    app, client, tenant_b, extra_key, isolated
):
    a, _ = isolated
    key = extra_key(tenant_b.id)
    with app.app_context(), database.connection_context():
        assert revoke_key(key) == 1
    families = set()
    for rule in app.url_map.iter_rules():
        family = rule.endpoint.split(".")[0]
        with app.app_context():
            scheme = scheme_for(family)
        if scheme is None:
            continue
        headers = {"X-API-Key": key} if scheme == "api_key" else {"Authorization": f"Bearer {key}"}
        for method in sorted(set(rule.methods) & set(METHODS)):
            response = client.open(path_for(rule, a), method=method, headers=headers, json={})
            assert response.status_code == 401, f"{method} {rule.rule} -> {response.status_code}"
            assert response.json["error"]["type"] == "authentication_error"
        families.add(family)
    assert {
        "jobs",
        "candidates",
        "applications",
        "questions",
        "scheduling",
        "calls",
        "webhooks",
        "board",
        "mcp",
        "person_v2",
    } <= families
