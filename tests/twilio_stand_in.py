"""A local server standing in for Twilio's REST API: answers a resource create (POST .../Calls.json,
.../Messages.json) as Twilio does, 201 with the resource's JSON, and keeps each request as the
twilio client sent it."""

from __future__ import annotations

import json
from typing import Callable

from werkzeug import Response


def answer_creates(httpserver, path: str, resource: Callable[[dict, int], dict]) -> list:
    """POSTs to `path` answered 201 with `resource(form, n)` (n counts the requests from 1); returns
    the list the requests are appended to."""
    received = []

    def create(request):
        received.append(request)
        return Response(
            status=201,
            content_type="application/json",
            response=json.dumps(resource(request.form, len(received))),
        )

    httpserver.expect_request(path, method="POST").respond_with_handler(create)
    return received
