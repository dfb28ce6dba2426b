"""What gunicorn refuses before a request reaches the app: its request-head limits, the one error
body each refusal is answered with (app.server.gthread_worker), and how /openapi.json documents them
(app.http.api)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from app.errors import ERROR_TYPES

# deploy/gunicorn.conf.py sets these; a request past one is refused before any route runs.
# bytes in the request line (method, path with query string, HTTP version): longer is 414
LIMIT_REQUEST_LINE = 8190
LIMIT_REQUEST_FIELDS = 100  # header fields in one request: more is 431
LIMIT_REQUEST_FIELD_SIZE = 8190  # bytes in one header line (name, colon, value): longer is 431


@dataclass(frozen=True)
class Refusal:
    """One of the server's own answers: status, reason phrase, error type and a message naming the
    rule broken. The message may name the limits as {limit_request_line}, {limit_request_fields} and
    {limit_request_field_size}."""

    status: int
    reason: str
    type: str
    message: str

    def body(self, limits: dict[str, int], request_id: str) -> bytes:
        """The one error body, with the server's actual limits in the message."""
        message = self.message.format(request_id=request_id, **limits)
        return json.dumps(
            {"status": self.status, "error": {"type": self.type, "message": message}}
        ).encode()

    def response(self, body: bytes, request_id: str) -> bytes:
        """The whole HTTP/1.1 answer carrying `body`; the connection closes after it, as gunicorn's
        own refusals do."""
        head = (
            f"HTTP/1.1 {self.status} {self.reason}\r\nConnection: close\r\nContent-Type: "
            "application/json\r\n"
            f"Content-Length: {len(body)}\r\nX-Request-Id: {request_id}\r\n\r\n"
        )
        return head.encode("latin-1") + body


MALFORMED_REQUEST_LINE = Refusal(
    400,
    "Bad Request",
    ERROR_TYPES[400],
    "Malformed request line: expected `METHOD /path?query HTTP/1.1`, with a token method, a target "
    "in printable ASCII "
    "(percent-encode anything else) and HTTP/1.0 or 1.1.",
)
MALFORMED_HEADERS = Refusal(
    400,
    "Bad Request",
    ERROR_TYPES[400],
    "Malformed header field: each header line is `Name: value` with a token name and no control "
    "characters, no line "
    "folding, and Content-Length / Transfer-Encoding agree.",
)
MALFORMED_CHUNKED_BODY = Refusal(
    400,
    "Bad Request",
    ERROR_TYPES[400],
    "Malformed chunked body: a chunk size, extension or terminator is invalid.",
)
MALFORMED_REQUEST = Refusal(400, "Bad Request", ERROR_TYPES[400], "Malformed HTTP request.")
REQUEST_LINE_TOO_LONG = Refusal(
    414,
    "URI Too Long",
    "uri_too_long",
    "The request line is longer than {limit_request_line} bytes (method, path, query string and "
    "HTTP version); send a "
    "long query in a POST body instead.",
)
HEADERS_TOO_LARGE = Refusal(
    431,
    "Request Header Fields Too Large",
    "request_header_fields_too_large",
    "The request headers are over the server's limits: at most {limit_request_fields} header "
    "fields, each line at most "
    "{limit_request_field_size} bytes.",
)
EXPECTATION_FAILED = Refusal(
    417,
    "Expectation Failed",
    "expectation_failed",
    "Unsupported Expect header: only `Expect: 100-continue` is understood.",
)
UNSUPPORTED_TRANSFER_CODING = Refusal(
    501,
    "Not Implemented",
    "not_implemented",
    "Unsupported Transfer-Encoding: only chunked is accepted.",
)
FORBIDDEN_PEER = Refusal(
    403, "Forbidden", ERROR_TYPES[403], "Request refused: this peer may not send it."
)
SERVER_ERROR = Refusal(
    500,
    "Internal Server Error",
    ERROR_TYPES.get(500, "api_error"),
    "Internal error; quote request id {request_id} to support.",
)

DEFAULT_LIMITS = {
    "limit_request_line": LIMIT_REQUEST_LINE,
    "limit_request_fields": LIMIT_REQUEST_FIELDS,
    "limit_request_field_size": LIMIT_REQUEST_FIELD_SIZE,
}

# Every operation documents these (app.http.api.Blueprint): the server answers them for any path,
# before routing. status -> (component name, description)
DOCUMENTED_RESPONSES = {
    400: (
        "MALFORMED_REQUEST",
        "Bad Request: the route's own validation, or a request the server could not parse "
        "(malformed request line, header field or chunked body), refused before any route runs.",
    ),
    414: (
        "REQUEST_LINE_TOO_LONG",
        f"URI Too Long: the request line is longer than {LIMIT_REQUEST_LINE:,} bytes "
        "(method, path, query string and HTTP version), refused before any route runs.",
    ),
    431: (
        "REQUEST_HEADERS_TOO_LARGE",
        f"Request Header Fields Too Large: more than {LIMIT_REQUEST_FIELDS} header "
        f"fields, or a header line longer than {LIMIT_REQUEST_FIELD_SIZE:,} bytes, refused "
        "before any route runs.",
    ),
}


def document(spec, error_schema) -> None:
    """Add the components every operation's 400, 414 and 431 refer to (app.http.api.Blueprint adds
    the references)."""
    for component, description in DOCUMENTED_RESPONSES.values():
        spec.components.response(
            component,
            {"description": description, "content": {"application/json": {"schema": error_schema}}},
            lazy=True,
        )


def document_operation(responses: dict) -> None:
    """Refer an operation's 400, 414 and 431 to those components, unless it documents them its own
    way."""
    for status, (component, _) in DOCUMENTED_RESPONSES.items():
        responses.setdefault(status, component)
