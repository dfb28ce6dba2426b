"""Endpoint families, one package each exposing PLUGIN (app/plugins.py): which exist, in order."""

CORE = (  # always on, registered first, whatever HIREKIT_PLUGINS selects
    "tenant",
    "events",
)

# the families HIREKIT_PLUGINS selects from, in their registration (and /openapi.json) order
FAMILIES = (
    "jobs",
    "scheduling",
    "candidates",
    "applications",
    "questions",
    "calls",
    "webhooks",
    "privacy",
    "person",
    "mcp",
    "oauth",
    "board",
)

# the families whose event types (Plugin.event_types) are listed first, in this order, where the
# types are listed (the /v1/events filter, the webhook body's enum): the order the types were
# published in; others follow in registration order
EVENT_ORDER = ("calls", "applications", "privacy", "candidates")
