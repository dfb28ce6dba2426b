"""This authorization server's issuer identifier, the base of every URL it publishes and of the MCP
endpoints' resource identifiers."""

from __future__ import annotations

from flask import current_app, request


def issuer() -> str:
    """OAUTH_ISSUER, else the scheme and host the request came to (behind a proxy: with its
    forwarded headers)."""
    configured = current_app.config["OAUTH_ISSUER"]
    return (configured or request.host_url).rstrip("/")
