"""Operator commands: tenants and keys from the CLI, keys printed once and usable at once."""

import re

import pytest

from tests.factories import job_body


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


def printed_key(output: str) -> str:
    return re.search(r"api key \(shown once\): (\S+)", output).group(1)


def test_tenants_create_prints_a_working_key(app, runner):
    result = runner.invoke(args=["tenants", "create", "acme", "--name", "Acme Inc"])
    assert result.exit_code == 0, result.output
    key = printed_key(result.output)
    assert key.startswith("hk_")
    client = app.test_client()
    assert client.post("/v1/jobs", json=job_body(), headers={"Authorization": f"Bearer {key}"}).status_code == 201
    listing = runner.invoke(args=["tenants", "list"])
    assert "acme\tAcme Inc\tkeys=1" in listing.output


def test_operator_chosen_key_must_be_long(runner):
    short = runner.invoke(args=["tenants", "create", "acme", "--key", "too-short"])
    assert short.exit_code != 0 and "at least 24" in short.output
    ok = runner.invoke(args=["tenants", "create", "acme", "--key", "a-long-operator-chosen-key-0001"])
    assert ok.exit_code == 0 and printed_key(ok.output) == "a-long-operator-chosen-key-0001"


def test_duplicate_and_bad_tenant_ids_are_refused(runner):
    assert runner.invoke(args=["tenants", "create", "acme"]).exit_code == 0
    assert "already exists" in runner.invoke(args=["tenants", "create", "acme"]).output
    assert runner.invoke(args=["tenants", "create", "Not A Slug"]).exit_code != 0


def test_keys_create_and_revoke(app, runner):
    runner.invoke(args=["tenants", "create", "acme"])
    key = printed_key(runner.invoke(args=["keys", "create", "acme"]).output)
    client = app.test_client()
    headers = {"Authorization": f"Bearer {key}"}
    assert client.get("/v1/jobs?page=1&size=1", headers=headers).status_code == 200
    revoked = runner.invoke(args=["keys", "revoke", key[:12]])
    assert revoked.exit_code == 0 and "revoked 1" in revoked.output
    assert client.get("/v1/jobs?page=1&size=1", headers=headers).status_code == 401
    assert runner.invoke(args=["keys", "revoke", key[:12]]).exit_code != 0
    assert runner.invoke(args=["keys", "create", "nobody"]).exit_code != 0


def test_db_status_lists_applied_migrations(runner):
    result = runner.invoke(args=["db", "status"])
    assert "applied  001_core" in result.output and "pending" not in result.output
