"""JSON-RPC 2.0 message shapes, for the OpenAPI description of the MCP endpoints (the dispatcher
checks messages itself)."""

import marshmallow as ma

from plugins.mcp.protocol import MAX_BATCH_LENGTH, RATE_LIMITED

REQUEST_ID = ma.fields.Raw(
    metadata={"description": "A string or an integer; absent on notifications", "example": 1}
)


class JsonRpcRequestSchema(ma.Schema):
    """A JSON-RPC request or notification (a JSON array of at most MAX_BATCH_LENGTH of them is a
    batch, in protocol version 2025-03-26 only)."""

    jsonrpc = ma.fields.String(required=True, metadata={"example": "2.0"})
    id = REQUEST_ID
    method = ma.fields.String(
        required=True,
        metadata={
            "description": "initialize, ping, tools/list, tools/call, notifications/initialized",
            "example": "tools/list",
        },
    )
    params = ma.fields.Dict(metadata={"example": {}})


class JsonRpcErrorSchema(ma.Schema):
    code = ma.fields.Integer(
        required=True,
        metadata={
            "description": f"-32700, -32600, -32601, -32602, -32603, or {RATE_LIMITED} (rate limit "
            "exceeded; data.retry_after "
            "in seconds); 2026-07-28 also -32020 and -32022",
            "example": -32601,
        },
    )
    message = ma.fields.String(
        required=True, metadata={"example": "Method not found: resources/list"}
    )
    data = ma.fields.Raw()


def one_or_batch(schema: type[ma.Schema], *, items_checked: bool = True) -> dict:
    """OpenAPI for a message or a batch of at most MAX_BATCH_LENGTH of them (protocol version
    2025-03-26 only).

    A batch's items are answered one by one, as JSON-RPC says: a malformed item gets its own error
    in the answer array, so a request batch accepts any items (`items_checked=False`).
    """
    items = (
        schema
        if items_checked
        else {
            "description": f"Each item should be a {schema.__name__.removesuffix('Schema')}; "
            "a malformed one is answered with its own JSON-RPC error"
        }
    )
    return {
        "oneOf": [
            schema,
            {"type": "array", "items": items, "minItems": 1, "maxItems": MAX_BATCH_LENGTH},
        ]
    }


class JsonRpcResponseSchema(ma.Schema):
    """The answer to a request: the same id with a result or an error (tool failures are results
    with isError)."""

    jsonrpc = ma.fields.String(required=True, metadata={"example": "2.0"})
    id = REQUEST_ID
    result = ma.fields.Dict()
    error = ma.fields.Nested(JsonRpcErrorSchema)
