"""JSON-RPC 2.0 as MCP's handshake-era revisions use it: message checks, error codes, batches; no HTTP, no tools."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from flask import g

log = logging.getLogger("hirekit.mcp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

LATEST_VERSION = "2025-11-25"
SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
VERSION_WITHOUT_HEADER = "2025-03-26"  # what a request without MCP-Protocol-Version is taken to speak
BATCH_VERSIONS = frozenset({"2025-03-26"})  # JSON-RPC batches were removed in 2025-06-18

# Failures of the message itself are HTTP 400; everything a well-formed request provokes rides on 200.
HTTP_400_CODES = frozenset({PARSE_ERROR, INVALID_REQUEST})


class RpcError(Exception):
    """A JSON-RPC error a method raises on purpose: the code and message go to the client as they are."""

    def __init__(self, code: int, message: str, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class MethodHandler(Protocol):
    """What answers the methods: an MCP server."""

    def handle_request(self, method: str, params: dict, *, version: str) -> dict: ...

    def handle_notification(self, method: str, params: dict) -> None: ...


@dataclass(frozen=True)
class Reply:
    """What the HTTP layer sends: a status and a JSON body (None: 202 with no body)."""

    status: int
    body: dict | list | None


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
    error = reply.get("error")
    return Reply(400 if error and error["code"] in HTTP_400_CODES else 200, reply)


def dispatch_batch(items: list, handler: MethodHandler, *, version: str) -> Reply:
    if version not in BATCH_VERSIONS:
        return invalid_request(f"JSON-RPC batches are not part of protocol version {version}: send one message per request")
    if not items:
        return invalid_request("An empty batch is not a valid request")
    replies = [reply for item in items if (reply := handle_message(item, handler, version=version, in_batch=True)) is not None]
    return Reply(200, replies) if replies else Reply(202, None)


def valid_id(value) -> bool:
    """MCP ids are strings or integers; null, booleans and fractions are not ids."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def handle_message(message, handler: MethodHandler, *, version: str, in_batch: bool) -> dict | None:
    """The response object for one message, or None for notifications and for responses the client sends us."""
    if not isinstance(message, dict):
        return error_object(None, INVALID_REQUEST, "A JSON-RPC message must be an object")
    has_id = "id" in message
    request_id = message.get("id")
    echo_id = request_id if valid_id(request_id) else None
    if message.get("jsonrpc") != "2.0":
        return error_object(echo_id, INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"')
    if "method" not in message:
        if has_id and ("result" in message or "error" in message):
            return None  # a response to a server request; this server sends none, so there is nothing to match
        return error_object(echo_id, INVALID_REQUEST, 'Invalid request: "method" is required')
    method = message["method"]
    if not isinstance(method, str):
        return error_object(echo_id, INVALID_REQUEST, 'Invalid request: "method" must be a string')
    if has_id and not valid_id(request_id):
        return error_object(None, INVALID_REQUEST, 'Invalid request: "id" must be a string or an integer')
    params = message.get("params", {})
    if params is None:
        params = {}
    if not has_id:
        if isinstance(params, dict):
            notify(handler, method, params)
        return None
    if not isinstance(params, dict):
        if isinstance(params, list):
            return error_object(request_id, INVALID_PARAMS, f"Invalid params: {method} takes its params as an object")
        return error_object(request_id, INVALID_REQUEST, 'Invalid request: "params" must be an object')
    if in_batch and method == "initialize":
        return error_object(request_id, INVALID_REQUEST, "initialize must not be sent in a batch")
    try:
        return result_object(request_id, handler.handle_request(method, params, version=version))
    except RpcError as error:
        return error_object(request_id, error.code, error.message, error.data)
    except Exception:
        log.exception("MCP method %s failed [%s]", method, g.get("request_id"))
        return error_object(request_id, INTERNAL_ERROR, f"Internal error; quote request id {g.get('request_id')} to support")


def notify(handler: MethodHandler, method: str, params: dict) -> None:
    """Notifications get no answer, so a failing one is only logged."""
    try:
        handler.handle_notification(method, params)
    except Exception:
        log.exception("MCP notification %s failed [%s]", method, g.get("request_id"))
