"""Settings of the MCP family: browser origins and held confirmations (read by app.config)."""

from __future__ import annotations

# each setting's comment is its meaning on docs/configuration.md (app.config_docs)
DEFAULTS: dict[str, object] = {
    # --- MCP ---
    # browser origins allowed to call the MCP servers (DNS-rebinding protection), which also get
    # CORS answers; a request without Origin is never refused; `*` allows any
    "MCP_ALLOWED_ORIGINS": [],
    # how long a 2025-06-18/2025-11-25 tools/call that asks its person to confirm (placing a call)
    # waits for the answer on its event stream before it gives up, placing nothing
    "MCP_CONFIRMATION_SECONDS": 120.0,
    # such streams one worker process holds at once (each holds a request thread, so it must stay
    # below HIREKIT_WEB_THREADS: the answer needs a thread of its own); past it the tool answers
    # "call again in a minute"
    "MCP_HELD_CONFIRMATIONS": 2,
}
