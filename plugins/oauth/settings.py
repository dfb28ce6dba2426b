"""Settings of the oauth family: the authorization server of the MCP servers (app.config reads
DEFAULTS)."""

from __future__ import annotations

# each setting's comment is its meaning on docs/configuration.md (app.config_docs)
DEFAULTS: dict[str, object] = {
    # --- OAuth for the MCP servers ---
    # the authorization server's issuer and the base of the MCP endpoints' resource identifiers, as
    # clients reach them (https://hirekit.example.com); empty: the scheme and host each request came
    # to
    "OAUTH_ISSUER": "",
    "OAUTH_ACCESS_TOKEN_SECONDS": 900,  # how long an access token works; clients refresh it after
    # how long an unused refresh token stays valid (each refresh rotates it)
    "OAUTH_REFRESH_TOKEN_DAYS": 30.0,
    # seconds between the worker's passes deleting expired codes and tokens (0: off)
    "OAUTH_PURGE_INTERVAL": 3600.0,
    # how long a person stays signed in to the sign-in and consent pages
    "OAUTH_SIGN_IN_SECONDS": 3600,
    # largest client metadata document fetched (a larger one: invalid_client)
    "OAUTH_CLIENT_DOCUMENT_MAX_BYTES": 5120,
    # seconds a client metadata document's fetch may take, connect to last byte
    "OAUTH_CLIENT_DOCUMENT_TIMEOUT": 5.0,
    # seconds a fetched client metadata document is used before a refetch
    "OAUTH_CLIENT_DOCUMENT_CACHE_SECONDS": 3600.0,
}
