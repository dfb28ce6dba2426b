"""POST /mcp and POST /mcp/sourcing: MCP's Streamable HTTP transport, answering plain
application/json, and an event stream only where a handshake client's person must confirm a tool
first (plugins.mcp.held_confirmation).

HTTP-level checks come in the order MCP clients expect: method (405, by routing), Origin (403),
Bearer key (401, by app.security.auth), MCP-Protocol-Version (400), Accept (406), JSON (400); then
the JSON-RPC dispatcher answers.

The MCP-Protocol-Version header picks the era, as the SDKs route: absent or a handshake revision,
the initialize-era dispatcher answers exactly as before 2026-07-28; any other value takes the
per-request-envelope path, which serves 2026-07-28 and answers anything else -32022 with the
versions it does serve.
"""

from __future__ import annotations

import orjson
from flask import current_app, g, request, stream_with_context
from flask.views import MethodView

from app.http.api import Blueprint, ErrorSchema
from app.security.auth import BEARER
from app.errors import ApiError
from app.http.request_json import loads_request
from plugins.mcp import protocol, sessions
from plugins.mcp.schemas import JsonRpcRequestSchema, JsonRpcResponseSchema, one_or_batch
from plugins.mcp.server import McpServer

JOBS_SERVER = McpServer(
    name="hirekit-jobs",
    title="Hirekit jobs",
    instructions=(
        "Tools for an organisation's recruiting data: list, read, create and update job postings, "
        "candidates and "
        "applications, read screening questions, generate questions from a job description, and "
        "start or read "
        "screening calls; resources hold job descriptions, questions, call transcripts and "
        "scorecards. "
        "Ids are UUIDs returned by the list and create tools."
    ),
    families=("jobs", "candidates", "applications", "questions", "calls"),
    offers_resources=True,
)

SOURCING_SERVER = McpServer(
    name="hirekit-sourcing",
    title="Hirekit sourcing",
    instructions=(
        "Tools for finding and enriching professional person profiles: people_search and "
        "people_search_page take an "
        "Elasticsearch-style query; people_enrich and people_bulk_enrich match a person from "
        "identifying attributes."
    ),
    families=("person",),
)


def reject_foreign_origin(endpoint, values) -> None:
    """DNS-rebinding protection: a browser's Origin must be on MCP_ALLOWED_ORIGINS ("*" allows any).

    Registered as a URL value preprocessor because those run before the app's before_request hooks,
    so a foreign page is refused before its (absent) key is even looked at.
    """
    origin = request.headers.get("Origin")
    if origin is None:
        return
    allowed = {
        entry.strip().rstrip("/").lower() for entry in current_app.config["MCP_ALLOWED_ORIGINS"]
    }
    if "*" not in allowed and origin.strip().rstrip("/").lower() not in allowed:
        raise ApiError(
            403,
            f"Origin {origin} is not allowed to call this MCP server (see MCP_ALLOWED_ORIGINS).",
        )


def authorization_challenge(path: str) -> str:
    """What the OAuth authorization server adds to this endpoint's challenges (where its Protected
    Resource Metadata is, which scopes to ask for), or "" when the oauth family is off and only API
    keys are taken."""
    attributes = current_app.extensions.get("hirekit_mcp_challenge")
    return attributes(path) if attributes is not None else ""


def describe_invalid_token(path: str):
    """A 401 names the failure in WWW-Authenticate the way MCP clients read it (RFC 6750 error
    attributes, for a request that sent credentials), and, with OAuth on, where the endpoint's
    Protected Resource Metadata is (RFC 9728) and the scopes it offers."""

    def describe(response):
        if response.status_code == 401:
            challenge = authorization_challenge(path)
            header = 'Bearer realm="hirekit"'
            # no credentials: no error code (RFC 6750 3.1)
            if request.headers.get("Authorization") is not None:
                body = response.get_json(silent=True) or {}
                description = (body.get("error") or {}).get(
                    "message", "A valid API key is required."
                )
                description = description.replace("\\", "").replace('"', "'")
                header += f', error="invalid_token", error_description="{description}"'
            response.headers["WWW-Authenticate"] = header + (f", {challenge}" if challenge else "")
        return response

    return describe


