"""An MCP server over the tools of the families it offers: initialize and ping for the handshake
revisions, server/discover for 2026-07-28, tools/list and tools/call for both."""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass

import marshmallow as ma
import peewee as pw
from flask import current_app

from app.security import limits
from app.security.auth import current_tenant_id
from app.errors import ApiError, ExistingRecordConflict, ValidationFailed
from app.plugins import enabled
from plugins.mcp.protocol import (
    HANDSHAKE_VERSIONS,
    INVALID_PARAMS,
    LATEST_HANDSHAKE_VERSION,
    METHOD_NOT_FOUND,
    MODERN_VERSIONS,
    RATE_LIMITED,
    SUPPORTED_VERSIONS,
    RpcError,
)
from plugins.mcp import confirmation, held_confirmation, prompts, resources, scopes
from plugins.mcp.tools import InvalidArguments, Tool, describe_api_error, failure, success

log = logging.getLogger("hirekit.mcp")

# The first revision where arguments that miss the inputSchema are a tool error the model can fix
# (SEP-1303); earlier revisions answer them as JSON-RPC "invalid params".
ARGUMENT_ERRORS_AS_RESULTS_SINCE = "2025-11-25"

CAPABILITIES = {"tools": {"listChanged": False}}
WITH_RESOURCES = {
    **CAPABILITIES,
    "resources": {"listChanged": False},
    "prompts": {"listChanged": False},
}
# 2026-07-28 lets clients cache discover and list answers: the tool list changes only with a
# deployment's plugins. It is the same for every key, but only callers with a key may read it, so
# shared caches must not serve it ("private").
LIST_TTL_MS = 5 * 60 * 1000
CACHE_SCOPE = "private"

STATELESS_NOTE = (
    "This server is stateless: every request stands alone and is authorised by its Bearer API key "
    "or "
    "OAuth access token; records are scoped to its organisation, and a token sees only the tools "
    "its "
    "scopes allow."
)


