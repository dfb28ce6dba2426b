"""POST /mcp and POST /mcp/sourcing: MCP's Streamable HTTP transport, stateless, answering plain application/json.

HTTP-level checks come in the order MCP clients expect: method (405, by routing), Origin (403), Bearer key (401,
by app.auth), MCP-Protocol-Version (400), Accept (406), JSON (400); then the JSON-RPC dispatcher answers.
"""

from __future__ import annotations

import orjson
from flask import current_app, request
from flask.views import MethodView

from app.api import Blueprint
from app.auth import BEARER
from app.errors import ApiError
from plugins.mcp import protocol
from plugins.mcp.schemas import JsonRpcRequestSchema, JsonRpcResponseSchema, one_or_batch
from plugins.mcp.server import McpServer

VERSION_HEADER = "MCP-Protocol-Version"

JOBS_SERVER = McpServer(
    name="hirekit-jobs",
    title="Hirekit jobs",
    instructions=(
        "Tools for an organisation's recruiting data: list, read, create and update job postings, read applications "
        "and screening questions, generate questions from a job description, and start or read screening calls. "
        "Ids are UUIDs returned by the list and create tools."
    ),
    families=("jobs", "applications", "questions", "calls"),
)

SOURCING_SERVER = McpServer(
    name="hirekit-sourcing",
    title="Hirekit sourcing",
    instructions=(
        "Tools for finding and enriching professional person profiles: people_search and people_search_page take an "
        "Elasticsearch-style query; people_enrich and people_bulk_enrich match a person from identifying attributes."
    ),
    families=("person",),
)


def reject_foreign_origin(endpoint, values) -> None:
    """DNS-rebinding protection: a browser's Origin must be on MCP_ALLOWED_ORIGINS ("*" allows any).

    Registered as a URL value preprocessor because those run before the app's before_request hooks, so a foreign
    page is refused before its (absent) key is even looked at.
    """
    origin = request.headers.get("Origin")
    if origin is None:
        return
    allowed = {entry.strip().rstrip("/").lower() for entry in current_app.config["MCP_ALLOWED_ORIGINS"]}
    if "*" not in allowed and origin.strip().rstrip("/").lower() not in allowed:
        raise ApiError(403, f"Origin {origin} is not allowed to call this MCP server (see MCP_ALLOWED_ORIGINS).")


def describe_invalid_token(response):
    """A 401 names the failure in WWW-Authenticate the way MCP clients read it (RFC 6750 error attributes)."""
    if response.status_code == 401:
        body = response.get_json(silent=True) or {}
        description = (body.get("error") or {}).get("message", "A valid API key is required.")
        description = description.replace("\\", "").replace('"', "'")
        response.headers["WWW-Authenticate"] = (
            f'Bearer realm="hirekit", error="invalid_token", error_description="{description}"'
        )
    return response


def json_rpc_response(reply: protocol.Reply):
    if reply.body is None:
        response = current_app.response_class(status=202)
        del response.headers["Content-Type"]
        return response
    return current_app.response_class(orjson.dumps(reply.body), status=reply.status, mimetype="application/json")


def answer(server: McpServer):
    """Check the transport headers, decode the body and let the dispatcher answer it."""
    header = request.headers.get(VERSION_HEADER)
    version = protocol.VERSION_WITHOUT_HEADER if header is None else header.strip()
    if version not in protocol.SUPPORTED_VERSIONS:
        return json_rpc_response(protocol.invalid_request(
            f"Unsupported {VERSION_HEADER}: {header}. This server speaks {', '.join(protocol.SUPPORTED_VERSIONS)}; "
            "connect with initialize."))
    if request.headers.get("Accept") and not request.accept_mimetypes.accept_json:
        raise ApiError(406, "This server answers application/json: accept it (MCP clients send "
                            "Accept: application/json, text/event-stream).", type="not_acceptable")
    try:
        payload = orjson.loads(request.get_data(cache=False))
    except orjson.JSONDecodeError:
        return json_rpc_response(protocol.parse_error())
    return json_rpc_response(protocol.dispatch(payload, server, version=version))


def server_blueprint(server: McpServer, name: str, path: str, description: str) -> Blueprint:
    """A blueprint answering POST `path` for `server`; the Bearer key and the default rate limit apply to it."""
    blp = Blueprint(name, __name__, url_prefix=path, auth=BEARER, description=description)
    blp.url_value_preprocessor(reject_foreign_origin)
    blp.after_request(describe_invalid_token)
    blp.reads_raw_body = True  # every malformed message is answered as a JSON-RPC error, not the REST error body

    @blp.route("")
    class Endpoint(MethodView):
        provide_automatic_options = False  # only POST: GET, DELETE and OPTIONS answer 405 with Allow: POST

        @blp.doc(
            summary=f"JSON-RPC endpoint of the {server.title} MCP server",
            description=(
                "Model Context Protocol over Streamable HTTP (revisions 2025-11-25, 2025-06-18, 2025-03-26), stateless: "
                "no Mcp-Session-Id, no event stream. Requests answer 200 with one JSON-RPC response; notifications "
                "and client responses answer 202 with no body. A malformed message or an unsupported "
                "MCP-Protocol-Version answers 400 with a JSON-RPC error."
            ),
            requestBody={"required": True, "content": {"application/json": {
                "schema": one_or_batch(JsonRpcRequestSchema, items_checked=False)}}},
        )
        @blp.response(200, one_or_batch(JsonRpcResponseSchema), description="The JSON-RPC response (or an array, for a batch)")
        @blp.alt_response(202, description="A notification or client response was accepted; no body")
        @blp.alt_response(400, schema=JsonRpcResponseSchema,
                          description="Parse error (-32700) or invalid request / unsupported protocol version (-32600)")
        @blp.errors(403, 406)
        def post(self):
            return answer(server)

    return blp


jobs_blp = server_blueprint(JOBS_SERVER, "mcp", "/mcp", "MCP server with the jobs tools, for AI agents")
sourcing_blp = server_blueprint(SOURCING_SERVER, "mcp_sourcing", "/mcp/sourcing",
                                "MCP server with the people search and enrich tools, for AI agents")
