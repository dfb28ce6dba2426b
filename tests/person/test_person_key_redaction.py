"""A key sent as PDL's `api_key` URL parameter never reaches a log line (gunicorn's access log, the
request log, the development server's log), a metric label or an error message."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from app.server.observability import JsonFormatter, KeyRedactingFilter, redact_keys
from app.data.tenancy import generate_key
from tests.gunicorn_process import exchange, gunicorn
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
KEY_SHAPED_SAMPLE = "hk_" + "Ab1-_" * 8


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "GET /v1/person/enrich?email=a&api_key=SECRET&x=1 HTTP/1.1",
            "GET /v1/person/enrich?email=a&api_key=[redacted]&x=1 HTTP/1.1",
        ),
        ("api_key=SECRET", "api_key=[redacted]"),
        ("a=1&API%5Fkey=SECRET;b=2", "a=1&API%5Fkey=[redacted];b=2"),
        ("a=1&not_api_key=kept", "a=1&not_api_key=kept"),
        # the name as the app reads it, percent-decoded: each of these authenticates as api_key
        ("?%61pi_key=SECRET&b=2", "?%61pi_key=[redacted]&b=2"),
        ("?api_k%65y=SECRET", "?api_k%65y=[redacted]"),
        ("q=1&%61%70%69%5F%6B%65%79=SECRET", "q=1&%61%70%69%5F%6B%65%79=[redacted]"),
        ("api+key=kept&api_keys=kept&xapi_key=kept", "api+key=kept&api_keys=kept&xapi_key=kept"),
        # gunicorn quotes a malformed request line whole
        (
            "Invalid HTTP request line: 'GET /v2/person/enrich?api_key=SECRET\\x7f HTTP/1.1'",
            "Invalid HTTP request line: 'GET /v2/person/enrich?api_key=[redacted] HTTP/1.1'",
        ),
        # anything shaped like a key, wherever it stands
        (
            f"Invalid HTTP Header: 'X-Api-Key {KEY_SHAPED_SAMPLE}'",
            "Invalid HTTP Header: 'X-Api-Key [redacted]'",
        ),
    ],
)
def test_redact_keys(text, expected):
    assert redact_keys(text) == expected


def test_a_generated_key_is_redacted_wherever_it_stands():
    key = generate_key()
    assert redact_keys(f"a {key}, b") == "a [redacted], b"


@pytest.mark.parametrize("spelling", ["api_key", "%61pi_key", "api_k%65y"])
def test_development_server_lines_are_redacted(spelling):
    record = logging.LogRecord(
        "werkzeug",
        logging.INFO,
        __file__,
        1,
        '%s - - "%s" %s',
        ("127.0.0.1", f"GET /x?{spelling}=SECRET HTTP/1.1", 200),
        None,
    )
    KeyRedactingFilter().filter(record)
    assert "SECRET" not in record.getMessage() and f"{spelling}=[redacted]" in record.getMessage()


def test_the_request_log_metrics_and_errors_never_carry_a_url_key(person_app, make_tenant, caplog):
    app = person_app("people8", LOG_LEVEL="INFO", METRICS_ENABLED=True, METRICS_TOKEN="m" * 32)
    key = make_tenant("redaction").key
    client = app.test_client()
    caplog.set_level(logging.INFO)
    answers = [
        client.get(f"/v1/person/retrieve/p1?api_key={key}"),
        client.get(f"/v1/person/retrieve/nobody?api_key={key}"),
        client.get(f"/v1/person/search?query=not-json&api_key={key}"),
        client.get(f"/v1/person/enrich?api_key={key}&min_likelihood=99"),
        client.get(f"/v1/person/search?api_key={key}x"),
    ]
    assert [a.status_code for a in answers] == [200, 404, 422, 422, 401]
    assert all(key not in a.get_data(as_text=True) for a in answers[1:])
    logged = "\n".join(JsonFormatter().format(record) for record in caplog.records)
    assert (
        logged.count('"route": "/v1/person/retrieve/<string:person_id>"') == 2 and key not in logged
    )
    scraped = client.get("/metrics", headers={"Authorization": "Bearer " + "m" * 32}).get_data(
        as_text=True
    )
    assert "/v1/person/retrieve" in scraped and key not in scraped


@pytest.mark.slow
def test_gunicorn_access_log_redacts_the_key(db_url, make_tenant, embedded_index, tmp_path):
    key = make_tenant("access-log").key
    access_log = tmp_path / "access.log"
    port = free_port()
    env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": db_url,
        "HIREKIT_INSTANCE_DIR": str(tmp_path),
        "HIREKIT_ACCESS_LOG": str(access_log),
        "HIREKIT_SEARCH_INDEX": embedded_index("people8"),
        "HIREKIT_LOG_LEVEL": "INFO",
        "HIREKIT_AUTH_CACHE_SECONDS": "0",
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "deploy/gunicorn.conf.py",
            "--workers",
            "1",
            "--bind",
            f"127.0.0.1:{port}",
            "wsgi:app",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                requests.get(f"{base}/healthz", timeout=2)
                break
            except requests.RequestException:
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.3)
        answer = requests.get(
            f"{base}/v1/person/retrieve/p1",
            params={"api_key": key, "pretty": "true"},
            headers={"Referer": f"{base}/?api_key={key}"},
            timeout=10,
        )
        assert answer.status_code == 200 and answer.json()["data"]["id"] == "p1"
        assert (
            requests.get(
                f"{base}/v1/person/search",
                headers={"X-Api-Key": key},
                timeout=10,
                params={"sql": "SELECT * FROM person WHERE skills = 'go'"},
            ).json()["total"]
            == 2
        )
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        _, errors = process.communicate(timeout=30)
    lines = access_log.read_text()
    assert (
        "/v1/person/retrieve/p1" in lines
        and "api_key=[redacted]" in lines
        and "pretty=true" in lines
    )
    assert key not in lines and key not in errors.decode()


KEY_SPELLINGS = ["api_key", "%61pi_key", "api_k%65y", "api%5Fkey", "%61%70%69%5f%6b%65%79"]


@pytest.mark.slow
def test_no_gunicorn_or_app_log_line_holds_the_key_however_the_parameter_is_spelled(
    db_url, make_tenant, embedded_index, tmp_path
):
    """Every spelling of api_key the app accepts, and malformed requests carrying the key that
    gunicorn refuses (its error log quotes a malformed request line whole): neither the access log,
    nor gunicorn's error log, nor the app's JSON log (both on stderr, at DEBUG) holds the key."""
    key = make_tenant("any-spelling").key
    access_log, errors = tmp_path / "access.log", tmp_path / "stderr.log"
    env = {
        "HIREKIT_DATABASE_URL": db_url,
        "HIREKIT_INSTANCE_DIR": str(tmp_path),
        "HIREKIT_ACCESS_LOG": str(access_log),
        "HIREKIT_SEARCH_INDEX": embedded_index("people8"),
        "HIREKIT_LOG_LEVEL": "DEBUG",
        "HIREKIT_AUTH_CACHE_SECONDS": "0",
    }
    with errors.open("w") as stderr, gunicorn(env, stderr=stderr) as (_, base, port):
        for spelling in KEY_SPELLINGS:  # sent as written (requests would decode %61 to a)
            answer = exchange(
                port,
                f"GET /v1/person/retrieve/p1?pretty=true&{spelling}={key} HTTP/1.1\r\nHost: x\r\n"
                f"Referer: {base}/?{spelling}={key}\r\nConnection: close\r\n\r\n".encode(),
            )
            assert answer.status == 200, (spelling, answer.body)  # the spelling authenticates
        refused = [
            # quoted in the error log
            f"GET /v2/person/enrich?api_key={key}&x=\x7f HTTP/1.1\r\nHost: x\r\n\r\n",
            f"GET /v2/person/enrich?%61pi_key={key} HTTP/1.1 x\r\nHost: x\r\n\r\n",
            f"GET /v2/person/enrich?api_key={key} HTTP/1.1\r\nX-Api-Key {key}\r\nHost: x\r\n\r\n",
            f"GET /v2/person/enrich?api_key={key}&pad={'p' * 9000} HTTP/1.1\r\nHost: x\r\n\r\n",
        ]
        assert [exchange(port, raw.encode()).status for raw in refused] == [400, 400, 400, 414]
    access, logged = access_log.read_text(), errors.read_text()
    assert access.count("/v1/person/retrieve/p1") == len(KEY_SPELLINGS)
    assert all(f"pretty=true&{spelling}=[redacted]" in access for spelling in KEY_SPELLINGS)
    # the refusals were logged
    assert "Invalid HTTP request line" in logged and "api_key=[redacted]" in logged
    assert key not in access and key not in logged
