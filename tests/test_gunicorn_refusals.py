"""What gunicorn refuses before the app (a malformed request, a request line or headers past the
limits) is answered in the API's one JSON error body, with an X-Request-Id, and documented on every
operation of /openapi.json."""

from __future__ import annotations

import pytest
from openapi_spec_validator import validate

from app.server.server_refusals import (
    LIMIT_REQUEST_FIELD_SIZE,
    LIMIT_REQUEST_FIELDS,
    LIMIT_REQUEST_LINE,
)
from tests.gunicorn_process import exchange, gunicorn

ENRICH = "/v2/person/enrich"
HEAD = b"Host: x\r\n\r\n"


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    home = tmp_path_factory.mktemp("refusals")
    with gunicorn(
        {
            "HIREKIT_INSTANCE_DIR": str(home),
            "HIREKIT_DATABASE_URL": f"sqlite:///{home / 'hirekit.sqlite3'}",
            "HIREKIT_PLUGINS": "jobs",
            "HIREKIT_ACCESS_LOG": "",
            "HIREKIT_LOG_LEVEL": "WARNING",
        }
    ) as (_, _, port):
        yield port


REFUSED = [
    pytest.param(
        f"GET {ENRICH}?email=a@b.c HTTP/1.1 extra\r\n".encode() + HEAD,
        400,
        "invalid_request_error",
        "Malformed request line",
        id="request-line",
    ),
    pytest.param(
        f"GET {ENRICH}?email=a\x7fb HTTP/1.1\r\n".encode() + HEAD,
        400,
        "invalid_request_error",
        "Malformed request line",
        id="control-character-in-target",
    ),
    pytest.param(
        b"G\x01T / HTTP/1.1\r\n" + HEAD,
        400,
        "invalid_request_error",
        "Malformed request line",
        id="method",
    ),
    pytest.param(
        b"GET / HTTP/1.1\r\nNo colon here\r\n" + HEAD,
        400,
        "invalid_request_error",
        "Malformed header field",
        id="header-without-colon",
    ),
    pytest.param(
        b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n" + HEAD,
        400,
        "invalid_request_error",
        "Malformed header field",
        id="two-content-lengths",
    ),
    pytest.param(
        f"GET {ENRICH}?email={'a' * (LIMIT_REQUEST_LINE + 10)} HTTP/1.1\r\n".encode() + HEAD,
        414,
        "uri_too_long",
        f"longer than {LIMIT_REQUEST_LINE} bytes",
        id="long-request-line",
    ),
    pytest.param(
        b"GET / HTTP/1.1\r\n"
        + b"".join(b"X-F%d: 1\r\n" % n for n in range(LIMIT_REQUEST_FIELDS + 1))
        + HEAD,
        431,
        "request_header_fields_too_large",
        f"at most {LIMIT_REQUEST_FIELDS} header fields",
        id="too-many-headers",
    ),
    pytest.param(
        b"GET / HTTP/1.1\r\nX-Big: " + b"b" * (LIMIT_REQUEST_FIELD_SIZE + 10) + b"\r\n" + HEAD,
        431,
        "request_header_fields_too_large",
        f"each line at most {LIMIT_REQUEST_FIELD_SIZE} bytes",
        id="long-header",
    ),
    pytest.param(
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n" + HEAD,
        400,
        "invalid_request_error",
        "Malformed header field",
        id="chunked-and-content-length",
    ),
    pytest.param(
        b"POST / HTTP/1.1\r\nTransfer-Encoding: br\r\n" + HEAD,
        501,
        "not_implemented",
        "only chunked",
        id="transfer-coding",
    ),
    pytest.param(
        b"GET / HTTP/1.1\r\nExpect: the-unexpected\r\n" + HEAD,
        417,
        "expectation_failed",
        "100-continue",
        id="expect",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("request_bytes, status, error_type, says", REFUSED)
def test_gunicorns_refusals_answer_the_one_json_error_body(
    port, request_bytes, status, error_type, says
):
    answer = exchange(port, request_bytes)
    assert answer.status == status, answer.status_line
    assert answer.headers["content-type"] == "application/json"
    assert int(answer.headers["content-length"]) == len(answer.body)
    assert len(answer.headers["x-request-id"]) == 32
    assert answer.json() == {
        "status": status,
        "error": {"type": error_type, "message": answer.json()["error"]["message"]},
    }
    assert says in answer.json()["error"]["message"]


@pytest.mark.slow
def test_the_server_still_serves_after_refusing(port):
    exchange(port, b"GET / HTTP/1.1 junk\r\n" + HEAD)
    assert (
        exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status
        == 200
    )


def test_every_operation_documents_the_servers_refusals(client):
    """A strict validator (schemathesis) meets 400, 414 and 431 on any route: each operation
    documents them with the one error body, the limits named."""
    spec = client.get("/openapi.json").json
    validate(spec)
    components = spec["components"]["responses"]
    operations = [
        (path, method, operation)
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if method != "parameters"
    ]
    assert len(operations) > 20
    for path, method, operation in operations:
        for status in ("400", "414", "431"):
            response = operation["responses"].get(status)
            assert response is not None, f"{method.upper()} {path} does not document {status}"
            if "$ref" in response:
                response = components[response["$ref"].rsplit("/", 1)[1]]
            if set(response.get("content", {})) == {"text/html"}:
                continue  # a page a person opens documents its own HTML 400 (the OAuth error page)
            assert "application/json" in response["content"], f"{method.upper()} {path} {status}"
    error_body = {"$ref": "#/components/schemas/Error"}
    assert (
        components["REQUEST_LINE_TOO_LONG"]["content"]["application/json"]["schema"] == error_body
    )
    assert f"{LIMIT_REQUEST_LINE:,} bytes" in components["REQUEST_LINE_TOO_LONG"]["description"]
    assert (
        f"more than {LIMIT_REQUEST_FIELDS} header fields"
        in components["REQUEST_HEADERS_TOO_LARGE"]["description"]
    )
