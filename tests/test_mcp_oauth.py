"""OAuth for the MCP servers as agent hosts use it: the official SDK's OAuth client discovers,
registers, signs a person in through the consent page and calls tools with tokens bound to one
endpoint; and every bad input is refused as the RFCs say."""

from __future__ import annotations

import threading

import pytest
import requests
from werkzeug.serving import make_server

from tests.factories import create_job
from tests.oauth_flow import (
    MemoryStorage,
    Person,
    authorization_url,
    create_user,
    exchange,
    grant,
    pkce_pair,
    provider,
    redirect_parameters,
    refresh,
    register_client,
    rpc,
    run_oauth_session,
)
from tests.test_mcp_sourcing import load_people

JOBS_SCOPES = "jobs:read jobs:write candidates:read candidates:write calls:read calls:write"


@pytest.fixture
def live_server():
    """serve(app): an app of the test's own settings behind a threaded server on 127.0.0.1; its base
    URL."""
    running = []

    def serve(app) -> str:
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        running.append((server, thread))
        return f"http://127.0.0.1:{server.server_port}"

    yield serve
    for server, thread in running:
        server.shutdown()
        thread.join(timeout=5)


def test_a_request_without_a_token_is_challenged_with_where_to_authorize(live_url):
    answer = requests.post(
        f"{live_url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=10
    )
    assert answer.status_code == 401
    challenge = answer.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{live_url}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert f'scope="{JOBS_SCOPES}"' in challenge
    metadata = requests.get(
        f"{live_url}/.well-known/oauth-protected-resource/mcp", timeout=10
    ).json()
    assert metadata["resource"] == f"{live_url}/mcp" and metadata["authorization_servers"] == [
        live_url
    ]
    assert metadata["scopes_supported"] == JOBS_SCOPES.split()
    sourcing = requests.get(
        f"{live_url}/.well-known/oauth-protected-resource/mcp/sourcing", timeout=10
    ).json()
    assert sourcing["resource"] == f"{live_url}/mcp/sourcing" and sourcing["scopes_supported"] == [
        "people:read"
    ]
    server = requests.get(f"{live_url}/.well-known/oauth-authorization-server", timeout=10).json()
    assert server["issuer"] == live_url and server["code_challenge_methods_supported"] == ["S256"]
    assert server["client_id_metadata_document_supported"] is True
    assert server["authorization_response_iss_parameter_supported"] is True
    assert server["registration_endpoint"] == f"{live_url}/oauth/register"


def test_a_host_in_a_web_page_discovers_registers_and_exchanges_codes_with_fetch(
    live_url, client, tenant_a
):
    """What a browser-based host (the MCP Inspector) fetches from another origin answers with CORS
    headers and no credentials; the pages a person signs in on do not."""
    page = {"Origin": "http://127.0.0.1:6274"}
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
    ):
        preflight = requests.options(
            f"{live_url}{path}",
            timeout=10,
            headers=page
            | {
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "mcp-protocol-version",
            },
        )
        assert (
            preflight.status_code == 200 and preflight.headers["Access-Control-Allow-Origin"] == "*"
        )
        assert "mcp-protocol-version" in preflight.headers["Access-Control-Allow-Headers"].lower()
        assert (
            requests.get(f"{live_url}{path}", headers=page, timeout=10).headers[
                "Access-Control-Allow-Origin"
            ]
            == "*"
        )
    missing = requests.get(
        f"{live_url}/.well-known/oauth-protected-resource", headers=page, timeout=10
    )
    # readable, so a fallback
    assert missing.status_code == 404 and missing.headers["Access-Control-Allow-Origin"] == "*"

    registered = requests.post(
        f"{live_url}/oauth/register",
        headers=page,
        timeout=10,
        json={
            "client_name": "Inspector",
            "redirect_uris": ["http://127.0.0.1:6274/oauth/callback"],
            "token_endpoint_auth_method": "none",
        },
    )
    assert (
        registered.status_code == 201 and registered.headers["Access-Control-Allow-Origin"] == "*"
    )
    refused = requests.post(
        f"{live_url}/oauth/token",
        headers=page,
        timeout=10,
        data={"grant_type": "authorization_code", "code": "nope", "client_id": "nope"},
    )
    assert (
        refused.status_code in (400, 401) and refused.headers["Access-Control-Allow-Origin"] == "*"
    )
    assert "Access-Control-Allow-Credentials" not in refused.headers
    sign_in = requests.get(
        f"{live_url}/oauth/authorize", headers=page, timeout=10, allow_redirects=False
    )
    assert "Access-Control-Allow-Origin" not in sign_in.headers


