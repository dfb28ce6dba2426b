"""Which OAuth scope each MCP tool, resource and prompt needs, and what a caller's scopes let it
see.

An API key is not scoped (its caller has scopes None) and sees everything, as before OAuth existed.
An access token carries the scopes its person granted: tools/list shows only the tools they allow,
and a call outside them is refused with insufficient_scope."""

from __future__ import annotations

from flask import g

# Each scope in plain words, as the consent page shows it; the order is the consent page's and the
# metadata's.
SCOPES = {
    "jobs:read": "See your organisation's job postings and their screening questions",
    "jobs:write": "Create and change job postings and generate their screening questions",
    "candidates:read": "See candidates and their applications to jobs",
    "candidates:write": "Create and change candidates and their applications",
    "calls:read": "See screening calls, with their transcripts and scorecards",
    "calls:write": "Place, move and cancel screening calls (each call is confirmed by you first)",
    "people:read": "Search and enrich professional person profiles",
}

# The scope family of each plugin whose tools the servers offer: a read-only tool needs
# "<family>:read", any other "<family>:write" (so a tool added to a plugin is scoped without a
# change here).
PLUGIN_SCOPE_FAMILY = {
    "jobs": "jobs",
    "questions": "jobs",
    "candidates": "candidates",
    "applications": "candidates",
    "calls": "calls",
    "person": "people",
}


def tool_scope(plugin: str, read_only: bool) -> str:
    """The scope a tool of `plugin` needs."""
    return f"{PLUGIN_SCOPE_FAMILY[plugin]}:{'read' if read_only else 'write'}"


def granted() -> frozenset[str] | None:
    """The current caller's scopes; None for an API key (not scoped: everything is allowed)."""
    caller = g.get("caller")
    return None if caller is None else caller.scopes


def allows(scope: str) -> bool:
    scopes = granted()
    return scopes is None or scope in scopes


def server_scopes(plugins: tuple[str, ...]) -> list[str]:
    """The scopes an endpoint offering the tools of `plugins` may ask for, in SCOPES' order."""
    families = {PLUGIN_SCOPE_FAMILY[plugin] for plugin in plugins if plugin in PLUGIN_SCOPE_FAMILY}
    return [scope for scope in SCOPES if scope.split(":")[0] in families]
