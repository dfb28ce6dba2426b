"""A person in front of the sign-in and consent pages, driven over HTTP: what a test's redirect
handler does with the authorization URL an MCP client opens (tests/test_mcp_oauth.py), plus the
users and clients those tests need."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
import requests
from mcp.client import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

PASSWORD = "correct horse battery staple"
REDIRECT_URI = "http://127.0.0.1:8765/callback"


class Forms(HTMLParser):
    """The forms of a page: action, method, and the fields a browser would send (checked boxes
    only)."""

    def __init__(self, html: str):
        super().__init__()
        self.forms: list[dict] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "form":
            self.forms.append(
                {
                    "action": attributes.get("action", ""),
                    "method": attributes.get("method", "get"),
                    "fields": [],
                    "buttons": [],
                }
            )
        elif tag == "input" and self.forms:
            kind = attributes.get("type", "text")
            if kind == "checkbox":
                if "checked" in attributes:
                    self.forms[-1]["fields"].append(
                        (attributes["name"], attributes.get("value", "on"))
                    )
                self.forms[-1].setdefault("boxes", []).append(attributes.get("value"))
            else:
                self.forms[-1]["fields"].append(
                    (attributes.get("name"), attributes.get("value", ""))
                )
        elif tag == "button" and self.forms and attributes.get("name"):
            self.forms[-1]["buttons"].append((attributes["name"], attributes.get("value", "")))


@dataclass
class Person:
    """Someone with a browser (a cookie jar) who signs in and answers the consent page."""

    email: str
    password: str = PASSWORD
    decision: str = "allow"
    untick: tuple[str, ...] = ()  # scopes to leave unticked on the consent page
    browser: requests.Session = field(default_factory=requests.Session)
    pages: list[str] = field(default_factory=list)  # the HTML of every page seen

    def authorize(self, authorization_url: str) -> str:
        """Follow the authorization URL through sign-in and consent; the Location the server sends
        back."""
        page = self.browser.get(authorization_url, allow_redirects=False)
        if page.status_code == 302:
            return page.headers["Location"]
        assert page.status_code == 200, page.text
        self.pages.append(page.text)
        form = Forms(page.text).forms[0]
        if "password" in {name for name, _ in form["fields"]}:
            fields = dict(form["fields"]) | {"email": self.email, "password": self.password}
            signed_in = self.browser.post(
                urljoin(page.url, form["action"]), data=fields, allow_redirects=False
            )
            assert signed_in.status_code == 303, signed_in.text
            page = self.browser.get(
                urljoin(page.url, signed_in.headers["Location"]), allow_redirects=False
            )
            if page.status_code == 302:
                return page.headers["Location"]
            self.pages.append(page.text)
            form = Forms(page.text).forms[0]
        fields = [
            (name, value)
            for name, value in form["fields"]
            if not (name == "granted_scope" and value in self.untick)
        ]
        answered = self.browser.post(
            urljoin(page.url, form["action"]),
            data=fields + [("decision", self.decision)],
            allow_redirects=False,
        )
        assert answered.status_code == 302, answered.text
        return answered.headers["Location"]


def redirect_parameters(location: str) -> dict:
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


class MemoryStorage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


def provider(
    server_url: str,
    person: Person,
    storage: MemoryStorage,
    *,
    client_metadata_url: str | None = None,
    name: str = "Test agent host",
) -> OAuthClientProvider:
    """The SDK's OAuth client with a redirect handler that drives the pages as `person`."""
    received: dict = {}

    async def redirect_handler(authorization_url: str) -> None:
        location = await asyncio.to_thread(person.authorize, authorization_url)
        received.update(redirect_parameters(location))

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(
            code=received.pop("code"),
            state=received.pop("state", None),
            iss=received.pop("iss", None),
        )

    metadata = OAuthClientMetadata(
        client_name=name,
        redirect_uris=[REDIRECT_URI],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url,
        metadata,
        storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_metadata_url,
    )


def run_oauth_session(
    url: str, auth: OAuthClientProvider, steps, *, mode: str = "auto", **client_options
):
    """Connect the SDK client with `auth`, run `steps(client)` and return its result."""

    async def session():
        async with httpx2.AsyncClient(auth=auth, timeout=20) as http:
            async with Client(
                streamable_http_client(url, http_client=http), mode=mode, **client_options
            ) as client:
                return await steps(client)

    return asyncio.run(session())


def create_user(client, tenant, email: str, password: str = PASSWORD) -> dict:
    response = client.post(
        "/v1/users",
        json={"email": email, "name": email.split("@")[0], "password": password},
        headers=tenant.headers,
    )
    assert response.status_code == 201, response.json
    return response.json


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, its S256 code_challenge)."""
    import base64
    import hashlib
    import secrets

    verifier = secrets.token_urlsafe(48)
    challenge = (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    )
    return verifier, challenge


def register_client(base: str, **metadata) -> dict:
    body = {
        "client_name": "Raw client",
        "redirect_uris": [REDIRECT_URI],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        **metadata,
    }
    response = requests.post(f"{base}/oauth/register", json=body, timeout=10)
    assert response.status_code == 201, response.text
    return response.json()


def authorization_url(
    base: str,
    client_id: str,
    challenge: str | None,
    *,
    resource: str | None,
    state: str | None = "s1",
    scope: str | None = None,
    method: str | None = "S256",
    redirect_uri: str = REDIRECT_URI,
) -> str:
    from urllib.parse import urlencode

    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": method,
        "resource": resource,
        "scope": scope,
    }
    return f"{base}/oauth/authorize?" + urlencode(
        {k: v for k, v in params.items() if v is not None}
    )


def exchange(
    base: str,
    client_id: str,
    code: str,
    verifier: str | None,
    *,
    resource: str | None = None,
    redirect_uri: str = REDIRECT_URI,
) -> requests.Response:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
        "resource": resource,
    }
    return requests.post(
        f"{base}/oauth/token", data={k: v for k, v in data.items() if v is not None}, timeout=10
    )


def refresh(base: str, client_id: str, refresh_token: str, **extra) -> requests.Response:
    return requests.post(
        f"{base}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": client_id,
            **extra,
        },
        timeout=10,
    )


def grant(base: str, person: Person, resource_path: str = "/mcp", **options) -> tuple[str, dict]:
    """A public client registered, authorized by `person` and its code exchanged: (client_id, token
    answer)."""
    client_id = register_client(base)["client_id"]
    verifier, challenge = pkce_pair()
    location = person.authorize(
        authorization_url(base, client_id, challenge, resource=base + resource_path, **options)
    )
    parameters = redirect_parameters(location)
    assert parameters["iss"] == base  # RFC 9207: the code comes with the issuer's name
    answer = exchange(base, client_id, parameters["code"], verifier)
    assert answer.status_code == 200, answer.text
    return client_id, answer.json()


def rpc(
    base: str,
    path: str,
    token: str,
    method: str,
    params: dict | None = None,
    *,
    version: str = "2025-11-25",
) -> requests.Response:
    return requests.post(
        f"{base}{path}",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}},
        headers={
            "Authorization": f"Bearer {token}",
            "MCP-Protocol-Version": version,
            "Accept": "application/json, text/event-stream",
        },
        timeout=20,
    )