@dataclass(frozen=True)
class McpServer:
    """One MCP endpoint. `families` name the tool modules (plugins/mcp/tools/<family>.py) it may
    offer."""

    name: str
    title: str
    instructions: str
    families: tuple[str, ...]
    # resources (transcripts, scorecards, job descriptions) and prompts
    offers_resources: bool = False

    @property
    def capabilities(self) -> dict:
        return WITH_RESOURCES if self.offers_resources else CAPABILITIES

    def tools(self) -> list[Tool]:
        """The tools of the families enabled in this app, in a stable order; computed once per
        app."""
        cache = current_app.extensions.setdefault("hirekit_mcp_tools", {})
        if self.name not in cache:
            tools: list[Tool] = []
            for family in self.families:
                if not enabled(current_app, family):
                    continue
                module = importlib.import_module(f"plugins.mcp.tools.{family}")
                tools.extend(tool for tool in module.TOOLS if enabled(current_app, tool.plugin))
            cache[self.name] = {tool.name: tool for tool in tools}
        return list(cache[self.name].values())

    def tool(self, name: str) -> Tool | None:
        self.tools()
        return current_app.extensions["hirekit_mcp_tools"][self.name].get(name)

    def allowed_tools(self) -> list[Tool]:
        """The tools the caller's scopes allow (all of them for an API key)."""
        return [tool for tool in self.tools() if scopes.allows(tool_scope(tool))]

    def missing_scope(self, method, params: dict) -> str | None:
        """The scope a request needs that the caller lacks, or None (also for requests of no scoped
        item)."""
        if scopes.granted() is None:
            return None
        needed = None
        if method == "tools/call":
            tool = self.tool(params.get("name")) if isinstance(params.get("name"), str) else None
            needed = tool_scope(tool) if tool is not None else None
        elif method == "resources/read" and self.offers_resources:
            needed = resources.required_scope(params.get("uri"))
        elif method == "prompts/get" and self.offers_resources:
            prompt = prompts.prompt_named(params.get("name"))
            needed = prompt.scope if prompt is not None else None
        return needed if needed is not None and not scopes.allows(needed) else None

    def family_limit(self, tool: Tool) -> str | None:
        """The setting of the limit the REST routes of the tool's family meet besides the default
        (PERSON_RATE_LIMIT for the people tools), which a call of the tool meets too; None for
        families without one."""
        plugin = current_app.extensions["hirekit_plugins"].get(tool.plugin)
        return plugin.rate_limit if plugin is not None else None

    def admit_batched(self) -> None:
        """A batch's message beyond its first costs one hit of the default limit, as the POST it
        could have been."""
        refuse_over_limit(limits.DEFAULT_LIMIT, "")

    # ---- JSON-RPC methods ------------------------------------------------

    def handle_request(self, method: str, params: dict, *, version: str) -> dict:
        modern = version in MODERN_VERSIONS
        if method == "tools/list":
            return self.list_tools(params, cacheable=modern)
        if method == "tools/call":
            return self.call_tool(params, version=version)
        if self.offers_resources and method in RESOURCE_METHODS:
            return self.answer_resources(method, params, cacheable=modern)
        if modern and method == "server/discover":
            return self.discover()
        if not modern and method == "initialize":
            return self.initialize(params)
        if not modern and method == "ping":
            return {}
        if modern and method in ("initialize", "ping"):
            raise RpcError(
                METHOD_NOT_FOUND,
                f"Method not found: {method} is not part of protocol version {version}, "
                "which has no handshake (server/discover describes this server)",
            )
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")

    def server_info(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "version": current_app.config["API_VERSION"],
        }

    def discover(self) -> dict:
        """server/discover (2026-07-28): every version this server speaks, newest first, and what it
        offers."""
        return {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": self.capabilities,
            "instructions": f"{self.instructions} {STATELESS_NOTE}",
            "ttlMs": LIST_TTL_MS,
            "cacheScope": CACHE_SCOPE,
        }

    def handle_notification(self, method: str, params: dict) -> None:
        """notifications/initialized, cancelled and the rest need no action: the server keeps no
        session state."""

    def initialize(self, params: dict) -> dict:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params: initialize needs protocolVersion (a string)",
                {"supported": list(HANDSHAKE_VERSIONS)},
            )
        return {
            "protocolVersion": requested
            if requested in HANDSHAKE_VERSIONS
            else LATEST_HANDSHAKE_VERSION,
            "capabilities": self.capabilities,
            "serverInfo": self.server_info(),
            "instructions": f"{self.instructions} {STATELESS_NOTE}",
        }

    def list_tools(self, params: dict, *, cacheable: bool = False) -> dict:
        cursor = params.get("cursor")
        if cursor is not None:
            # Every tool fits on one page, so this server never hands out a cursor to come back
            # with.
            raise RpcError(
                INVALID_PARAMS, "Invalid params: unknown cursor (tools/list has a single page)"
            )
        listed = {"tools": [tool.definition for tool in self.allowed_tools()]}
        if cacheable:
            listed.update(ttlMs=LIST_TTL_MS, cacheScope=CACHE_SCOPE)
        return listed

    def call_tool(self, params: dict, *, version: str) -> dict:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "Invalid params: tools/call needs name (a string)")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, f"Invalid params: arguments of {name} must be an object")
        tool = self.tool(name)
        if tool is None:
            raise RpcError(
                INVALID_PARAMS,
                f"Unknown tool: {name}",
                {"available": [t.name for t in self.allowed_tools()]},
            )
        if not scopes.allows(tool_scope(tool)):
            raise RpcError(
                INVALID_PARAMS,
                f"The tool {name} needs the scope {tool_scope(tool)}, which this access "
                "token was not granted",
                {"scope": tool_scope(tool)},
            )
        family_limit = self.family_limit(tool)
        if family_limit:
            refuse_over_limit(family_limit, f", shared with the {tool.plugin} REST routes")
        return tool_outcome(
            name, version, lambda: self.confirmed_call(tool, arguments, params, version)
        )

    def confirmed_call(self, tool: Tool, arguments: dict, params: dict, version: str):
        """The tool's result, once the person who authorized an OAuth client has confirmed a tool
        that acts in the world; until then what asks them (an input_required result, or a stream
        that asks and then runs it)."""
        tenant_id = current_tenant_id()

        def run() -> dict:
            return success(tool.call(tenant_id, arguments))

        if tool.confirm is None or scopes.granted() is None:
            return run()
        pending = confirmation.answer_before_running(
            tool,
            tenant_id,
            arguments,
            params,
            version=version,
            run=lambda: tool_outcome(tool.name, version, run),
        )
        return run() if pending is None else pending

    def handle_response(self, message: dict) -> None:
        held_confirmation.deliver(message)

    def answer_resources(self, method: str, params: dict, *, cacheable: bool) -> dict:
        """resources/list, resources/templates/list, resources/read, prompts/list and
        prompts/get."""
        tenant_id = current_tenant_id()
        if params.get("cursor") is not None and method.endswith("list"):
            raise RpcError(
                INVALID_PARAMS, f"Invalid params: unknown cursor ({method} has a single page)"
            )
        if method == "resources/read":
            return resources.read_resource(tenant_id, params.get("uri"))
        if method == "prompts/get":
            return prompts.get_prompt(tenant_id, params)
        if method == "resources/list":
            listed = {"resources": resources.list_resources(tenant_id)}
        elif method == "resources/templates/list":
            listed = {
                "resourceTemplates": [kind.definition() for kind in resources.available_kinds()]
            }
        else:
            listed = {"prompts": [prompt.definition() for prompt in prompts.available_prompts()]}
        if cacheable:  # resources/list follows the records: clients ask again rather than keep it
            listed.update(
                ttlMs=0 if method == "resources/list" else LIST_TTL_MS, cacheScope=CACHE_SCOPE
            )
        return listed


