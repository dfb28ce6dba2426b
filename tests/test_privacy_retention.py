"""Candidate retention: a tenant's candidate_retention_days (CLI, shown on GET /v1/tenant) erases
candidates with no write to them, their applications or calls for longer; `flask privacy expire
--dry-run` lists them, without it erases them, and `flask privacy log` shows each erasure; on SQLite
and PostgreSQL."""

from __future__ import annotations

import datetime as dt

import pytest

from app.data.db import database, utcnow
from plugins.applications.models import Application
from plugins.candidates.models import Candidate
from tests.factories import create_application, create_candidate


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


def age(app, model, record_id, days: float) -> None:
    """Backdate a row's last write: the only way to make data old in a test."""
    with app.app_context(), database.connection_context():
        model.update(updated_at=utcnow() - dt.timedelta(days=days)).where(
            model.id == record_id
        ).execute()


def test_retention_is_set_from_the_cli_and_shown_on_the_tenant(client, runner, tenant_a):
    assert (
        client.get("/v1/tenant", headers=tenant_a.headers).json["candidate_retention_days"] is None
    )
    result = runner.invoke(
        args=["tenants", "update", tenant_a.id, "--candidate-retention-days", "30"]
    )
    assert result.exit_code == 0, result.output
    assert client.get("/v1/tenant", headers=tenant_a.headers).json["candidate_retention_days"] == 30
    assert "candidate_retention_days=30" in runner.invoke(args=["tenants", "list"]).output
    for bad in ("0", "-3", "soon"):
        refused = runner.invoke(
            args=["tenants", "update", tenant_a.id, "--candidate-retention-days", bad]
        )
        assert refused.exit_code != 0 and "--candidate-retention-days" in refused.output
    both = runner.invoke(
        args=[
            "tenants",
            "update",
            tenant_a.id,
            "--candidate-retention-days",
            "3",
            "--keep-candidates",
        ]
    )
    assert both.exit_code == 1 and "not both" in both.output
    assert (
        runner.invoke(
            args=["tenants", "update", "nobody", "--candidate-retention-days", "3"]
        ).exit_code
        == 1
    )
    assert (
        runner.invoke(args=["tenants", "update", tenant_a.id, "--keep-candidates"]).exit_code == 0
    )
    assert (
        client.get("/v1/tenant", headers=tenant_a.headers).json["candidate_retention_days"] is None
    )
    created = runner.invoke(args=["tenants", "create", "brief", "--candidate-retention-days", "7"])
    assert (
        created.exit_code == 0
        and "candidate_retention_days=7" in runner.invoke(args=["tenants", "list"]).output
    )


def test_expire_dry_run_lists_then_a_run_erases_only_inactive_candidates(
    app, client, runner, tenant_a, tenant_b
):
    assert (
        runner.invoke(
            args=["tenants", "update", tenant_a.id, "--candidate-retention-days", "30"]
        ).exit_code
        == 0
    )
    inactive = create_candidate(client, tenant_a)
    recent = create_candidate(client, tenant_a)
    # its candidate is old, its application written recently
    applied = create_application(client, tenant_a)
    kept_elsewhere = create_candidate(client, tenant_b)  # tenant b keeps candidates until erased
    age(app, Candidate, inactive["id"], 31)
    age(app, Candidate, recent["id"], 29)
    age(app, Candidate, applied["candidate_id"], 40)
    age(app, Application, applied["id"], 10)
    age(app, Candidate, kept_elsewhere["id"], 400)

    dry = runner.invoke(args=["privacy", "expire", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert inactive["id"] in dry.output and "1 candidate(s) would be erased" in dry.output
    for other in (recent["id"], applied["candidate_id"], kept_elsewhere["id"]):
        assert other not in dry.output
    assert (
        client.get(f"/v1/candidates/{inactive['id']}", headers=tenant_a.headers).status_code == 200
    )

    run = runner.invoke(args=["privacy", "expire"])
    assert run.exit_code == 0 and "1 candidate(s) erased" in run.output
    assert (
        client.get(f"/v1/candidates/{inactive['id']}", headers=tenant_a.headers).status_code == 404
    )
    for other, tenant in ((recent, tenant_a), (kept_elsewhere, tenant_b)):
        assert (
            client.get(f"/v1/candidates/{other['id']}", headers=tenant.headers).status_code == 200
        )
    assert (
        client.get(f"/v1/applications/{applied['id']}", headers=tenant_a.headers).status_code == 200
    )

    log = client.get(
        "/v1/privacy/erasures", query_string={"page": 1, "size": 10}, headers=tenant_a.headers
    ).json
    assert [(entry["candidate_id"], entry["reason"], entry["key_id"]) for entry in log["data"]] == [
        (inactive["id"], "retention", None)
    ]
    operator_log = runner.invoke(args=["privacy", "log"])
    assert (
        operator_log.exit_code == 0
        and inactive["id"] in operator_log.output
        and "retention" in operator_log.output
    )
    assert inactive["email"] not in operator_log.output
    assert (
        "0 candidate(s) would be erased"
        in runner.invoke(args=["privacy", "expire", "--dry-run"]).output
    )


def test_expire_works_in_bounded_batches(app, client, runner, tenant_a):
    assert (
        runner.invoke(
            args=["tenants", "update", tenant_a.id, "--candidate-retention-days", "1"]
        ).exit_code
        == 0
    )
    old = [create_candidate(client, tenant_a) for _ in range(5)]
    for candidate in old:
        age(app, Candidate, candidate["id"], 2)
    first = runner.invoke(args=["privacy", "expire", "--limit", "2"])
    assert "2 candidate(s) erased" in first.output
    assert (
        "3 candidate(s) would be erased"
        in runner.invoke(args=["privacy", "expire", "--dry-run"]).output
    )


def test_the_worker_pass_erases_every_batch(app, client, runner, tenant_a, make_app):
    from plugins.privacy.retention import expire_inactive_candidates

    batched = make_app(CANDIDATE_RETENTION_BATCH=2, CANDIDATE_RETENTION_INTERVAL=0)
    assert (
        runner.invoke(
            args=["tenants", "update", tenant_a.id, "--candidate-retention-days", "1"]
        ).exit_code
        == 0
    )
    old = [create_candidate(client, tenant_a) for _ in range(5)]
    for candidate in old:
        age(app, Candidate, candidate["id"], 2)
    with batched.app_context(), database.connection_context():
        # no Redis: the pass runs inline, three batches of at most two
        assert expire_inactive_candidates() == 5
    assert (
        client.get(
            "/v1/candidates", query_string={"page": 1, "size": 10}, headers=tenant_a.headers
        ).json["total"]
        == 0
    )
