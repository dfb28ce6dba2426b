"""While the limiter's Redis is down and RATE_LIMIT_FAIL_OPEN lets requests through, one JSON
warning says the limits are skipped, at most once a minute per process, instead of a traceback per
request."""

from __future__ import annotations

import json

from tests.ports import free_port

LIST = "/v1/jobs?page=1&size=1"


def test_storage_down_logs_one_json_warning_and_no_traceback(make_app, make_tenant, capsys):
    app = make_app(
        RATELIMIT_STORAGE_URI=f"redis://127.0.0.1:{free_port()}/0",
        RATE_LIMIT_FAIL_OPEN=True,
        LOG_FORMAT="json",
        LOG_LEVEL="INFO",
    )
    tenant = make_tenant("stormy")
    client = app.test_client()
    capsys.readouterr()
    assert {client.get(LIST, headers=tenant.headers).status_code for _ in range(20)} == {200}
    assert client.get(LIST, headers={"Authorization": "Bearer hk_" + "u" * 40}).status_code == 401
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    # every line is JSON: no plain text, no traceback lines
    entries = [json.loads(line) for line in lines]
    warnings = [entry for entry in entries if entry["logger"] == "hirekit.limits"]
    assert len(warnings) == 1, warnings
    warning = warnings[0]
    assert warning["level"] == "warning" and "rate limits are skipped" in warning["message"]
    assert "exception" not in warning and "127.0.0.1" in warning["error"]
    # the requests were logged as usual
    assert sum(entry["logger"] == "hirekit.request" for entry in entries) == 21
