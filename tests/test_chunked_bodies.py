"""Chunked request bodies (Transfer-Encoding: chunked, no Content-Length) meet the same guards as
framed ones: the NUL scan (422, nothing stored) and the body size limits (413), in the one error
body.

Flask's test client always frames a body with Content-Length, so the client tests hand the app the
environ a WSGI server builds for a chunked request (the de-chunked body on wsgi.input,
wsgi.input_terminated set, no CONTENT_LENGTH); the server tests send real chunked framing to
Werkzeug's server (in-process) and to gunicorn as deployed.
"""

from __future__ import annotations

import base64
import io
import json
import socket
import threading

import pytest
import requests
from werkzeug.serving import make_server
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from tests.factories import candidate_body, job_body, pdf_bytes
from tests.test_fault_drills import gunicorn_server  # noqa: F401 - the fixture: the app under gunicorn, 2 workers

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

RESUME_LIMIT = 64 * 1024  # small limits, so an over-the-limit body is quick to send
BODY_LIMIT = 2 * RESUME_LIMIT  # create_app keeps MAX_CONTENT_LENGTH at least twice the resume limit
NUL_MESSAGE = ["Must not contain NUL (\\u0000) characters."]


def chunked_environ(
    path: str, body: bytes, headers: dict, content_type: str = "application/json"
) -> dict:
    """What a WSGI server that de-chunks (gunicorn, Werkzeug's) hands the app for a chunked POST."""
    environ = EnvironBuilder(
        path=path, method="POST", headers={**headers, "Transfer-Encoding": "chunked"}
    ).get_environ()
    environ.pop("CONTENT_LENGTH", None)
    environ.update(
        {
            "CONTENT_TYPE": content_type,
            "wsgi.input": io.BytesIO(body),
            "wsgi.input_terminated": True,
        }
    )
    return environ


