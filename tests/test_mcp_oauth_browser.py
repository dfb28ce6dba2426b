"""A person signs in and consents in a real browser: headless Chromium, with the keyboard alone (no
script of the page's: the pages have none), lands on the client's redirect URI with a code the
client exchanges for a token."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.chromium import CHROMIUM, Browser
from tests.oauth_flow import (
    PASSWORD,
    authorization_url,
    create_user,
    exchange,
    pkce_pair,
    register_client,
    rpc,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def callback():
    """The client's redirect URI, a listener on 127.0.0.1: (its URL, the query strings it
    received)."""
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            received.append({k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()})
            body = b"<!doctype html><title>Connected</title><p>You can close this window.</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/callback", received
    server.shutdown()
    thread.join(timeout=5)


@pytest.fixture
def browser(tmp_path):
    if not CHROMIUM:
        pytest.skip("Chromium is not installed (make services installs Debian's chromium)")
    chromium = Browser(str(tmp_path / "profile"))
    yield chromium
    chromium.close()


def test_chromium_signs_in_and_consents_with_the_keyboard(
    live_url, client, tenant_a, callback, browser
):
    redirect_uri, received = callback
    create_user(client, tenant_a, "nia@example.com")
    client_id = register_client(
        live_url, client_name="Desktop agent", redirect_uris=[redirect_uri]
    )["client_id"]
    verifier, challenge = pkce_pair()

    browser.open(
        authorization_url(
            live_url,
            client_id,
            challenge,
            resource=f"{live_url}/mcp",
            state="xyz",
            redirect_uri=redirect_uri,
        )
    )
    assert browser.evaluate("document.documentElement.lang") == "en"
    assert browser.evaluate("document.title") == "Sign in - Hirekit"
    assert (
        browser.evaluate(
            "[...document.querySelectorAll('input:not([type=hidden])')]"
            ".every(i => i.labels.length === 1)"
        )
        is True
    )
    assert browser.focused() == "input#email"  # the first field has the focus
    browser.type("nia@example.com")
    browser.press("Tab")
    assert browser.focused() == "input#password"
    browser.type(PASSWORD)
    browser.events.clear()
    browser.press("Enter")
    browser.wait_for_load()

    assert browser.evaluate("document.title") == "Allow Desktop agent? - Hirekit"
    page = browser.evaluate("document.body.innerText")
    assert "tenant-a" in page and "registered itself with Hirekit" in page
    assert "See screening calls, with their transcripts and scorecards" in page
    for _ in range(20):  # through the scope boxes and the link, in reading order, to Allow
        if browser.focused() == "button:Allow":
            break
        browser.press("Tab")
    assert browser.focused() == "button:Allow"
    browser.events.clear()
    browser.press("Enter")
    browser.wait_for_load()

    (answer,) = received
    assert answer["state"] == "xyz" and answer["code"]
    tokens = exchange(live_url, client_id, answer["code"], verifier, redirect_uri=redirect_uri)
    assert tokens.status_code == 200
    assert rpc(live_url, "/mcp", tokens.json()["access_token"], "tools/list").status_code == 200
