"""The OpenAPI document as a versioned contract: the snapshot kept in the repository
(docs/openapi.json), the document the code builds (every family on, default settings, whatever the
environment says), and the breaking changes between two documents, which CHANGELOG.md must name
before a snapshot showing them is written or accepted."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "docs" / "openapi.json"
CHANGELOG = ROOT / "CHANGELOG.md"
METHODS = ("get", "put", "post", "patch", "delete")
REGENERATE = "flask --app wsgi openapi write"


def built_document(create_app) -> dict:
    """/openapi.json as `create_app` (app.create_app) builds it with every family on and the default
    settings (the environment ignored)."""
    from app.config import load_config

    config = load_config(
        {
            "PLUGINS": None,
            "SECRET_KEY": "openapi-snapshot-" + "x" * 32,
            "DATABASE_URL": "sqlite:///:memory:",
            "LOG_LEVEL": "WARNING",
        },
        environ={},
    )
    return create_app(config).test_client().get("/openapi.json").json


def serialized(document: dict) -> str:
    """The snapshot's text: sorted keys and two-space indents, so a change reads as a small diff."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def read_snapshot(path: Path = SNAPSHOT) -> dict | None:
    return json.loads(path.read_text()) if path.exists() else None


def breaking_changes(old: dict, new: dict) -> list[tuple[str, str]]:
    """(subject, change) for every change of `new` that can break a client written against `old`: a
    removed or renamed path, operation or component, a removed field or parameter, a narrowed type
    or enum, a new required request field or parameter, an operation's request or response body
    becoming another component. The subject (`GET /v1/jobs`, `Job.title`, `PersonSearch`) is what
    CHANGELOG.md must name."""
    found: list[tuple[str, str]] = []
    old_paths, new_paths = old.get("paths", {}), new.get("paths", {})
    for path, old_item in old_paths.items():
        if path not in new_paths:
            found.append((path, "path removed"))
            continue
        for method in METHODS:
            if method in old_item:
                found += _operation_changes(
                    f"{method.upper()} {path}", old_item[method], new_paths[path].get(method)
                )
    old_schemas = old.get("components", {}).get("schemas", {})
    new_schemas = new.get("components", {}).get("schemas", {})
    requests = request_components(new)
    for name, old_schema in old_schemas.items():
        if name not in new_schemas:
            found.append((name, "component removed or renamed"))
            continue
        found += _schema_changes(name, old_schema, new_schemas[name], is_request=name in requests)
    return found


def _operation_changes(subject: str, old: dict, new: dict | None) -> list[tuple[str, str]]:
    if new is None:
        return [(subject, "operation removed")]
    found = []
    if old.get("operationId") != new.get("operationId"):
        found.append(
            (subject, f"operationId {old.get('operationId')} renamed {new.get('operationId')}")
        )
    old_parameters = {
        (p.get("in"), p.get("name")): p for p in old.get("parameters", ()) if "name" in p
    }
    new_parameters = {
        (p.get("in"), p.get("name")): p for p in new.get("parameters", ()) if "name" in p
    }
    for key, parameter in new_parameters.items():
        was = old_parameters.get(key)
        if parameter.get("required") and not (was or {}).get("required"):
            found.append((subject, f"{key[0]} parameter {key[1]} now required"))
    for key in old_parameters.keys() - new_parameters.keys():
        found.append((subject, f"{key[0]} parameter {key[1]} removed"))
    new_bodies = body_components(new)
    for where, component in body_components(old).items():
        # a generated client's type for it changes
        if where in new_bodies and new_bodies[where] != component:
            found.append((subject, f"{where} component {component} changed to {new_bodies[where]}"))
    return found


def body_components(operation: dict) -> dict[str, str]:
    """The component each body of an operation is (its request body's and each response's, by
    content type): what a generated client types the body as. An array of a component counts as that
    component's list."""
    bodies = {"request body": (operation.get("requestBody") or {}).get("content", {})}
    bodies.update(
        {
            f"response {status}": (response or {}).get("content", {})
            for status, response in operation.get("responses", {}).items()
            if isinstance(response, dict)
        }
    )
    found = {}
    for where, content in bodies.items():
        for content_type, media in content.items():
            schema = (media or {}).get("schema") or {}
            if "$ref" in schema:
                found[f"{where} {content_type}"] = schema["$ref"].rsplit("/", 1)[-1]
            elif schema.get("type") == "array" and "$ref" in schema.get("items", {}):
                found[f"{where} {content_type}"] = (
                    f"list of {schema['items']['$ref'].rsplit('/', 1)[-1]}"
                )
    return found


def _schema_changes(name: str, old: dict, new: dict, *, is_request: bool) -> list[tuple[str, str]]:
    found = []
    old_properties, new_properties = old.get("properties", {}), new.get("properties", {})
    for field, old_field in old_properties.items():
        subject = f"{name}.{field}"
        if field not in new_properties:
            found.append((subject, "field removed"))
            continue
        new_field = new_properties[field]
        if _types(old_field) - _types(new_field) and _types(new_field):
            found.append(
                (
                    subject,
                    "type "
                    f"narrowed from {sorted(_types(old_field))} to {sorted(_types(new_field))}",
                )
            )
        if "enum" in new_field and set(map(repr, new_field["enum"])) < set(
            map(repr, old_field.get("enum", new_field["enum"]))
        ):
            found.append((subject, "enum narrowed"))
    if is_request:
        for field in set(new.get("required", ())) - set(old.get("required", ())):
            found.append((f"{name}.{field}", "request field now required"))
    return found


def _types(schema: dict) -> set[str]:
    """The JSON types a property schema allows (its $ref counts as one type)."""
    if "$ref" in schema:
        return {schema["$ref"]}
    if "type" in schema:
        return {schema["type"]} | ({"null"} if schema.get("nullable") else set())
    return set().union(
        *(_types(option) for key in ("anyOf", "oneOf", "allOf") for option in schema.get(key, ()))
    )


def request_components(document: dict) -> set[str]:
    """Component schemas a client sends: those request bodies and parameters refer to, directly or
    nested."""
    schemas = document.get("components", {}).get("schemas", {})
    pending = [
        match
        for item in document.get("paths", {}).values()
        for method in METHODS
        if method in item
        for match in _refs({key: item[method].get(key) for key in ("requestBody", "parameters")})
    ]
    found: set[str] = set()
    while pending:
        name = pending.pop()
        if name not in found and name in schemas:
            found.add(name)
            pending += _refs(schemas[name])
    return found


def _refs(value) -> list[str]:
    return re.findall(r'"#/components/schemas/([^"]+)"', json.dumps(value))


def unnamed_in_changelog(
    changes: list[tuple[str, str]], changelog: Path | None = None
) -> list[tuple[str, str]]:
    """The breaking changes whose subject CHANGELOG.md does not name in backticks (`GET /v1/jobs`,
    `Job.title`)."""
    changelog = changelog or CHANGELOG
    text = changelog.read_text() if changelog.exists() else ""
    return [(subject, change) for subject, change in changes if f"`{subject}`" not in text]


def describe(changes: list[tuple[str, str]]) -> str:
    return "\n".join(f"  `{subject}`: {change}" for subject, change in changes)
