"""JSON-RPC 2.0 as MCP uses it, in both eras: the handshake revisions (batches in 2025-03-26) and
2026-07-28's per-request envelope (params._meta, routing headers that must match the body); message
checks and error codes, no HTTP, no tools."""

from __future__ import annotations

import base64
import binascii
import logging
import re
from dataclasses import dataclass
from typing import Iterator, Protocol

from flask import g

log = logging.getLogger("hirekit.mcp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# a request over the rate limit it meets; data: retry_after (seconds) and limit (HTTP 429 alone)
RATE_LIMITED = -32029
HEADER_MISMATCH = -32020  # 2026-07-28: a routing header disagrees with the body
# 2026-07-28: data names the supported versions and the requested one
UNSUPPORTED_PROTOCOL_VERSION = -32022

# negotiated by initialize, newest first
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[0]
# no handshake: every request names its version in params._meta and a header
MODERN_VERSIONS = ("2026-07-28",)
SUPPORTED_VERSIONS = MODERN_VERSIONS + HANDSHAKE_VERSIONS
# what a request without MCP-Protocol-Version is taken to speak
VERSION_WITHOUT_HEADER = "2025-03-26"
BATCH_VERSIONS = frozenset({"2025-03-26"})  # JSON-RPC batches were removed in 2025-06-18
# messages in one batch; a longer batch is refused whole (HTTP 413, -32600) before any is answered
MAX_BATCH_LENGTH = 20

# The per-request envelope of 2026-07-28
PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
ROUTING_HEADERS = (VERSION_HEADER, METHOD_HEADER, NAME_HEADER)
# methods whose Mcp-Name header mirrors a param (the ones this server has)
NAME_PARAMS = {"tools/call": "name"}
# how a client sends a name a header cannot carry
BASE64_HEADER_VALUE = re.compile(r"=\?base64\?(?P<payload>.*)\?=")

# Handshake revisions: failures of the message itself are HTTP 400; everything a well-formed request
# provokes rides on 200.
HTTP_400_CODES = frozenset({PARSE_ERROR, INVALID_REQUEST})
# 2026-07-28: the status follows the code, whoever raised it; the rest (tool results, -32603) rides
# on 200
MODERN_HTTP_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
    RATE_LIMITED: 429,
}