RESOURCE_METHODS = frozenset(
    {"resources/list", "resources/templates/list", "resources/read", "prompts/list", "prompts/get"}
)


def tool_outcome(name: str, version: str, action):
    """`action()`'s tool result, with the failures a tool meets answered as MCP says: argument
    errors as a result the model can fix (or -32602 before 2025-11-25), service refusals as tool
    errors, rate limits as -32029."""
    try:
        return action()
    except InvalidArguments as error:
        if version >= ARGUMENT_ERRORS_AS_RESULTS_SINCE:
            return failure(f"{error} Check the tool's inputSchema and call it again.")
        raise RpcError(INVALID_PARAMS, str(error), {"fields": error.fields}) from None
    except ApiError as error:
        # a batch tool's items past the rate limit: as a message over it is answered
        if error.status == 429:
            retry_after = int(error.headers.get("Retry-After", "1"))
            raise RpcError(
                RATE_LIMITED,
                f"{error.message} Retry in {retry_after} s.",
                {"retry_after": retry_after},
            ) from None
        if error.status >= 500 and error.status != 503:
            log.warning("tool %s failed with %s: %s", name, error.status, error.message)
        return failure(describe_api_error(error))
    # a service validating beyond the argument schema: REST's 422
    except ma.ValidationError as error:
        return failure(describe_api_error(ValidationFailed.of(error)))
    except pw.IntegrityError:
        return failure(describe_api_error(ExistingRecordConflict()))
    except (pw.OperationalError, pw.InterfaceError) as error:
        log.error("database unavailable during tool %s: %s", name, error)
        return failure("The database is not reachable right now; retry shortly.")


def tool_scope(tool: Tool) -> str:
    return scopes.tool_scope(tool.plugin, tool.read_only)


def refuse_over_limit(config_name: str, shared: str) -> None:
    """Count one hit of the limit `config_name` for the caller; over it, the JSON-RPC error naming
    the limit and when to retry (HTTP 429 with Retry-After when it is the POST's only message)."""
    hit = limits.count_hit(config_name)
    if hit is not None and not hit.allowed:
        raise RpcError(
            RATE_LIMITED,
            f"Rate limit exceeded ({hit.limit}{shared}): retry in {hit.retry_after} s. "
            "Higher limits are available on request.",
            {"retry_after": hit.retry_after, "limit": str(hit.limit)},
        )