def refuse_insufficient_scope(server: McpServer, path: str, payload) -> None:
    """A lone request for a tool, resource or prompt its access token's scopes do not cover: HTTP
    403 with `WWW-Authenticate: Bearer error="insufficient_scope"` naming the scope needed, as MCP
    clients step up on it."""
    if not isinstance(payload, dict) or not isinstance(payload.get("params", {}), dict):
        return
    needed = server.missing_scope(payload.get("method"), payload.get("params") or {})
    if needed is None:
        return
    message = (
        f"This access token does not carry the scope {needed}, which {payload.get('method')} of "
        "this item "
        "needs: authorize again asking for it."
    )
    challenge = authorization_challenge(path)
    resource_metadata = next(
        (part for part in challenge.split(", ") if part.startswith("resource_metadata=")), ""
    )
    header = f'Bearer error="insufficient_scope", scope="{needed}", error_description="{message}"'
    raise ApiError(
        403,
        message,
        type="insufficient_scope",
        headers={
            "WWW-Authenticate": header + (f", {resource_metadata}" if resource_metadata else "")
        },
    )


def serialize(body: dict | list) -> bytes:
    """A batch's answers are serialized one message at a time: orjson holds the interpreter lock for
    a whole call, and a batch of 20 people searches answers ~11 MB, which held every other request
    thread of the worker for 100-500 ms."""
    if isinstance(body, list):
        return b"[" + b",".join(orjson.dumps(message) for message in body) + b"]"
    return orjson.dumps(body)


def event_stream(messages):
    """Server-sent events of JSON-RPC messages, a comment for each keep-alive (None)."""
    for message in messages:
        yield (
            b": keep-alive\n\n"
            if message is None
            else b"event: message\ndata: " + orjson.dumps(message) + b"\n\n"
        )


def json_rpc_response(reply: protocol.Reply):
    if reply.stream is not None:
        response = current_app.response_class(
            stream_with_context(event_stream(reply.stream)), mimetype="text/event-stream"
        )
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Accel-Buffering"] = "no"  # nginx passes each event on as it comes
        return response
    if reply.body is None:
        response = current_app.response_class(status=202)
        del response.headers["Content-Type"]
        return response
    response = current_app.response_class(
        serialize(reply.body), status=reply.status, mimetype="application/json"
    )
    # a lone request over its limit: the error's data says when to retry, and so does HTTP
    if reply.status == 429:
        response.headers["Retry-After"] = str(reply.body["error"]["data"]["retry_after"])
    return response


def answer(server: McpServer, path: str):
    """Check the transport headers, decode the body and let the dispatcher answer it."""
    header = request.headers.get(protocol.VERSION_HEADER)
    version = protocol.VERSION_WITHOUT_HEADER if header is None else header.strip()
    modern = version not in protocol.HANDSHAKE_VERSIONS
    if modern and version not in protocol.MODERN_VERSIONS:
        return json_rpc_response(protocol.unsupported_version(version))
    if request.headers.get("Accept") and not request.accept_mimetypes.accept_json:
        raise ApiError(
            406,
            "This server answers application/json: accept it (MCP clients send "
            "Accept: application/json, text/event-stream).",
            type="not_acceptable",
        )
    try:
        # the bounds every request body meets (nesting depth)
        payload = loads_request(request.get_data(cache=False))
    except orjson.JSONDecodeError:
        return json_rpc_response(protocol.parse_error())
    # nested past MAX_JSON_DEPTH, a number out of range, a lone surrogate
    except ApiError as refusal:
        return json_rpc_response(protocol.invalid_request(refusal.message))
    refuse_insufficient_scope(server, path, payload)
    if modern:
        headers = {name: request.headers.get(name) for name in protocol.ROUTING_HEADERS}
        return json_rpc_response(
            protocol.dispatch_modern(payload, server, version=version, headers=headers)
        )
    g.mcp_session = sessions.current_session(version)
    reply = protocol.dispatch(payload, server, version=version)
    response = json_rpc_response(reply)
    session_id = started_session(payload, reply)
    if session_id is not None:
        response.headers[sessions.SESSION_HEADER] = session_id
    return response


