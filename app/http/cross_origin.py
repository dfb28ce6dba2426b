"""Cross-origin reads for the routes a browser-based client calls itself: an agent host running in a
web page (the MCP Inspector, an IDE in a browser) discovers and signs in to the MCP servers with
fetch(), so those answers carry CORS headers. Built on flask-cors; no cookies are ever allowed
across origins, so only what a bearer token or nothing authorizes is reachable."""

from __future__ import annotations

import re

from flask_cors import CORS


def allow_cross_origin(
    app,
    paths: list[str],
    *,
    origins,
    methods: list[str],
    allow_headers: list[str],
    expose_headers: list[str] = (),
) -> None:
    """Answer preflights and add CORS headers for requests whose whole path matches one of `paths`
    (regular expressions) from `origins` ("*" or a list; an empty list allows none)."""
    options = {
        "origins": origins,
        "methods": [*methods, "OPTIONS"],
        "allow_headers": allow_headers,
        "expose_headers": list(expose_headers),
        "supports_credentials": False,
        "max_age": 600,
        "send_wildcard": origins == "*",
    }
    CORS(
        app,
        resources={re.compile(rf"(?:{path})\Z"): options for path in paths},
        intercept_exceptions=False,
    )
