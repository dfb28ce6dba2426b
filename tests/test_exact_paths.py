"""Paths are matched as sent (issue 14 item 10): a doubled slash or an added/dropped trailing slash
answers what an unknown path answers (404 in the one error body), with or without a key, never
werkzeug's HTML redirect.

Every route of every family is walked from the app's URL map; a path variant that still names a
route as sent (a `path` converter takes `a//b`) is left out.
"""

from __future__ import annotations

import io

from werkzeug.exceptions import HTTPException
from werkzeug.routing import RequestRedirect
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

SAMPLE_VALUES = {"IntegerConverter": "7", "UUIDConverter": "00000000-0000-4000-8000-000000000000"}


def concrete_path(rule) -> str:
    """The rule's path with a sample value for each variable."""
    path = ""
    for is_variable, part in rule._trace:
        if is_variable:
            path += SAMPLE_VALUES.get(type(rule._converters[part]).__name__, "x1")
        else:
            path += part
    return path[path.index("|") + 1 :]  # the trace starts with the host part ("|")


def variants(path: str) -> set[str]:
    """Each slash doubled in turn, and the trailing slash added or dropped."""
    found = {path[:index] + "/" + path[index:] for index, char in enumerate(path) if char == "/"}
    found.add(path.rstrip("/") if path.endswith("/") else path + "/")
    return found - {path, ""}


def names_a_route(adapter, path: str, method: str) -> bool:
    try:
        adapter.match(path, method)
    except RequestRedirect:
        return False  # werkzeug would redirect: exactly what must not happen
    except HTTPException:
        return False
    return True


def send(client, method: str, path: str, headers: dict):
    """PATH_INFO exactly as a server hands it on (the test client would read `//v1/...` as a
    host)."""
    environ = EnvironBuilder(method=method, headers=headers).get_environ()
    environ.update(
        {"PATH_INFO": path, "REQUEST_URI": path, "RAW_URI": path, "wsgi.input": io.BytesIO(b"")}
    )
    return client.open(Request(environ))


def test_paths_with_doubled_or_extra_slashes_are_404_in_the_error_body(app, client, tenant_a):
    adapter = app.url_map.bind("localhost")
    unknown = {
        bool(headers): send(client, "GET", "/v1/no-such-family", headers)
        for headers in ({}, tenant_a.headers)
    }
    assert {key: r.status_code for key, r in unknown.items()} == {False: 404, True: 404}
    checked, prefixes = 0, set()
    for rule in app.url_map.iter_rules():
        method = sorted(rule.methods - {"HEAD", "OPTIONS"})[0]
        path = concrete_path(rule)
        prefixes.add("/".join(path.split("/")[:3]))
        for variant in sorted(variants(path)):
            if names_a_route(adapter, variant, method):
                continue
            for headers in ({}, tenant_a.headers):
                response = send(client, method, variant, headers)
                assert response.status_code == 404, (
                    method,
                    variant,
                    bool(headers),
                    response.status_code,
                    response.data[:120],
                )
                assert (
                    response.mimetype == "application/json" and "Location" not in response.headers
                )
                assert (
                    response.json["status"] == 404 and response.json["error"]["type"] == "not_found"
                )
                checked += 1
    assert {
        "/v1/jobs",
        "/v1/candidates",
        "/v1/person",
        "/v2/person",
        "/jobs",
        "/mcp",
        "/healthz",
    } <= prefixes
    assert checked > 100


def test_the_reported_path(client, tenant_a):
    for headers in ({}, tenant_a.headers):
        response = send(client, "GET", "/v1/jobs//scheduling", headers)
        assert response.status_code == 404 and response.json["error"]["type"] == "not_found", (
            response.data[:120]
        )
        assert send(client, "GET", "/v1//jobs", headers).status_code == 404
        assert send(client, "GET", "/v1/jobs/", headers).status_code == 404


def test_a_trailing_slash_rule_does_not_redirect(app, client):
    """No route ends with a slash today; one added later answers 404 without it, not a
    strict_slashes redirect."""
    app.add_url_rule("/v1/slashed/", "slashed", lambda: "ok")
    assert client.get("/v1/slashed/").status_code == 200
    response = client.get("/v1/slashed")
    assert response.status_code == 404 and response.json["error"]["type"] == "not_found"