def test_the_sdk_registers_signs_in_and_calls_tools_on_both_endpoints(
    app, live_url, client, tenant_a
):
    """Dynamic client registration, sign-in and consent, then tools on /mcp (2026-07-28) and
    /mcp/sourcing (the handshake), each with its own token; one endpoint's token is refused by the
    other."""
    load_people(app)
    create_user(client, tenant_a, "ada@example.com")
    job = create_job(client, tenant_a, title="ICU Nurse")
    person = Person("ada@example.com")
    jobs_storage, sourcing_storage = MemoryStorage(), MemoryStorage()

    async def jobs_steps(mcp):
        tools = [tool.name for tool in (await mcp.list_tools()).tools]
        return tools, await mcp.call_tool("list_jobs", {})

    tools, listed = run_oauth_session(
        f"{live_url}/mcp",
        provider(f"{live_url}/mcp", person, jobs_storage),
        jobs_steps,
        mode="auto",
    )
    assert "create_job" in tools and "upsert_candidate" in tools and "people_search" not in tools
    assert not listed.is_error and [item["id"] for item in listed.structured_content["data"]] == [
        job["id"]
    ]
    assert jobs_storage.client_info.client_id and jobs_storage.tokens.scope == JOBS_SCOPES
    assert (
        jobs_storage.tokens.access_token.startswith("hkat_") and jobs_storage.tokens.refresh_token
    )

    async def sourcing_steps(mcp):
        return await mcp.call_tool(
            "people_search", {"query": {"match": {"job_title": "engineer"}}, "size": 5}
        )

    found = run_oauth_session(
        f"{live_url}/mcp/sourcing",
        provider(f"{live_url}/mcp/sourcing", person, sourcing_storage),
        sourcing_steps,
        mode="legacy",
    )
    assert not found.is_error and found.structured_content["total"] == 4
    assert sourcing_storage.tokens.scope == "people:read"
    # signed in once, consented twice
    assert sum("Sign in to Hirekit" in page for page in person.pages) == 1
    assert sum("Allow Test agent host to use Hirekit?" in page for page in person.pages) == 2

    wrong = rpc(live_url, "/mcp", sourcing_storage.tokens.access_token, "tools/list")
    assert wrong.status_code == 401 and "issued for" in wrong.json()["error"]["message"]
    assert 'error="invalid_token"' in wrong.headers["WWW-Authenticate"]
    assert (
        rpc(live_url, "/mcp/sourcing", jobs_storage.tokens.access_token, "tools/list").status_code
        == 401
    )
    # API keys work as before
    assert rpc(live_url, "/mcp", tenant_a.key, "tools/list").status_code == 200
    assert (
        requests.get(
            f"{live_url}/v1/jobs",
            params={"page": 1, "size": 5},
            timeout=10,
            headers={
                # REST takes keys only
                "Authorization": f"Bearer {jobs_storage.tokens.access_token}"
            },
        ).status_code
        == 401
    )


