"""Every free-text field of the recruitment bodies has a bound, documented in the OpenAPI document
(maxLength) and answered 422 naming the field past it; question generation reads a bounded part of a
description, so what one job costs to store, list and generate from is bounded."""

from __future__ import annotations

import pytest

from plugins.candidates.schemas import PhoneNumber
from plugins.jobs.schemas import MAX_DESCRIPTION_LENGTH
from plugins.questions.generation import MAX_DESCRIPTION_READ, JobFacts, RuleBasedGenerator
from tests.factories import candidate_body, create_job, job_body

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

RECRUITMENT_PATHS = ("/v1/jobs", "/v1/candidates", "/v1/applications", "/v1/questions")
# bounded elsewhere: the resume's bytes by HIREKIT_MAX_RESUME_BYTES (413), dates and times by their
# ISO 8601 forms
BOUNDED_OTHERWISE = {
    "base64file",
    "start_date",
    "end_date",
    "posting_date",
    "window_start_time",
    "window_end_time",
}


def unbounded_strings(
    schema: dict, schemas: dict, path: str = "", seen: frozenset = frozenset()
) -> list[str]:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return (
            [] if name in seen else unbounded_strings(schemas[name], schemas, path, seen | {name})
        )
    found = []
    for key in ("allOf", "anyOf", "oneOf"):
        for part in schema.get(key, ()):
            found += unbounded_strings(part, schemas, path, seen)
    types = schema.get("type") if isinstance(schema.get("type"), list) else [schema.get("type")]
    if (
        "string" in types
        and "maxLength" not in schema
        and "enum" not in schema
        and schema.get("format") not in ("email", "uuid", "binary", "date-time", "date")
        and path.rsplit(".", 1)[-1] not in BOUNDED_OTHERWISE
    ):
        found.append(path)
    if "array" in types and isinstance(schema.get("items"), dict):
        found += unbounded_strings(schema["items"], schemas, f"{path}[]", seen)
    for name, field in schema.get("properties", {}).items():
        found += unbounded_strings(field, schemas, f"{path}.{name}", seen)
    return found


def test_every_free_text_field_of_a_recruitment_body_documents_its_bound(client):
    document = client.get("/openapi.json").json
    schemas = document["components"]["schemas"]
    unbounded = []
    for path, operations in document["paths"].items():
        if not path.startswith(RECRUITMENT_PATHS) and "/questions" not in path:
            continue
        for method, operation in operations.items():
            if not isinstance(operation, dict):
                continue
            for content_type, content in (
                (operation.get("requestBody") or {}).get("content", {}).items()
            ):
                unbounded += [
                    f"{method.upper()} {path} {content_type}{field}"
                    for field in unbounded_strings(content["schema"], schemas)
                ]
    assert unbounded == []


def test_the_job_description_bound_is_documented(client):
    schemas = client.get("/openapi.json").json["components"]["schemas"]
    assert {
        schemas[name]["properties"]["desc"]["maxLength"]
        for name in schemas
        if name.startswith("Job")
        and "desc" in schemas[name].get("properties", {})
        and "maxLength" in schemas[name]["properties"]["desc"]
    } == {MAX_DESCRIPTION_LENGTH}


def test_a_description_past_its_bound_is_422_naming_desc_on_create_and_update(client, tenant_a):
    too_long = "x" * (MAX_DESCRIPTION_LENGTH + 1)
    created = client.post("/v1/jobs", json=job_body(desc=too_long), headers=tenant_a.headers)
    assert created.status_code == 422 and list(created.json["error"]["fields"]) == ["desc"]
    # the bound itself is accepted
    job = create_job(client, tenant_a, desc="y" * MAX_DESCRIPTION_LENGTH)
    updated = client.patch(
        f"/v1/jobs/{job['id']}",
        json={"title": job["title"], "desc": too_long},
        headers=tenant_a.headers,
    )
    assert updated.status_code == 422 and list(updated.json["error"]["fields"]) == ["desc"]
    assert (
        len(client.get(f"/v1/jobs/{job['id']}", headers=tenant_a.headers).json["desc"])
        == MAX_DESCRIPTION_LENGTH
    )


@pytest.mark.parametrize("phone_no", ["+1 415 555 0100" + " " * 60, "+" + "1" * 5_000_000])
def test_a_phone_number_past_its_bound_is_422_before_it_is_parsed(client, tenant_a, phone_no):
    answer = client.post(
        "/v1/candidates", json=candidate_body(phone_no=phone_no), headers=tenant_a.headers
    )
    assert answer.status_code == 422 and "phone_no" in answer.json["error"]["fields"]
    assert f"maximum length {PhoneNumber.MAX_LENGTH}" in str(
        answer.json["error"]["fields"]["phone_no"]
    )


def facts(description: str) -> JobFacts:
    fields = {name: None for name in JobFacts.__dataclass_fields__ if name != "description"}
    return JobFacts(**{**fields, "title": "Registered Nurse"}, description=description)


class StoredJob:
    """A job as stored, for JobFacts.of: the attributes the generator reads."""

    def __init__(self, description: str):
        self.title, self.description = "Registered Nurse", description


def test_question_generation_reads_a_bounded_part_of_the_description():
    requirement = "\nRequired: 5 years of Python experience.\n"
    filler = "We care about our patients and our people. " * (MAX_DESCRIPTION_READ // 40)
    early = RuleBasedGenerator().generate(facts(requirement + filler))
    assert any("Python" in question for question in early)
    late = JobFacts.of(StoredJob(filler + requirement))
    assert len(late.description) == MAX_DESCRIPTION_READ
    assert not any("Python" in question for question in RuleBasedGenerator().generate(late))
