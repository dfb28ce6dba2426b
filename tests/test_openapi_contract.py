"""The OpenAPI document is a versioned contract: docs/openapi.json is what the code builds (any
change lands in the snapshot too), and a breaking change (removed or renamed path, operation,
component, field; narrowed type; new required request field) cannot land unless CHANGELOG.md names
it."""

from __future__ import annotations

import copy
import json
import os
import subprocess

import pytest
from flask.cli import ScriptInfo

from app import create_app
from app.http import openapi_contract as contract
from app.cli import openapi_cli


@pytest.fixture(scope="module")
def snapshot() -> dict:
    document = contract.read_snapshot()
    assert document is not None, f"docs/openapi.json is missing: run `{contract.REGENERATE}`"
    return document


def test_the_snapshot_is_the_document_the_code_builds(snapshot):
    built = contract.built_document(create_app)
    if built != snapshot:
        breaking = contract.breaking_changes(snapshot, built)
        pytest.fail(
            f"/openapi.json differs from docs/openapi.json: run `{contract.REGENERATE}` and commit "
            "it"
            + (
                f"; breaking changes, to name in CHANGELOG.md first:\n{contract.describe(breaking)}"
                if breaking
                else ""
            )
        )
    assert contract.serialized(snapshot) == contract.SNAPSHOT.read_text(), (
        "docs/openapi.json is not in the written form"
    )


def test_removed_and_renamed_paths_operations_components_and_fields_are_breaking(snapshot):
    changed = copy.deepcopy(snapshot)
    del changed["paths"]["/v1/calls"]
    del changed["paths"]["/v1/jobs/{job_id}"]["patch"]
    changed["paths"]["/v1/jobs"]["get"]["operationId"] = "jobs_list"
    schemas = changed["components"]["schemas"]
    # the rename that broke every generated client
    schemas["PersonSearch"] = schemas.pop("PdlPersonSearch")
    del schemas["Job"]["properties"]["title"]
    assert {
        subject: change for subject, change in contract.breaking_changes(snapshot, changed)
    } == {
        "/v1/calls": "path removed",
        "PATCH /v1/jobs/{job_id}": "operation removed",
        "GET /v1/jobs": "operationId list_jobs renamed jobs_list",
        "PdlPersonSearch": "component removed or renamed",
        "Job.title": "field removed",
    }


def test_narrowed_types_and_new_required_request_fields_and_parameters_are_breaking(snapshot):
    changed = copy.deepcopy(snapshot)
    schemas = changed["components"]["schemas"]
    schemas["Job"]["properties"]["min_pay_rate"] = {"type": "integer"}
    schemas["JobCreate"]["required"].append("city")
    # an answer promising more: not breaking
    schemas["Job"]["required"] = [*schemas["Job"]["required"], "never_sent"]
    schemas["TenantWebhookBody"]["properties"]["http_method"]["enum"].remove("PATCH")
    changed["paths"]["/v1/candidates"]["get"]["parameters"].append(
        {"in": "query", "name": "region", "required": True, "schema": {"type": "string"}}
    )
    found = contract.breaking_changes(snapshot, changed)
    assert ("Job.min_pay_rate", "type narrowed from ['null', 'number'] to ['integer']") in found
    assert ("JobCreate.city", "request field now required") in found
    assert ("TenantWebhookBody.http_method", "enum narrowed") in found
    assert ("GET /v1/candidates", "query parameter region now required") in found
    assert not [subject for subject, _ in found if subject.startswith("Job.never_sent")]
    assert len(found) == 4, found


def test_an_operation_body_becoming_another_component_is_breaking(snapshot):
    changed = copy.deepcopy(snapshot)
    read_call = changed["paths"]["/v1/calls/{call_id}"]["get"]["responses"]["200"]["content"][
        "application/json"
    ]
    was = read_call["schema"]["$ref"].rsplit("/", 1)[-1]
    read_call["schema"] = {
        "$ref": "#/components/schemas/Call" if was != "Call" else "#/components/schemas/Job"
    }
    create_job = changed["paths"]["/v1/jobs"]["post"]["requestBody"]["content"]["application/json"]
    create_job["schema"] = {"$ref": "#/components/schemas/JobUpdate"}
    changes = dict(contract.breaking_changes(snapshot, changed))
    assert changes["GET /v1/calls/{call_id}"].startswith(
        f"response 200 application/json component {was} changed to "
    )
    assert (
        changes["POST /v1/jobs"]
        == "request body application/json component JobCreate changed to JobUpdate"
    )


def test_additions_are_not_breaking(snapshot):
    changed = copy.deepcopy(snapshot)
    changed["paths"]["/v1/new-family"] = {"get": {"operationId": "list_new", "responses": {}}}
    changed["components"]["schemas"]["Job"]["properties"]["new_field"] = {"type": "string"}
    changed["components"]["schemas"]["NewThing"] = {"type": "object"}
    assert contract.breaking_changes(snapshot, changed) == []


def test_writing_the_snapshot_is_refused_while_changelog_does_not_name_a_breaking_change(
    tmp_path, monkeypatch, snapshot
):
    """`flask --app wsgi openapi write PATH` over a document with a path the code no longer has:
    refused, naming it, until CHANGELOG.md names it; then written."""
    previous = copy.deepcopy(snapshot)
    previous["paths"]["/v1/retired"] = {"get": {"operationId": "list_retired", "responses": {}}}
    target = tmp_path / "openapi.json"
    target.write_text(json.dumps(previous))
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text("# Changelog\n\n## [Unreleased]\n")
    monkeypatch.setattr(contract, "CHANGELOG", changelog)
    app = create_app({"DATABASE_URL": "sqlite:///:memory:", "LOG_LEVEL": "WARNING"})
    runner = app.test_cli_runner()
    refused = runner.invoke(
        openapi_cli, ["write", str(target)], obj=ScriptInfo(create_app=lambda: app)
    )
    assert refused.exit_code == 1 and "`/v1/retired`: path removed" in refused.output
    assert json.loads(target.read_text()) == previous
    changelog.write_text(
        "# Changelog\n\n## [Unreleased]\n\n### Removed\n\n- `/v1/retired`: use `/v1/jobs`.\n"
    )
    written = runner.invoke(
        openapi_cli, ["write", str(target)], obj=ScriptInfo(create_app=lambda: app)
    )
    assert written.exit_code == 0, written.output
    assert target.read_text() == contract.serialized(contract.built_document(create_app))


def base_snapshot() -> dict | None:
    """docs/openapi.json as the base branch has it (HIREKIT_CONTRACT_BASE, default main), None
    outside git or before the base has a snapshot."""
    base = os.environ.get("HIREKIT_CONTRACT_BASE", "main")
    for ref in (base, f"origin/{base}"):
        shown = subprocess.run(
            ["git", "show", f"{ref}:docs/openapi.json"], cwd=contract.ROOT, capture_output=True
        )
        if shown.returncode == 0:
            return json.loads(shown.stdout)
    return None


def test_breaking_changes_since_the_base_branch_are_named_in_the_changelog(snapshot):
    base = base_snapshot()
    if base is None:
        pytest.skip(
            "no docs/openapi.json on the base branch (HIREKIT_CONTRACT_BASE, default main) to "
            "compare with"
        )
    unnamed = contract.unnamed_in_changelog(contract.breaking_changes(base, snapshot))
    assert not unnamed, (
        "breaking changes since the base branch not named in CHANGELOG.md:\n"
        f"{contract.describe(unnamed)}"
    )