class RpcError(Exception):
    """A JSON-RPC error a method raises on purpose: the code and message go to the client as they
    are."""

    def __init__(self, code: int, message: str, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class MethodHandler(Protocol):
    """What answers the methods: an MCP server."""

    def admit_batched(self) -> None:
        """Count a batch's message beyond its first (the POST counted that one) as the POST it could
        have been; raises RpcError (RATE_LIMITED) when that is over the limit."""

    def handle_request(self, method: str, params: dict, *, version: str) -> dict: ...

    def handle_notification(self, method: str, params: dict) -> None: ...

    def handle_response(self, message: dict) -> None:
        """A client's answer to a request the server sent it."""

    def server_info(self) -> dict: ...


class Streamed(Protocol):
    """A result that cannot be given at once because the server must ask the client something first
    (handshake revisions: over the request's event stream). `messages(request_id)` yields what the
    stream carries in order: the server's requests and notifications, None for a keep-alive, and
    last the response to `request_id`."""

    def messages(self, request_id) -> Iterator[dict | None]: ...


@dataclass(frozen=True)
class Reply:
    """What the HTTP layer sends: a status and a JSON body (None: 202 with no body), or an event
    stream of messages."""

    status: int
    body: dict | list | None
    stream: Iterator[dict | None] | None = None


def error_object(request_id, code: int, message: str, data=None) -> dict:
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def result_object(request_id, result: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def parse_error() -> Reply:
    return Reply(400, error_object(None, PARSE_ERROR, "Parse error: the body is not valid JSON"))


def invalid_request(message: str) -> Reply:
    return Reply(400, error_object(None, INVALID_REQUEST, message))


def dispatch(payload, handler: MethodHandler, *, version: str) -> Reply:
    """Answer one decoded POST body: a single message, or a batch where `version` allows one."""
    if isinstance(payload, list):
        return dispatch_batch(payload, handler, version=version)
    reply = handle_message(payload, handler, version=version, in_batch=False)
    if reply is None:
        return Reply(202, None)
    if not isinstance(reply, dict):
        return Reply(200, None, stream=reply)
    error = reply.get("error")
    if error and error["code"] in HTTP_400_CODES:
        return Reply(400, reply)
    return Reply(429 if error and error["code"] == RATE_LIMITED else 200, reply)


def dispatch_batch(items: list, handler: MethodHandler, *, version: str) -> Reply:
    """Answer a batch message by message, each counted against the rate limits as if it were POSTed
    alone."""
    if version not in BATCH_VERSIONS:
        return invalid_request(
            f"JSON-RPC batches are not part of protocol version {version}: send one message per "
            "request"
        )
    if not items:
        return invalid_request("An empty batch is not a valid request")
    if len(items) > MAX_BATCH_LENGTH:
        return Reply(
            413,
            error_object(
                None,
                INVALID_REQUEST,
                f"Invalid request: a batch holds at most {MAX_BATCH_LENGTH} "
                f"messages and this one has {len(items)}; send the rest in "
                "further requests",
                {"max_batch_length": MAX_BATCH_LENGTH, "received": len(items)},
            ),
        )
    replies = [
        reply
        for index, item in enumerate(items)
        if (
            reply := handle_message(
                item, handler, version=version, in_batch=True, counted=index == 0
            )
        )
        is not None
    ]
    # a batch is 2025-03-26's, which has no sessions, so no result of it is ever Streamed
    return Reply(200, replies) if replies else Reply(202, None)


def valid_id(value) -> bool:
    """MCP ids are strings or integers; null, booleans and fractions are not ids."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def handle_message(
    message, handler: MethodHandler, *, version: str, in_batch: bool, counted: bool = True
) -> dict | Iterator[dict | None] | None:
    """The response object for one message (or the messages of its event stream, when the server
    must ask the client first), or None for notifications and for responses the client sends us.
    `counted`: the POST's own rate-limit hit stands for this message; otherwise it is counted here
    before it runs (a notification over the limit is dropped, a request answered RATE_LIMITED)."""
    if not isinstance(message, dict):
        return error_object(None, INVALID_REQUEST, "A JSON-RPC message must be an object")
    has_id = "id" in message
    if (
        "method" not in message
        and has_id
        and ("result" in message or "error" in message)
        and message.get("jsonrpc") == "2.0"
    ):
        # the answer to a question the server asked on a held stream
        handler.handle_response(message)
        return None
    problem = envelope_error(message)
    if problem is not None:
        return problem
    request_id, method = message.get("id"), message["method"]
    params = message.get("params", {})
    if params is None:
        params = {}
    if not has_id:
        if isinstance(params, dict) and (counted or admitted(handler) is None):
            notify(handler, method, params)
        return None
    problem = params_error(request_id, method, params)
    if problem is not None:
        return problem
    if in_batch and method == "initialize":
        return error_object(request_id, INVALID_REQUEST, "initialize must not be sent in a batch")
    refusal = None if counted else admitted(handler)
    if refusal is not None:
        return error_object(request_id, refusal.code, refusal.message, refusal.data)
    return answer_request(request_id, method, params, handler, version=version)


def admitted(handler: MethodHandler) -> RpcError | None:
    """None when the handler admits one more message of the batch, else the RpcError refusing it."""
    try:
        handler.admit_batched()
    except RpcError as refusal:
        return refusal
    return None


def envelope_error(message: dict) -> dict | None:
    """The -32600 error object for a message that is not a JSON-RPC request or notification, or
    None."""
    request_id = message.get("id")
    echo_id = request_id if valid_id(request_id) else None
    if message.get("jsonrpc") != "2.0":
        return error_object(echo_id, INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"')
    if "method" not in message:
        return error_object(echo_id, INVALID_REQUEST, 'Invalid request: "method" is required')
    if not isinstance(message["method"], str):
        return error_object(echo_id, INVALID_REQUEST, 'Invalid request: "method" must be a string')
    if "id" in message and not valid_id(request_id):
        return error_object(
            None, INVALID_REQUEST, 'Invalid request: "id" must be a string or an integer'
        )
    return None


def params_error(request_id, method: str, params) -> dict | None:
    if isinstance(params, dict):
        return None
    if isinstance(params, list):
        return error_object(
            request_id, INVALID_PARAMS, f"Invalid params: {method} takes its params as an object"
        )
    return error_object(request_id, INVALID_REQUEST, 'Invalid request: "params" must be an object')


def answer_request(
    request_id, method: str, params: dict, handler: MethodHandler, *, version: str
) -> dict | Iterator[dict | None]:
    """The handler's result, or the error it raised; an unexpected failure is logged and answered
    -32603. A result the handler must ask the client about first is the stream of messages that asks
    and then answers."""
    try:
        result = handler.handle_request(method, params, version=version)
        if not isinstance(result, dict):
            return result.messages(request_id)
        return result_object(request_id, result)
    except RpcError as error:
        return error_object(request_id, error.code, error.message, error.data)
    except Exception:
        log.exception("MCP method %s failed [%s]", method, g.get("request_id"))
        return error_object(
            request_id,
            INTERNAL_ERROR,
            f"Internal error; quote request id {g.get('request_id')} to support",
        )


def notify(handler: MethodHandler, method: str, params: dict) -> None:
    """Notifications get no answer, so a failing one is only logged."""
    try:
        handler.handle_notification(method, params)
    except Exception:
        log.exception("MCP notification %s failed [%s]", method, g.get("request_id"))


# ---- 2026-07-28: one request per POST, its version and the client's capabilities in params._meta
# ------------------


def unsupported_version(requested: str) -> Reply:
    """400/-32022 for a MCP-Protocol-Version this server does not speak: data lists the ones it
    does, so a client of both eras can pick one (a modern one, or fall back to initialize for a
    handshake one)."""
    return Reply(
        400,
        error_object(
            None,
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version {requested!r}: this server speaks "
            f"{', '.join(MODERN_VERSIONS)} and, through "
            f"initialize, {', '.join(HANDSHAKE_VERSIONS)}.",
            {"supported": list(SUPPORTED_VERSIONS), "requested": requested},
        ),
    )


def dispatch_modern(
    payload, handler: MethodHandler, *, version: str, headers: dict[str, str | None]
) -> Reply:
    """Answer one decoded POST body of a per-request-envelope revision. `headers` holds
    ROUTING_HEADERS' values (a header sent twice arrives comma-joined, so it matches no body value);
    the revision was read from the first."""
    if version not in MODERN_VERSIONS:
        return unsupported_version(version)
    if isinstance(payload, list):
        return invalid_request(
            f"Protocol version {version} has no batches: send one JSON-RPC message per request"
        )
    if not isinstance(payload, dict):
        return invalid_request("A JSON-RPC message must be an object")
    if "method" not in payload and ("result" in payload or "error" in payload):
        return invalid_request(
            f"Protocol version {version} has no server-to-client requests to answer"
        )
    problem = envelope_error(payload)
    if problem is not None:
        return Reply(400, problem)
    if "id" not in payload:
        # 2026-07-28 defines no client notifications; clients still send cancellations
        return Reply(202, None)
    request_id, method = payload["id"], payload["method"]
    params = {} if payload.get("params") is None else payload["params"]
    problem = params_error(request_id, method, params) or envelope_problem(
        request_id, method, params, version, headers
    )
    reply = problem or answer_request(request_id, method, params, handler, version=version)
    if "error" in reply:
        return Reply(MODERN_HTTP_STATUS.get(reply["error"]["code"], 200), reply)
    result = reply["result"]
    # a result may be "input_required" (multi round-trip)
    reply["result"] = {
        "resultType": "complete",
        **result,
        "_meta": {**result.get("_meta", {}), SERVER_INFO_META_KEY: handler.server_info()},
    }
    return Reply(200, reply)


def envelope_problem(
    request_id, method: str, params: dict, version: str, headers: dict[str, str | None]
) -> dict | None:
    """The error object when params._meta lacks the envelope (-32602) or a routing header disagrees
    with the body (-32020); None when the request may be dispatched."""
    meta = params.get("_meta")
    missing = [
        key
        for key in (PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY)
        if not isinstance(meta, dict) or key not in meta
    ]
    if missing:
        return error_object(
            request_id,
            INVALID_PARAMS,
            f"Invalid params: params._meta must carry {' and '.join(missing)} "
            f"(every {version} request names its version and capabilities)",
        )
    expected = [
        (VERSION_HEADER, version, meta[PROTOCOL_VERSION_META_KEY], "params._meta protocol version"),
        (METHOD_HEADER, headers.get(METHOD_HEADER), method, "method"),
    ]
    if method in NAME_PARAMS and params.get(NAME_PARAMS[method]) is not None:
        expected.append(
            (
                NAME_HEADER,
                header_value(headers.get(NAME_HEADER)),
                params[NAME_PARAMS[method]],
                f"params.{NAME_PARAMS[method]}",
            )
        )
    for header, sent, body_value, body_name in expected:
        if sent != body_value:
            return error_object(
                request_id,
                HEADER_MISMATCH,
                f"Header mismatch: {header} is {sent!r} but the body's {body_name} is "
                f"{body_value!r}; "
                "they must be equal",
                {"header": header},
            )
    return None


def header_value(raw: str | None) -> str | None:
    """A routing header's value, decoding the =?base64?...?= form clients use for values a header
    cannot carry as is (None when that form is malformed, so it matches nothing)."""
    match = BASE64_HEADER_VALUE.fullmatch(raw) if raw is not None else None
    if match is None:
        return raw
    try:
        return base64.b64decode(match["payload"], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
