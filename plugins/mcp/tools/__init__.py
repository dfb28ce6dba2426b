"""An MCP tool: a family's service function, its marshmallow argument schema (the inputSchema) and
its record schema (the outputSchema).

The tool modules beside this one (jobs.py, applications.py, ...) hold each family's tools; they call
the same services and dump with the same schemas as the REST routes, so an agent and an ATS see the
same records.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import marshmallow as ma
import orjson

from app.http import idempotency
from app.data import tombstones
from app.http.api import page_schema
from app.errors import ApiError, flatten_fields
from app.http.fields import load_json
from app.http.jsonschema import DUMP, LOAD, schema_to_json_schema
from app.http.nul_guard import MESSAGE as NUL_MESSAGE
from app.http.nul_guard import paths_with_nul


class InvalidArguments(Exception):
    """The arguments do not match the tool's inputSchema; carries marshmallow's per-field
    messages."""

    def __init__(self, tool: str, messages):
        self.fields = flatten_fields(
            messages if isinstance(messages, dict) else {"_schema": messages}
        )
        super().__init__(f"Invalid arguments for {tool}: {describe_fields(self.fields)}.")


@dataclass(frozen=True)
class Tool:
    """One tool. `run(tenant_id, arguments)` gets the loaded arguments and returns what `result`
    dumps."""

    name: str
    title: str
    description: str
    arguments: type[ma.Schema]
    result: type[ma.Schema]
    run: Callable[[str, dict], object]
    # the family whose services the tool calls; the tool exists only where that plugin is enabled
    plugin: str
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    annotations: dict = field(default_factory=dict)
    # For a tool acting in the world (placing a phone call): confirm(tenant_id, arguments) is the
    # question the person who authorized an OAuth client must answer yes to before it runs
    # (plugins.mcp.confirmation)
    confirm: Callable[[str, dict], str] | None = None

    @cached_property
    def _argument_schema(self) -> ma.Schema:
        return self.arguments()

    @cached_property
    def _result_schema(self) -> ma.Schema:
        return self.result()

    @cached_property
    def definition(self) -> dict:
        """The tools/list entry: name, description, both schemas generated from marshmallow, and
        behaviour hints."""
        hints = {"title": self.title, "readOnlyHint": self.read_only, "openWorldHint": False}
        if not self.read_only:
            hints.update(destructiveHint=self.destructive, idempotentHint=self.idempotent)
        hints.update(self.annotations)
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self._input_schema(),
            "outputSchema": schema_to_json_schema(self._result_schema, mode=DUMP),
            "annotations": hints,
        }

    def _input_schema(self) -> dict:
        """The arguments' JSON Schema; a write tool also takes the optional idempotency_key."""
        schema = schema_to_json_schema(self._argument_schema, mode=LOAD)
        if not self.read_only:
            schema.setdefault("properties", {})[IDEMPOTENCY_ARGUMENT] = IDEMPOTENCY_KEY_SCHEMA
        return schema

    def call(self, tenant_id: str, arguments: dict) -> dict:
        """The tool's structured result; InvalidArguments when they do not fit, ApiError on a domain
        failure. A write tool called with an idempotency_key runs once per key: a retry with the
        same arguments gets the first result (or the first failure), other arguments with the same
        key fail (app.http.idempotency). A read tool ignores one (keys apply to writes that change
        state): it runs every time and nothing is stored. NUL characters anywhere in the arguments
        are invalid (PostgreSQL text cannot hold them), as app.http.nul_guard refuses them in REST
        bodies."""
        try:
            with_nul = paths_with_nul(arguments)
        # no tool takes arguments nested anywhere near this deep (JSON parsing allows ~1,000)
        except RecursionError:
            raise InvalidArguments(self.name, {"_schema": ["Nested too deeply to read."]}) from None
        if with_nul:
            raise InvalidArguments(self.name, {path: [NUL_MESSAGE] for path in with_nul})
        if IDEMPOTENCY_ARGUMENT not in arguments:
            return self._call(tenant_id, arguments)
        arguments = dict(arguments)
        key = arguments.pop(IDEMPOTENCY_ARGUMENT)
        if self.read_only:
            return self._call(tenant_id, arguments)
        if not isinstance(key, str):
            raise InvalidArguments(self.name, {IDEMPOTENCY_ARGUMENT: ["Not a valid string."]})
        request_fingerprint = idempotency.fingerprint(
            "mcp", self.name, orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)
        )
        return idempotency.run_once(
            tenant_id, key, request_fingerprint, lambda: self._call(tenant_id, arguments)
        )

    def _call(self, tenant_id: str, arguments: dict) -> dict:
        try:
            # integers and booleans exact, blank is absent
            loaded = load_json(self._argument_schema, arguments)
        except ma.ValidationError as error:
            raise InvalidArguments(self.name, error.messages) from None
        return self._result_schema.dump(self.run(tenant_id, loaded))