def started_session(payload, reply: protocol.Reply) -> str | None:
    """The Mcp-Session-Id an initialize answer starts, for a client that can be asked
    (plugins.mcp.sessions)."""
    if (
        not isinstance(payload, dict)
        or payload.get("method") != "initialize"
        or reply.status != 200
    ):
        return None
    result = reply.body.get("result") if isinstance(reply.body, dict) else None
    params = payload.get("params")
    if not isinstance(result, dict) or not isinstance(params, dict):
        return None
    return sessions.session_id_for(params, result["protocolVersion"])


def server_blueprint(
    server: McpServer, name: str, path: str, description: str, operation_id: str
) -> Blueprint:
    """A blueprint answering POST `path` for `server`; the Bearer key and the default rate limit
    apply to it."""
    # reads_raw_body: every malformed message is answered as a JSON-RPC error, not the REST error
    # body (app.http.nul_guard)
    blp = Blueprint(
        name, __name__, url_prefix=path, auth=BEARER, description=description, reads_raw_body=True
    )
    blp.url_value_preprocessor(reject_foreign_origin)
    blp.after_request(describe_invalid_token(path))

    @blp.route("")
    class Endpoint(MethodView):
        # only POST (and OPTIONS, a browser's preflight): GET and DELETE answer 405 with Allow:
        # POST, OPTIONS

        @blp.doc(
            summary=f"JSON-RPC endpoint of the {server.title} MCP server",
            description=(
                "Model Context Protocol over Streamable HTTP. Answers are application/json, except "
                "a tools/call that "
                "must ask the person who authorized an OAuth client first on 2025-11-25 or "
                "2025-06-18 (placing a "
                "call): it answers text/event-stream carrying an elicitation/create request, then "
                "the tool's result "
                "once the client POSTs the person's answer (202). Only such clients (OAuth, "
                "elicitation declared at "
                "initialize) get an Mcp-Session-Id, a signed token they send back; a session id "
                "this server does not "
                "recognise for the caller answers 404 (session_not_found), and the client "
                "initializes again. "
                "Revision 2026-07-28 (server/discover, tools/list, tools/call; every request "
                "carries "
                "params._meta with io.modelcontextprotocol/protocolVersion and "
                "io.modelcontextprotocol/clientCapabilities "
                "and the MCP-Protocol-Version, Mcp-Method and, for tools/call, Mcp-Name headers, "
                "equal to the body) and "
                "the handshake revisions 2025-11-25, 2025-06-18 and 2025-03-26 (initialize, ping, "
                "tools/list, "
                "tools/call), from the same tools. Requests answer 200 with one JSON-RPC response; "
                "notifications and "
                "client responses 202 with no body. Handshake revisions: a malformed message "
                "answers 400 (-32700, "
                "-32600), other errors ride on 200. 2026-07-28: malformed message, missing _meta "
                "(-32602), a header "
                "that disagrees with the body (-32020) or an unsupported MCP-Protocol-Version "
                "(-32022, data.supported "
                "lists the served versions) answer 400; an unknown method 404 (-32601). Every "
                "2026-07-28 result "
                "carries resultType \"complete\" and "
                "_meta[\"io.modelcontextprotocol/serverInfo\"]; server/discover "
                "and tools/list carry ttlMs and cacheScope. "
                f"Batches (2025-03-26 only) hold at most {protocol.MAX_BATCH_LENGTH} messages; a "
                "longer one answers "
                "413 with one -32600 error (data: max_batch_length, received) and none of it runs. "
                "Rate limits: the POST counts one request against the key's RATE_LIMIT, as every "
                "route does (over "
                "it: 429 in the REST error body); each further message of a batch counts one more, "
                "and every "
                "tools/call of a tool whose REST family has its own limit (the people tools: "
                "PERSON_RATE_LIMIT, the "
                "counter the person routes use) counts one against that limit too, so a batch "
                "costs what its "
                "messages POSTed one by one would. A request over a limit is answered "
                f"{protocol.RATE_LIMITED} (data: "
                "retry_after in seconds, limit) in its place in the batch, or alone with HTTP 429 "
                "and Retry-After."
            ),
            parameters=[
                {
                    "in": "header",
                    "name": protocol.VERSION_HEADER,
                    "required": False,
                    "schema": {"type": "string", "enum": list(protocol.SUPPORTED_VERSIONS)},
                    "description": "The revision the request speaks; absent: 2025-03-26. Required "
                    "by 2026-07-28, where it "
                    "must equal params._meta's io.modelcontextprotocol/protocolVersion",
                },
                {
                    "in": "header",
                    "name": protocol.METHOD_HEADER,
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "2026-07-28: the body's method",
                    "example": "tools/call",
                },
                {
                    "in": "header",
                    "name": protocol.NAME_HEADER,
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "2026-07-28, tools/call: the body's params.name",
                    "example": "list_jobs",
                },
            ],
            requestBody={
                "required": True,
                "content": {
                    "application/json": {
                        "schema": one_or_batch(JsonRpcRequestSchema, items_checked=False)
                    }
                },
            },
        )
        @blp.response(
            200,
            one_or_batch(JsonRpcResponseSchema),
            description="The JSON-RPC response (or an array, for a batch)",
        )
        @blp.alt_response(
            202, description="A notification or client response was accepted; no body"
        )
        @blp.alt_response(
            400,
            schema=JsonRpcResponseSchema,
            description=(
                "Parse error (-32700) or invalid request (-32600); 2026-07-28 also: missing "
                "params._meta (-32602), "
                "header mismatch (-32020), unsupported protocol version (-32022)"
            ),
        )
        @blp.alt_response(
            404,
            schema={"oneOf": [ErrorSchema, JsonRpcResponseSchema]},
            description=(
                "2026-07-28: method not found (JSON-RPC error -32601); handshake revisions: an "
                "Mcp-Session-Id this "
                "server does not recognise for the caller (the REST error body, type "
                "session_not_found)"
            ),
        )
        @blp.alt_response(
            413,
            schema=JsonRpcResponseSchema,
            description=(
                f"A batch of more than {protocol.MAX_BATCH_LENGTH} messages (-32600; data: "
                "max_batch_length, received)"
            ),
        )
        @blp.alt_response(
            429,
            schema={"oneOf": [ErrorSchema, JsonRpcResponseSchema]},
            description=(
                "Over the key's rate limit: the POST itself (the REST error body), or a lone "
                "request over the limit it "
                f"meets (JSON-RPC error {protocol.RATE_LIMITED}, data.retry_after); Retry-After "
                "either way"
            ),
        )
        @blp.doc(
            responses={
                200: {
                    "content": {
                        "text/event-stream": {
                            "schema": {
                                "type": "string",
                                "description": (
                                    "A tools/call asking the person first (2025-11-25, "
                                    "2025-06-18): server-sent events, each a JSON-RPC "
                                    "message (an elicitation/create request, then the tools/call "
                                    "response)"
                                ),
                            }
                        }
                    }
                }
            }
        )
        # 403: a foreign Origin, or an access token without the scope a request needs
        @blp.errors(403, 406)
        @blp.doc(operationId=operation_id)
        def post(self):
            return answer(server, path)

    return blp


jobs_blp = server_blueprint(
    JOBS_SERVER, "mcp", "/mcp", "MCP server with the jobs tools, for AI agents", "mcp_recruiting"
)
sourcing_blp = server_blueprint(
    SOURCING_SERVER,
    "mcp_sourcing",
    "/mcp/sourcing",
    "MCP server with the people search and enrich tools, for AI agents",
    "mcp_sourcing",
)