def test_the_consent_page_names_the_client_tenant_and_scopes_and_unticked_scopes_are_not_granted(
    live_url, client, tenant_a
):
    create_user(client, tenant_a, "ben@example.com")
    person = Person(
        "ben@example.com", untick=("jobs:write", "candidates:write", "calls:write", "calls:read")
    )
    client_id, tokens = grant(live_url, person)
    consent = person.pages[-1]
    assert "Raw client" in consent and "tenant-a" in consent and "registered itself" in consent
    assert (
        "See screening calls, with their transcripts and scorecards" in consent
        and "jobs:write" in consent
    )
    assert tokens["scope"] == "jobs:read candidates:read"

    listed = rpc(live_url, "/mcp", tokens["access_token"], "tools/list").json()["result"]["tools"]
    assert [tool["name"] for tool in listed] == [
        "list_jobs",
        "get_job",
        "get_candidate",
        "list_candidates",
        "list_applications",
        "get_application",
        "list_job_questions",
    ]
    refused = rpc(
        live_url,
        "/mcp",
        tokens["access_token"],
        "tools/call",
        {"name": "create_job", "arguments": {}},
    )
    assert refused.status_code == 403 and refused.json()["error"]["type"] == "insufficient_scope"
    challenge = refused.headers["WWW-Authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="jobs:write"' in challenge
    assert "resource_metadata=" in challenge
    # placing, moving, canceling: calls:write
    for tool in ("start_instant_call", "reschedule_call", "cancel_call"):
        moved = rpc(
            live_url, "/mcp", tokens["access_token"], "tools/call", {"name": tool, "arguments": {}}
        )
        assert (
            moved.status_code == 403 and 'scope="calls:write"' in moved.headers["WWW-Authenticate"]
        ), tool
    templates = rpc(live_url, "/mcp", tokens["access_token"], "resources/templates/list").json()[
        "result"
    ]
    assert [t["name"] for t in templates["resourceTemplates"]] == [
        "job_description",
        "job_questions",
    ]


def test_a_host_asking_for_every_scope_of_the_server_gets_those_of_the_endpoint(
    live_url, client, tenant_a
):
    """The MCP Inspector asks for the authorization server's scopes_supported: the token is for the
    endpoint's own."""
    create_user(client, tenant_a, "ivy@example.com")
    everything = " ".join(
        requests.get(f"{live_url}/.well-known/oauth-authorization-server", timeout=10).json()[
            "scopes_supported"
        ]
    )
    person = Person("ivy@example.com")
    _, jobs = grant(live_url, person, "/mcp", scope=everything)
    assert jobs["scope"] == JOBS_SCOPES and "people:read" not in person.pages[-1]
    _, sourcing = grant(live_url, person, "/mcp/sourcing", scope=everything)
    assert sourcing["scope"] == "people:read"
    assert rpc(live_url, "/mcp/sourcing", sourcing["access_token"], "tools/list").status_code == 200


def test_refresh_tokens_rotate_and_a_reused_one_revokes_the_whole_family(
    live_url, client, tenant_a
):
    create_user(client, tenant_a, "cy@example.com")
    client_id, first = grant(live_url, Person("cy@example.com"))
    second = refresh(live_url, client_id, first["refresh_token"])
    assert second.status_code == 200 and second.json()["refresh_token"] != first["refresh_token"]
    second = second.json()
    assert rpc(live_url, "/mcp", second["access_token"], "tools/list").status_code == 200
    # the old pair is gone
    assert rpc(live_url, "/mcp", first["access_token"], "tools/list").status_code == 401

    reused = refresh(live_url, client_id, first["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    # the family is revoked
    assert rpc(live_url, "/mcp", second["access_token"], "tools/list").status_code == 401
    assert refresh(live_url, client_id, second["refresh_token"]).json()["error"] == "invalid_grant"


def test_revocation_ends_a_token_and_an_unknown_token_is_answered_200(live_url, client, tenant_a):
    create_user(client, tenant_a, "dee@example.com")
    client_id, tokens = grant(live_url, Person("dee@example.com"))
    revoked = requests.post(
        f"{live_url}/oauth/revoke",
        data={
            "token": tokens["refresh_token"],
            "client_id": client_id,
            "token_type_hint": "refresh_token",
        },
        timeout=10,
    )
    assert revoked.status_code == 200
    assert rpc(live_url, "/mcp", tokens["access_token"], "tools/list").status_code == 401
    unknown = requests.post(
        f"{live_url}/oauth/revoke",
        data={"token": "hkat_nothing", "client_id": client_id},
        timeout=10,
    )
    assert unknown.status_code == 200


def test_bad_authorization_requests_are_refused_as_rfc_6749_says(live_url, client, tenant_a):
    create_user(client, tenant_a, "eve@example.com")
    client_id = register_client(live_url)["client_id"]
    _, challenge = pkce_pair()
    resource = f"{live_url}/mcp"

    def redirected_error(url):
        answer = requests.get(url, allow_redirects=False, timeout=10)
        assert answer.status_code == 302, answer.text
        assert answer.headers["Location"].startswith("http://127.0.0.1:8765/callback?")
        parameters = redirect_parameters(answer.headers["Location"])
        assert parameters.pop("iss") == live_url  # RFC 9207, on errors too
        return parameters

    unregistered = requests.get(
        authorization_url(
            live_url,
            client_id,
            challenge,
            resource=resource,
            redirect_uri="http://127.0.0.1:8765/other",
        ),
        allow_redirects=False,
        timeout=10,
    )
    # never sent elsewhere
    assert unregistered.status_code == 400 and "Location" not in unregistered.headers
    assert "not supported by client" in unregistered.text
    assert unregistered.headers["X-Frame-Options"] == "DENY"
    unknown = requests.get(
        authorization_url(live_url, "no-such-client", challenge, resource=resource),
        allow_redirects=False,
        timeout=10,
    )
    assert unknown.status_code == 400 and "invalid_client" in unknown.text

    assert redirected_error(
        authorization_url(live_url, client_id, None, resource=resource, method=None)
    ) == {
        "error": "invalid_request",
        "error_description": "Missing code_challenge: PKCE with S256 is required.",
        "state": "s1",
    }
    assert (
        redirected_error(
            authorization_url(live_url, client_id, challenge, resource=resource, method="plain")
        )["error"]
        == "invalid_request"
    )
    no_state = redirected_error(
        authorization_url(live_url, client_id, challenge, resource=resource, state=None)
    )
    assert no_state["error"] == "invalid_request" and "state" not in no_state
    assert (
        redirected_error(
            authorization_url(live_url, client_id, challenge, resource=f"{live_url}/v1/jobs")
        )["error"]
        == "invalid_target"
    )
    assert (
        redirected_error(authorization_url(live_url, client_id, challenge, resource=None))["error"]
        == "invalid_target"
    )
    assert (
        redirected_error(
            authorization_url(
                live_url, client_id, challenge, resource=resource, scope="people:read"
            )
        )["error"]
        == "invalid_scope"
    )
    assert (
        redirected_error(
            authorization_url(
                live_url, client_id, challenge, resource=resource, scope="jobs:read admin"
            )
        )["error"]
        == "invalid_scope"
    )
    denied = Person("eve@example.com", decision="deny")
    answer = redirect_parameters(
        denied.authorize(authorization_url(live_url, client_id, challenge, resource=resource))
    )
    assert (answer["error"], answer["state"], answer["iss"], "code" in answer) == (
        "access_denied",
        "s1",
        live_url,
        False,
    )


def test_bad_token_requests_are_refused_and_a_replayed_code_revokes_its_tokens(
    live_url, client, tenant_a
):
    create_user(client, tenant_a, "fay@example.com")
    person = Person("fay@example.com")
    client_id = register_client(live_url)["client_id"]
    resource = f"{live_url}/mcp"

    def code_for(challenge):
        return redirect_parameters(
            person.authorize(authorization_url(live_url, client_id, challenge, resource=resource))
        )["code"]

    verifier, challenge = pkce_pair()
    wrong = exchange(live_url, client_id, code_for(challenge), pkce_pair()[0])
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    missing = exchange(live_url, client_id, code_for(challenge), None)
    assert missing.status_code == 400 and missing.json()["error"] == "invalid_request"
    other_resource = exchange(
        live_url, client_id, code_for(challenge), verifier, resource=f"{live_url}/mcp/sourcing"
    )
    assert other_resource.status_code == 400 and other_resource.json()["error"] == "invalid_target"

    code = code_for(challenge)
    first = exchange(live_url, client_id, code, verifier)
    assert first.status_code == 200 and first.headers["Cache-Control"] == "no-store"
    assert rpc(live_url, "/mcp", first.json()["access_token"], "tools/list").status_code == 200
    replayed = exchange(live_url, client_id, code, verifier)
    assert replayed.status_code == 400 and replayed.json()["error"] == "invalid_grant"
    assert rpc(live_url, "/mcp", first.json()["access_token"], "tools/list").status_code == 401
    garbage = requests.post(
        f"{live_url}/oauth/token", data={"grant_type": "password", "username": "x"}, timeout=10
    )
    assert garbage.status_code == 400 and garbage.json()["error"] == "unsupported_grant_type"


def test_registration_refuses_bad_metadata(live_url):
    def register(**kwargs):
        return requests.post(f"{live_url}/oauth/register", timeout=10, **kwargs)

    assert (
        register(data="not json", headers={"Content-Type": "application/json"}).json()["error"]
        == "invalid_client_metadata"
    )
    assert register(json=[1, 2]).status_code == 400
    for uri in (
        "javascript:alert(1)",
        "http://evil.example/callback",
        "https://app.example/cb#fragment",
    ):
        refused = register(json={"redirect_uris": [uri], "token_endpoint_auth_method": "none"})
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_redirect_uri", uri
    assert (
        register(json={"redirect_uris": ["https://app.example/cb"], "client_name": 5}).json()[
            "error"
        ]
        == "invalid_client_metadata"
    )
    nul = requests.get(
        f"{live_url}/oauth/authorize",
        params={"client_id": "https://a.example/\x00", "state": "s"},
        timeout=10,
    )
    assert nul.status_code == 422 and nul.json()["error"]["type"] == "validation_error"
    confidential = register(
        json={
            "redirect_uris": ["https://app.example/cb"],
            "client_name": "Web app",
            "grant_types": ["authorization_code", "refresh_token"],
        }
    )
    assert confidential.status_code == 201 and confidential.json()["client_secret"]
    assert confidential.json()["token_endpoint_auth_method"] == "client_secret_basic"
    # a public client gets no secret: a host that got one (the MCP Inspector) sends it, and would be
    # refused
    public = register(
        json={
            "redirect_uris": ["http://127.0.0.1:6274/oauth/callback"],
            "client_name": "Inspector",
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
        }
    )
    assert public.status_code == 201 and public.json()["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in public.json() and "client_secret_expires_at" not in public.json()


def test_failed_sign_ins_are_limited_per_address_like_unknown_api_keys(
    make_app, live_server, tenant_a
):
    app = make_app(AUTH_FAILURE_LIMIT="3/minute")
    base = live_server(app)
    with app.test_client() as test_client:
        create_user(test_client, tenant_a, "gus@example.com")
    client_id = register_client(base)["client_id"]
    person = Person("gus@example.com", password="not the password at all")
    page = person.browser.get(
        authorization_url(base, client_id, pkce_pair()[1], resource=f"{base}/mcp")
    )
    from tests.oauth_flow import Forms

    fields = dict(Forms(page.text).forms[0]["fields"]) | {
        "email": "gus@example.com",
        "password": "wrong password!",
    }
    statuses = [
        person.browser.post(f"{base}/oauth/sign-in", data=fields, allow_redirects=False).status_code
        for _ in range(4)
    ]
    assert statuses == [401, 401, 401, 429]
    right = person.browser.post(
        f"{base}/oauth/sign-in",
        data=fields | {"password": "correct horse battery staple"},
        allow_redirects=False,
    )
    assert right.status_code == 429 and right.headers["Retry-After"]


def test_forms_posted_from_elsewhere_are_refused(live_url, client, tenant_a):
    create_user(client, tenant_a, "hal@example.com")
    client_id = register_client(live_url)["client_id"]
    url = authorization_url(live_url, client_id, pkce_pair()[1], resource=f"{live_url}/mcp")
    browser = requests.Session()
    page = browser.get(url)
    assert '<html lang="en">' in page.text and '<label for="email">' in page.text
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    no_token = browser.post(
        f"{live_url}/oauth/sign-in",
        data={"email": "hal@example.com", "password": "correct horse battery staple"},
        allow_redirects=False,
    )
    assert no_token.status_code == 403
    from tests.oauth_flow import Forms

    fields = dict(Forms(page.text).forms[0]["fields"]) | {
        "email": "hal@example.com",
        "password": "correct horse battery staple",
    }
    foreign = browser.post(
        f"{live_url}/oauth/sign-in",
        data=fields,
        headers={"Origin": "https://evil.example"},
        allow_redirects=False,
    )
    assert foreign.status_code == 403
    signed_in = browser.post(f"{live_url}/oauth/sign-in", data=fields, allow_redirects=False)
    assert signed_in.status_code == 303 and "HttpOnly" in signed_in.headers["Set-Cookie"]
    consent = browser.get(url)
    forged = requests.post(
        url,
        data={"decision": "allow", "granted_scope": "jobs:read"},
        # the session cookie, but no form token
        cookies=browser.cookies,
        allow_redirects=False,
    )
    assert forged.status_code == 403 and "Allow" in consent.text


def test_users_api_and_authorizations_revoked_by_an_admin(live_url, client, tenant_a, tenant_b):
    weak = client.post(
        "/v1/users",
        json={"email": "ivy@example.com", "name": "Ivy", "password": "short"},
        headers=tenant_a.headers,
    )
    assert weak.status_code == 422 and "password" in weak.json["error"]["fields"]
    user = create_user(client, tenant_a, "ivy@example.com")
    assert "password" not in user and user["admin"] is False
    assert (
        client.post(
            "/v1/users",
            json={"email": "IVY@example.com", "name": "Ivy", "password": "x" * 20},
            headers=tenant_b.headers,
        ).status_code
        == 409
    )
    listed = client.get("/v1/users?page=1&size=10", headers=tenant_a.headers).json
    assert listed["total"] == 1 and listed["data"][0]["email"] == "ivy@example.com"
    assert client.get(f"/v1/users/{user['id']}", headers=tenant_b.headers).status_code == 404

    client_id, tokens = grant(live_url, Person("ivy@example.com"))
    authorizations = client.get(
        f"/v1/users/{user['id']}/authorizations?page=1&size=10", headers=tenant_a.headers
    ).json
    assert [item["client_id"] for item in authorizations["data"]] == [client_id]
    assert authorizations["data"][0]["client_name"] == "Raw client"
    revoked = client.delete(
        f"/v1/users/{user['id']}/authorizations/{authorizations['data'][0]['id']}",
        headers=tenant_a.headers,
    )
    assert revoked.status_code == 204
    assert rpc(live_url, "/mcp", tokens["access_token"], "tools/list").status_code == 401

    _, again = grant(live_url, Person("ivy@example.com"))
    disabled = client.patch(
        f"/v1/users/{user['id']}", json={"disabled": True}, headers=tenant_a.headers
    )
    assert disabled.status_code == 200 and disabled.json["disabled"] is True
    assert rpc(live_url, "/mcp", again["access_token"], "tools/list").status_code == 401


def test_a_person_lists_and_revokes_authorized_applications_on_their_page(
    live_url, client, tenant_a
):
    create_user(client, tenant_a, "jo@example.com")
    person = Person("jo@example.com")
    _, tokens = grant(live_url, person)
    page = person.browser.get(f"{live_url}/oauth/authorizations")
    assert "Raw client" in page.text and "jobs:read" in page.text
    from tests.oauth_flow import Forms

    revoke_form = Forms(page.text).forms[0]
    after = person.browser.post(
        f"{live_url}{revoke_form['action']}", data=dict(revoke_form["fields"])
    )
    assert after.status_code == 200 and "can no longer use Hirekit" in after.text
    assert "You have not authorized any application" in after.text
    assert rpc(live_url, "/mcp", tokens["access_token"], "tools/list").status_code == 401


def test_the_users_command_makes_people_who_sign_in_and_disables_them(app, live_url, tenant_a):
    runner = app.test_cli_runner()
    made = runner.invoke(
        args=[
            "users",
            "create",
            tenant_a.id,
            "Op@Example.com",
            "--name",
            "Op",
            "--password",
            "correct horse battery staple",
        ]
    )
    assert made.exit_code == 0 and "created user op@example.com" in made.output
    weak = runner.invoke(
        args=["users", "create", tenant_a.id, "weak@example.com", "--password", "short"]
    )
    assert weak.exit_code == 1 and "12 to 256 characters" in weak.output
    assert "op@example.com" in runner.invoke(args=["users", "list", tenant_a.id]).output
    _, tokens = grant(live_url, Person("op@example.com"))
    assert rpc(live_url, "/mcp", tokens["access_token"], "tools/list").status_code == 200
    assert runner.invoke(args=["users", "disable", "op@example.com"]).exit_code == 0
    assert rpc(live_url, "/mcp", tokens["access_token"], "tools/list").status_code == 401
    unknown = runner.invoke(args=["users", "disable", "nobody@example.com"])
    assert unknown.exit_code == 1 and "no user with email" in unknown.output


def test_a_user_id_that_is_not_a_uuid_is_404_on_every_user_route(client, tenant_a):
    """Schemathesis found these answering 500 on PostgreSQL."""
    for method, path in (
        ("get", "/v1/users/emails"),
        ("patch", "/v1/users/emails"),
        ("delete", "/v1/users/emails"),
        ("get", "/v1/users/emails/authorizations?page=1&size=10"),
    ):
        response = getattr(client, method)(
            path, headers=tenant_a.headers, **({"json": {}} if method == "patch" else {})
        )
        assert response.status_code == 404, (method, path, response.json)
