"""A client generated from the live /openapi.json with openapi-python-client is typed and usable:
named functions, required record fields, nested models (a completed call's assessment is an
Assessment), driven against a live server."""

from __future__ import annotations

import base64
import hashlib
import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import candidate_body, create_application, job_body, pdf_bytes
from tests.webhook_helpers import create_webhook, emit

GENERATOR = shutil.which(
    "openapi-python-client", path=str(Path(sys.executable).parent)
) or shutil.which("openapi-python-client")
PACKAGE = "hirekit_generated_client"


@pytest.fixture(scope="session")
def generated_packages(tmp_path_factory):
    """Generated client packages by document digest: generated once per document, imported from a
    tmp dir."""
    if GENERATOR is None:
        pytest.skip("openapi-python-client is not installed (pip install -r requirements-dev.txt)")
    root = tmp_path_factory.mktemp("generated")
    # no formatter run: generation stays a few seconds
    (root / "config.yaml").write_text("post_hooks: []\n")
    sys.path.insert(0, str(root))
    yield root, {}
    sys.path.remove(str(root))


def generated_client(live_url: str, generated_packages):
    """The client package openapi-python-client generates from the document the live server
    answers."""
    import httpx

    root, packages = generated_packages
    document = httpx.get(f"{live_url}/openapi.json").content
    digest = hashlib.sha256(document).hexdigest()[:12]
    if digest not in packages:
        name = f"{PACKAGE}_{digest}"
        (root / f"{name}.json").write_bytes(document)
        generated = subprocess.run(
            [
                GENERATOR,
                "generate",
                "--path",
                str(root / f"{name}.json"),
                "--output-path",
                str(root / name),
                "--meta",
                "none",
                "--config",
                str(root / "config.yaml"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert generated.returncode == 0 and "Warning" not in generated.stdout + generated.stderr, (
            generated.stdout + generated.stderr
        )
        packages[digest] = name
    return lambda module: importlib.import_module(f"{packages[digest]}.{module}")


def test_every_operation_has_a_unique_operation_id_a_person_would_write(client):
    operations = [
        operation
        for item in client.get("/openapi.json").json["paths"].values()
        for method, operation in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]
    ids = [operation.get("operationId") for operation in operations]
    assert None not in ids and len(set(ids)) == len(ids)
    assert {
        "create_job",
        "list_jobs",
        "get_job",
        "update_job",
        "create_application",
        "get_call",
        "list_calls",
        "start_instant_call",
        "create_tenant_webhook",
        "person_search_v1",
    } <= set(ids)


def test_record_schemas_are_typed_for_generators(client):
    schemas = client.get("/openapi.json").json["components"]["schemas"]
    assert {"id", "created_at", "updated_at", "title", "status"} <= set(schemas["Job"]["required"])
    assert {"id", "status", "assessment", "transcript"} <= set(schemas["Call"]["required"])
    assert "secret" not in schemas["TenantWebhook"]["required"]  # only in the answer that set it
    # embedded in records, every field in each
    for name in ("CandidateSummary", "JobSummary", "Resume"):
        assert set(schemas[name]["required"]) == set(schemas[name]["properties"]), name
    # nullable beside type, as OpenAPI 3.0.3 reads it
    null_only = {"type": "object", "nullable": True, "enum": [None]}
    assert schemas["Call"]["properties"]["assessment"] == {
        "anyOf": [{"$ref": "#/components/schemas/Assessment"}, null_only]
    }
    assert schemas["Application"]["properties"]["resume"]["anyOf"] == [
        {"$ref": "#/components/schemas/Resume"},
        null_only,
    ]
    for name in ("PdlPersonSearch", "PdlPersonSearchPage"):
        properties = schemas[name]["properties"]
        assert properties["query"]["type"] == "object" and properties["sort"]["type"] == "array"
        assert all(
            "type" in prop or "allOf" in prop or "oneOf" in prop for prop in properties.values()
        ), name


def test_a_generated_client_drives_jobs_applications_and_calls(
    live_url, tenant_a, generated_packages
):
    module = generated_client(live_url, generated_packages)
    models = module("models")
    api = module("client").AuthenticatedClient(
        base_url=live_url, token=tenant_a.key, raise_on_unexpected_status=True
    )
    create_job, get_job, list_jobs = (
        module(f"api.jobs.{name}") for name in ("create_job", "get_job", "list_jobs")
    )

    job = create_job.sync(client=api, body=models.JobCreate.from_dict(job_body(title="ICU Nurse")))
    assert (
        isinstance(job, models.Job)
        and job.title == "ICU Nurse"
        and job.created_at.tzinfo is not None
    )
    assert get_job.sync(str(job.id), client=api).to_dict() == job.to_dict()
    page = list_jobs.sync(client=api, page=1, size=10)
    assert (
        isinstance(page, models.JobPage)
        and [item.id for item in page.data] == [job.id]
        and page.total == 1
    )

    candidate = module("api.candidates.create_candidate").sync(
        client=api, body=models.CandidateCreate.from_dict(candidate_body())
    )
    assert isinstance(candidate, models.Candidate)
    resume = base64.b64encode(pdf_bytes()).decode()
    application = module("api.applications.create_application").sync(
        client=api,
        body=models.ApplicationCreate(
            candidate_source_id=candidate.source_id,
            job_source_id=job.source_id,
            source_application_status="applied",
            application_stage=models.ApplicationCreateApplicationStage.ACTIVE,
            base64file=resume,
            file_name="cv.pdf",
        ),
    )
    assert isinstance(application, models.Application) and application.status == "applied"
    assert (
        isinstance(application.resume, models.Resume) and application.resume.file_name == "cv.pdf"
    )
    assert (
        isinstance(application.candidate, models.CandidateSummary) and application.job.id == job.id
    )
    listed = module("api.applications.list_applications").sync(
        client=api, page=1, size=10, job_id=str(job.id)
    )
    assert [item.id for item in listed.data] == [application.id]

    started = module("api.calls.start_instant_call").sync(str(application.id), client=api)
    assert isinstance(started, models.Call) and started.application_id == application.id
    call = module("api.calls.get_call").sync(str(started.id), client=api)
    assert call.status == "completed"  # the simulated telephony completes the call inline
    assert isinstance(call.assessment, models.Assessment) and 0 <= call.assessment.score <= 100
    assert all(isinstance(answer, models.Answer) for answer in call.assessment.answers)
    calls = module("api.calls.list_calls").sync(client=api, page=1, size=10)
    assert isinstance(calls, models.CallPage) and [item.id for item in calls.data] == [call.id]


def test_a_missing_body_is_answered_like_an_empty_object(client, tenant_a):
    """The JSON-or-multipart bodies are documented optional (see
    app.files.bodies.json_or_multipart): none is a 422 naming the required fields, not a 415."""
    response = client.post("/v1/applications", headers=tenant_a.headers)
    assert response.status_code == 422 and "candidate_source_id" in response.json["error"]["fields"]


@pytest.fixture
def hook(httpserver):
    httpserver.expect_request("/hook").respond_with_data("ok")
    return httpserver.url_for("/hook")


def test_every_record_answer_carries_the_fields_its_schema_requires(app, client, tenant_a, hook):
    """What `required` promises a generated model (it reads them with d.pop(name)) holds on answers
    of each family."""
    schemas = client.get("/openapi.json").json["components"]["schemas"]
    headers = tenant_a.headers
    webhook = create_webhook(client, tenant_a, hook)
    emit(app, tenant_a)
    application = create_application(client, tenant_a)
    job_id = application["job_id"]
    question = client.post(
        f"/v1/jobs/{job_id}/questions",
        json={"question_text": "Why?", "source_id": "q-1"},
        headers=headers,
    )
    call = client.post(f"/v1/applications/{application['id']}/instant-call", headers=headers)
    answers = {
        "Job": client.get(f"/v1/jobs/{job_id}", headers=headers).json,
        "Candidate": client.get(
            f"/v1/candidates/{application['candidate_id']}", headers=headers
        ).json,
        "Application": client.get(f"/v1/applications/{application['id']}", headers=headers).json,
        "CandidateSummary": application["candidate"],
        "JobSummary": application["job"],
        "Question": question.json,
        "Call": client.get(f"/v1/calls/{call.json['id']}", headers=headers).json,
        "TenantWebhook": client.get("/v1/tenant-webhook", headers=headers).json["data"][0],
        "WebhookDelivery": client.get(
            f"/v1/tenant-webhook/{webhook['id']}/deliveries?page=1&size=5", headers=headers
        ).json["data"][0],
    }
    for name, answer in answers.items():
        assert set(schemas[name]["required"]) <= set(answer), (
            name,
            set(schemas[name]["required"]) - set(answer),
        )


def test_a_generated_client_runs_the_sync_loop(live_url, tenant_a, generated_packages):
    """Issue 17 through generated code: push by source id with an idempotency key, pull by cursor,
    read the feed."""
    module = generated_client(live_url, generated_packages)
    models = module("models")
    api = module("client").AuthenticatedClient(
        base_url=live_url, token=tenant_a.key, raise_on_unexpected_status=True
    )
    upsert = module("api.jobs.upsert_job_by_source_id")
    body = {
        name: value for name, value in job_body(title="Night Nurse").items() if name != "source_id"
    }

    created = upsert.sync_detailed(
        "ats-42", client=api, body=models.JobUpsert.from_dict(body), idempotency_key="push-1"
    )
    replayed = upsert.sync_detailed(
        "ats-42", client=api, body=models.JobUpsert.from_dict(body), idempotency_key="push-1"
    )
    assert (
        created.status_code == 201
        and replayed.status_code == 201
        and replayed.content == created.content
    )
    assert replayed.headers["Idempotent-Replayed"] == "true"
    changed = upsert.sync_detailed(
        "ats-42", client=api, body=models.JobUpsert.from_dict({**body, "status": "closed"})
    )
    assert (
        changed.status_code == 200
        and changed.parsed.status == "closed"
        and changed.parsed.id == created.parsed.id
    )
    for n in range(4):
        upsert.sync("ats-" + str(n), client=api, body=models.JobUpsert.from_dict(body))

    list_jobs = module("api.jobs.list_jobs")
    seen, cursor = [], ""
    while True:
        page = list_jobs.sync(client=api, cursor=cursor, size=2)
        seen += [job.source_id for job in page.data]
        if not isinstance(page.next_cursor, str):  # absent on the last page: the generated Unset
            break
        cursor = page.next_cursor
    assert sorted(seen) == sorted(["ats-42", "ats-0", "ats-1", "ats-2", "ats-3"])
    assert list_jobs.sync(client=api, page=1, size=2, status="CLOSED").total == 1

    feed = module("api.events.list_events").sync(client=api, size=10)
    assert isinstance(feed.data, list)

    batch = module("api.jobs.upsert_jobs_by_source_id")
    pushed = batch.sync(
        client=api,
        body=models.JobBatchUpsert.from_dict(
            {
                "items": [
                    {**body, "source_id": "ats-b1"},
                    {**body, "source_id": "ats-42", "status": "open"},
                    {**body, "source_id": "ats-b2", "min_pay_rate": 90, "max_pay_rate": 10},
                ]
            }
        ),
    )
    assert [item.status for item in pushed.items] == [201, 200, 422]
    assert (pushed.created, pushed.replaced, pushed.failed) == (1, 1, 1)
    assert list_jobs.sync(client=api, page=1, size=2, status="CLOSED").total == 0
