"""Every integer a request sends has an upper bound that fits its column (issue 14 item 11).

The integers are found by walking what clients see, never listed by hand: the OpenAPI document's
request bodies and query parameters, and the MCP servers' tools/list inputSchemas. For each one, its
maximum + 1 is refused (422 naming the field; MCP: invalid params naming it) and its maximum itself
is accepted (on a write, stored and read back), on SQLite and on PostgreSQL, whose `integer` columns
stop at 2**31 - 1.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

import pytest

from tests.factories import create_job
from tests.test_mcp_protocol import call

MCP_SERVERS = ("/mcp", "/mcp/sourcing")
PG_INTEGER_MAX = 2**31 - 1  # PostgreSQL `integer`, what peewee's IntegerField makes


@dataclass(frozen=True)
class Target:
    """One integer in a request: where it goes and its bounds as documented."""

    method: str
    path: str  # the OpenAPI path template
    location: str  # "query" or "body"
    field: tuple  # names from the body's top, "[]" for an array's items
    minimum: int | None
    maximum: int | None

    @property
    def name(self) -> str:
        return ".".join(part for part in self.field if part != "[]")

    def __str__(self):
        return f"{self.method.upper()} {self.path} {self.location}:{self.name}"


def is_integer(schema: dict) -> bool:
    kind = schema.get("type")
    return kind == "integer" or (isinstance(kind, list) and "integer" in kind)


def integers_in(schema: dict, resolve, field: tuple = ()):
    """(field path, schema) of every integer in a JSON Schema, through $refs, combinators, arrays
    and objects."""
    schema = resolve(schema)
    if is_integer(schema):
        yield field, schema
    for combinator in ("allOf", "oneOf", "anyOf"):
        for part in schema.get(combinator, []):
            yield from integers_in(part, resolve, field)
    if isinstance(schema.get("items"), dict):
        yield from integers_in(schema["items"], resolve, (*field, "[]"))
    for name, inner in (schema.get("properties") or {}).items():
        yield from integers_in(inner, resolve, (*field, name))


def openapi_integers(doc: dict) -> list[Target]:
    components = doc["components"]["schemas"]

    def resolve(schema):
        while "$ref" in schema:
            schema = components[schema["$ref"].rsplit("/", 1)[-1]]
        return schema

    found = []
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "query":
                    for field, schema in integers_in(
                        parameter["schema"], resolve, (parameter["name"],)
                    ):
                        found.append(
                            Target(
                                method,
                                path,
                                "query",
                                field,
                                schema.get("minimum"),
                                schema.get("maximum"),
                            )
                        )
            for media in (operation.get("requestBody") or {}).get("content", {}).values():
                for field, schema in integers_in(media["schema"], resolve):
                    found.append(
                        Target(
                            method,
                            path,
                            "body",
                            field,
                            schema.get("minimum"),
                            schema.get("maximum"),
                        )
                    )
    return found


def mcp_integers(client, tenant) -> list[tuple[str, str, tuple, dict]]:
    found = []
    for server in MCP_SERVERS:
        for tool in call(client, tenant, "tools/list", {}, path=server).json["result"]["tools"]:
            for field, schema in integers_in(tool["inputSchema"], lambda s: s):
                found.append((server, tool["name"], field, schema))
    return found


def placed(field: tuple, value):
    """The value at `field` inside an otherwise empty body: ("days_of_week", "[]") ->
    {"days_of_week": [value]}."""
    if not field:
        return value
    head, rest = field[0], field[1:]
    return [placed(rest, value)] if head == "[]" else {head: placed(rest, value)}


def example_of(schema: dict):
    if "example" in schema:
        return schema["example"]
    if schema.get("examples"):
        return schema["examples"][0]
    return None


def base_request(doc: dict, target: Target, ids: dict) -> tuple[str, dict, dict]:
    """The target's path with real ids, and the required values its document gives examples of
    (query, body)."""
    components = doc["components"]["schemas"]
    path = target.path
    for name in [part[1:-1] for part in target.path.split("/") if part.startswith("{")]:
        path = path.replace(f"{{{name}}}", str(ids.get(name, uuid.uuid4())))
    operation = doc["paths"][target.path][target.method]
    query = {}
    for parameter in operation.get("parameters", []):
        example = (
            example_of(parameter)
            if example_of(parameter) is not None
            else example_of(parameter["schema"])
        )
        if parameter["in"] == "query" and parameter.get("required") and example is not None:
            query[parameter["name"]] = (
                example if isinstance(example, (str, int)) else json.dumps(example)
            )
    body = {}
    for media in (operation.get("requestBody") or {}).get("content", {}).values():
        schema = media["schema"]
        if "$ref" in schema:
            schema = components[schema["$ref"].rsplit("/", 1)[-1]]
        for name in schema.get("required", []):
            example = example_of(schema["properties"][name])
            if example is not None:
                body[name] = example
    return path, query, body


def send(client, tenant, doc, target: Target, value, ids: dict):
    path, query, body = base_request(doc, target, ids)
    # each route reads its own scheme's header
    headers = {**tenant.headers, **tenant.person_headers}
    if target.location == "query":
        query[target.field[0]] = str(value)
        return client.open(
            path, method=target.method.upper(), query_string=query, headers=headers
        ), path
    top = placed(target.field, value)
    return client.open(
        path,
        method=target.method.upper(),
        query_string=query,
        json={**body, **top},
        headers=headers,
    ), path


def values_at(record, field: tuple) -> list:
    """The values a record holds at a field path ("[]" spreads a list)."""
    values = [record]
    for part in field:
        values = (
            [item for value in values for item in value]
            if part == "[]"
            else [value[part] for value in values]
        )
    return values


def past(maximum: int | None) -> int:
    """One past the documented maximum; past a PostgreSQL integer where none is documented."""
    return PG_INTEGER_MAX + 1 if maximum is None else maximum + 1


def named(fields: dict, target_name: str) -> bool:
    return any(key == target_name or key.startswith(target_name + ".") for key in fields)


@pytest.fixture
def document(client):
    return client.get("/openapi.json").json


def test_every_integer_a_request_sends_has_a_maximum_that_fits_a_postgres_integer(
    client, tenant_a, document
):
    targets = openapi_integers(document)
    assert (
        len(targets) > 20
        and any(t.location == "body" for t in targets)
        and any(t.location == "query" for t in targets)
    )
    unbounded = [str(t) for t in targets if t.maximum is None or t.minimum is None]
    assert not unbounded, unbounded
    assert all(t.maximum <= PG_INTEGER_MAX for t in targets)
    tools = mcp_integers(client, tenant_a)
    assert {server for server, *_ in tools} == set(MCP_SERVERS)
    unbounded = [
        (server, tool, field) for server, tool, field, schema in tools if "maximum" not in schema
    ]
    assert not unbounded, unbounded
    assert all(schema["maximum"] <= PG_INTEGER_MAX for *_, schema in tools)


def test_one_past_each_maximum_is_422_and_the_maximum_is_accepted(client, tenant_a, document):
    job = create_job(client, tenant_a)
    ids = {"job_id": job["id"], "number": job["number"]}
    stored_round_trips = 0
    for target in openapi_integers(document):
        response, _ = send(client, tenant_a, document, target, past(target.maximum), ids)
        assert response.status_code == 422, (str(target), response.status_code, response.data[:300])
        assert response.json["error"]["type"] == "validation_error"
        assert named(response.json["error"]["fields"], target.name), (str(target), response.json)

        if target.maximum is None:
            continue  # the test above names it
        response, path = send(client, tenant_a, document, target, target.maximum, ids)
        assert response.status_code != 500, (str(target), response.json)
        if response.status_code == 422:
            assert not named(response.json["error"]["fields"], target.name), (
                str(target),
                response.json,
            )
        if (
            target.method in ("put", "patch")
            and target.location == "body"
            and "get" in document["paths"][target.path]
        ):
            # a write of the resource at this path
            assert response.status_code == 200, (str(target), response.json)
            assert target.maximum in values_at(
                client.get(path, headers=tenant_a.headers).json, target.field
            ), str(target)
            stored_round_trips += 1
    # the schedule setting's integers, at their maximum, went through the database
    assert stored_round_trips


def test_the_reported_total_attempts_is_422(client, tenant_a):
    job = create_job(client, tenant_a)
    body = {
        "window_start_time": "09:00:00",
        "window_end_time": "17:00:00",
        "total_attempts": 880781115894619165956743934580359168,
    }
    response = client.put(
        f"/v1/jobs/{job['id']}/schedule-setting",
        headers=tenant_a.headers,
        data=json.dumps(body),
        # json.dumps: orjson (the test client's) stops at 64 bits
        content_type="application/json",
    )
    assert response.status_code == 422 and "total_attempts" in response.json["error"]["fields"], (
        response.json
    )
    response = client.put(
        f"/v1/jobs/{job['id']}/schedule-setting",
        headers=tenant_a.headers,
        json={
            "window_start_time": "09:00:00",
            "window_end_time": "17:00:00",
            "retry_interval": 1.5,
        },
    )
    # not truncated to 1
    assert response.status_code == 422 and "retry_interval" in response.json["error"]["fields"]


def test_mcp_arguments_one_past_each_maximum_are_invalid_params(client, tenant_a):
    tools = mcp_integers(client, tenant_a)
    assert tools
    for server, tool, field, schema in tools:
        name = ".".join(part for part in field if part != "[]")
        reply = call(
            client,
            tenant_a,
            "tools/call",
            {"name": tool, "arguments": placed(field, past(schema.get("maximum")))},
            path=server,
            version="2025-06-18",
        ).json
        assert reply["error"]["code"] == -32602, (tool, name, reply)
        assert named(reply["error"]["data"]["fields"], name), (tool, name, reply)
        if "maximum" not in schema:
            continue  # the test above names it
        reply = call(
            client,
            tenant_a,
            "tools/call",
            {"name": tool, "arguments": placed(field, schema["maximum"])},
            path=server,
            version="2025-06-18",
        ).json
        if "error" in reply:
            assert not named(reply["error"].get("data", {}).get("fields", {}), name), (
                tool,
                name,
                reply,
            )
        # 2025-11-25 and later: the same refusal, as a tool error the model can read
        result = call(
            client,
            tenant_a,
            "tools/call",
            {"name": tool, "arguments": placed(field, schema["maximum"] + 1)},
            path=server,
        ).json["result"]
        assert result["isError"] is True and name in result["content"][0]["text"], (
            tool,
            name,
            result,
        )