IDEMPOTENCY_ARGUMENT = "idempotency_key"
IDEMPOTENCY_KEY_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "maxLength": idempotency.MAX_KEY_LENGTH,
    "description": "Optional: a unique key (e.g. a UUID) that makes this call safe to retry. A "
    "retry with the same key and "
    "the same arguments within 24 hours returns the first call's result and changes nothing again; "
    "the "
    "same key with other arguments fails.",
}


def success(structured: dict) -> dict:
    """A tools/call result: the data as JSON text for any client, and as structuredContent for those
    that read it."""
    return {
        "content": [{"type": "text", "text": orjson.dumps(structured).decode()}],
        "structuredContent": structured,
        "isError": False,
    }


def failure(text: str) -> dict:
    """A tool execution error: isError with a text the model can read and act on."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def describe_fields(fields: dict) -> str:
    """Every field's problems in one line ("title: Not a valid string; industry: Missing data ..."):
    a model fixes all at once."""
    return "; ".join(
        f"{name}: {' '.join(m.rstrip('.') for m in messages)}"
        for name, messages in flatten_fields(fields).items()
    )


def describe_api_error(error: ApiError) -> str:
    """The REST error as a sentence for a model: the message, per-field problems, the id of a
    conflicting record."""
    text = error.message
    if error.fields:
        details = describe_fields(error.fields)
        if details not in text:
            text = f"{text} ({details})"
    if error.extra.get("existing_id"):
        text = f"{text}; the existing record's id is {error.extra['existing_id']}"
    if error.status == 503:
        text = (
            f"{text} This is a service-side condition; retrying later or asking an operator "
            "may help."
        )
    return text


def with_defaults(schema: type[ma.Schema], name: str, **defaults) -> type[ma.Schema]:
    """A subclass of `schema` whose named fields become optional with a default (e.g. page=1,
    size=20 for an agent)."""
    overrides = {}
    for field_name, default in defaults.items():
        original = schema().declared_fields[field_name]
        relaxed = copy.copy(original)
        relaxed.required = False
        relaxed.load_default = default
        relaxed.metadata = {**original.metadata}
        overrides[field_name] = relaxed
    return type(name, (schema,), overrides)


def with_fields(schema: type[ma.Schema], name: str, **fields) -> type[ma.Schema]:
    """A subclass of `schema` with extra fields (e.g. the job_id a REST route takes from its
    path)."""
    return type(name, (schema,), fields)


def list_tool(
    plugin: str, filters: type[ma.Schema], record: type[ma.Schema], list_records, description: str
) -> Tool:
    """The read-only `list_<plugin>` tool ("List <plugin>"): the family's REST list filters with
    page 1 and size 20 as defaults for an agent, answered as one page of `record`s by
    `list_records(tenant_id, **filters)`."""
    return Tool(
        name=f"list_{plugin}",
        title=f"List {plugin}",
        description=description,
        arguments=with_defaults(filters, f"List{plugin.title()}ArgsSchema", page=1, size=20),
        result=page_schema(record),
        run=lambda tenant_id, args: _live_records(list_records, tenant_id, args),
        plugin=plugin,
    )


def _live_records(list_records, tenant_id: str, args: dict):
    """A list tool's answer: erased records are gone for an agent (no tombstones, which sync walks
    over REST show)."""
    with tombstones.hidden():
        return list_records(tenant_id, **args)


def get_tool(
    plugin: str,
    name: str,
    title: str,
    which: type[ma.Schema],
    record: type[ma.Schema],
    get_record,
    description: str,
) -> Tool:
    """A read-only tool answering one `record` by the id in `which` (a schema of that one field):
    get_record(tenant_id, id)."""
    (id_field,) = which().declared_fields
    return Tool(
        name=name,
        title=title,
        description=description,
        arguments=which,
        result=record,
        run=lambda tenant_id, args: get_record(tenant_id, args[id_field]),
        plugin=plugin,
    )