def multipart(fields: dict, resume: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body with a resume file part, as the test client would send it; and its
    content type."""
    environ = EnvironBuilder(
        method="POST", data={**fields, "file": (io.BytesIO(resume), "cv.txt")}
    ).get_environ()
    return environ["wsgi.input"].read(), environ["CONTENT_TYPE"]


def post_chunked_to_app(
    client, path: str, body: bytes, headers: dict, content_type: str = "application/json"
):
    return client.open(Request(chunked_environ(path, body, headers, content_type)))


def assert_error(response_status: int, body: dict, status: int, error_type: str):
    assert response_status == status, body
    assert body["status"] == status and body["error"]["type"] == error_type, body


def jobs_total(client, tenant) -> int:
    return client.get("/v1/jobs?page=1&size=5", headers=tenant.headers).json["total"]


@pytest.fixture
def small_app(make_app):
    return make_app(MAX_RESUME_BYTES=RESUME_LIMIT, MAX_CONTENT_LENGTH=BODY_LIMIT)


# ---- the app, as a server hands it a chunked body
# ------------------------------------------------------------------


def test_a_chunked_json_body_with_nul_is_422_and_nothing_is_stored(client, tenant_a):
    body = json.dumps(job_body(title="Nurse\u0000")).encode()
    response = post_chunked_to_app(client, "/v1/jobs", body, tenant_a.headers)
    assert_error(response.status_code, response.json, 422, "validation_error")
    assert response.json["error"]["fields"] == {"title": NUL_MESSAGE}
    assert jobs_total(client, tenant_a) == 0
    clean = post_chunked_to_app(
        client, "/v1/jobs", json.dumps(job_body()).encode(), tenant_a.headers
    )
    assert clean.status_code == 201, clean.json  # a chunked body is read, not dropped
    assert jobs_total(client, tenant_a) == 1


def test_a_chunked_body_over_the_limit_is_413(small_app, tenant_a):
    client = small_app.test_client()
    body = json.dumps(job_body(desc="x" * (BODY_LIMIT + 1))).encode()
    response = post_chunked_to_app(client, "/v1/jobs", body, tenant_a.headers)
    assert_error(response.status_code, response.json, 413, "payload_too_large")
    assert jobs_total(client, tenant_a) == 0


def test_a_chunked_resume_over_the_resume_limit_is_413(small_app, tenant_a):
    client = small_app.test_client()
    resume = base64.b64encode(pdf_bytes() + b"%" * RESUME_LIMIT).decode()
    body = json.dumps(candidate_body(base64file=resume, file_name="cv.pdf")).encode()
    assert len(body) < BODY_LIMIT  # under the body limit: the resume limit answers
    response = post_chunked_to_app(client, "/v1/candidates", body, tenant_a.headers)
    assert_error(response.status_code, response.json, 413, "payload_too_large")
    form, content_type = multipart(candidate_body(), b"a" * (RESUME_LIMIT + 1))
    response = post_chunked_to_app(client, "/v1/candidates", form, tenant_a.headers, content_type)
    assert_error(response.status_code, response.json, 413, "payload_too_large")
    assert client.get("/v1/candidates?page=1&size=5", headers=tenant_a.headers).json["total"] == 0
    form, content_type = multipart(candidate_body(source_id="chunked-cv"), b"Jane Doe, RN. " * 100)
    stored = post_chunked_to_app(client, "/v1/candidates", form, tenant_a.headers, content_type)
    # a chunked form is parsed whole
    assert stored.status_code == 201 and stored.json["resume"]["sha256"], stored.json


# ---- real chunked framing, on Werkzeug's server and on gunicorn as deployed
# ----------------------------------------


@pytest.fixture
def werkzeug_server(small_app):
    server = make_server("127.0.0.1", 0, small_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", server.server_port
    server.shutdown()
    thread.join()


@pytest.fixture(params=["werkzeug", "gunicorn"])
def server(request):
    if request.param == "werkzeug":
        return request.getfixturevalue("werkzeug_server")
    start = request.getfixturevalue("gunicorn_server")
    return start(
        HIREKIT_MAX_RESUME_BYTES=str(RESUME_LIMIT),
        HIREKIT_MAX_CONTENT_LENGTH=str(BODY_LIMIT),
        HIREKIT_RATE_LIMIT="100000/minute",
        HIREKIT_SECRET_KEY="chunked-bodies-test-secret-0123456789abcdef",
    )


def chunked(body: bytes, chunk: int = 4096) -> bytes:
    return (
        b"".join(
            b"%x\r\n%s\r\n" % (len(body[i : i + chunk]), body[i : i + chunk])
            for i in range(0, len(body), chunk)
        )
        + b"0\r\n\r\n"
    )


def send_chunked(
    port: int,
    path: str,
    body: bytes,
    headers: dict,
    content_type: str = "application/json",
    framed: bytes | None = None,
) -> tuple[int, dict]:
    """One POST with real chunked framing on a raw socket (no Content-Length); the status and the
    JSON answer. `framed` sends those bytes as the body instead of `body` chunked."""
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n{head}"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode()
        )
        try:
            sock.sendall(chunked(body) if framed is None else framed)
            # all sent: a server draining the rest of the body sees its end
            sock.shutdown(socket.SHUT_WR)
        except OSError:  # the server answered before the whole body: read its answer
            pass
        answer = b""
        while True:
            try:
                data = sock.recv(65536)
            except OSError:
                break
            if not data:
                break
            answer += data
    head, _, payload = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" in head.lower():
        payload = dechunk(payload)
    return status, json.loads(payload)


def dechunk(payload: bytes) -> bytes:
    out = b""
    while payload:
        size_line, _, rest = payload.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if not size:
            break
        out += rest[:size]
        payload = rest[size + 2 :]
    return out


@pytest.mark.slow
def test_real_chunked_nul_and_oversized_bodies_on_a_server(server, tenant_a):
    base, port = server
    status, body = send_chunked(
        port, "/v1/jobs", json.dumps(job_body(title="Nurse\u0000")).encode(), tenant_a.headers
    )
    assert_error(status, body, 422, "validation_error")
    assert body["error"]["fields"] == {"title": NUL_MESSAGE}

    status, body = send_chunked(
        port,
        "/v1/jobs",
        json.dumps(job_body(desc="x" * (4 * BODY_LIMIT))).encode(),
        tenant_a.headers,
    )
    assert_error(status, body, 413, "payload_too_large")

    resume = base64.b64encode(pdf_bytes() + b"%" * RESUME_LIMIT).decode()
    status, body = send_chunked(
        port,
        "/v1/candidates",
        json.dumps(candidate_body(base64file=resume, file_name="cv.pdf")).encode(),
        tenant_a.headers,
    )
    assert_error(status, body, 413, "payload_too_large")

    form, content_type = multipart(candidate_body(), b"a" * (RESUME_LIMIT + 1))
    assert len(form) < BODY_LIMIT
    status, body = send_chunked(port, "/v1/candidates", form, tenant_a.headers, content_type)
    assert_error(status, body, 413, "payload_too_large")

    status, body = send_chunked(
        port, "/v1/jobs", b"", tenant_a.headers, framed=b"zz\r\n{}\r\n0\r\n\r\n"
    )
    # a malformed chunk is the client's error, not a 500
    assert status == 400 and body["status"] == 400, body

    status, body = send_chunked(
        port, "/v1/jobs", json.dumps(job_body(source_id="chunked-ok")).encode(), tenant_a.headers
    )
    assert status == 201, body  # an ordinary chunked body is read and stored

    listed = requests.get(
        f"{base}/v1/jobs?page=1&size=5", headers=tenant_a.headers, timeout=10
    ).json()
    assert [job["source_id"] for job in listed["data"]] == ["chunked-ok"]
    assert (
        requests.get(
            f"{base}/v1/candidates?page=1&size=5", headers=tenant_a.headers, timeout=10
        ).json()["total"]
        == 0
    )
