"""Settings of the webhooks family: how deliveries are sent, retried and given up (app.config reads
DEFAULTS)."""

from __future__ import annotations

# each setting's comment is its meaning on docs/configuration.md (app.config_docs)
DEFAULTS: dict[str, object] = {
    # --- Webhooks ---
    # allow webhook URLs on loopback and private addresses (a local receiver, tests)
    "WEBHOOK_ALLOW_PRIVATE": False,
    # seconds one send may take, connect to the last response byte read (test sends too)
    "WEBHOOK_TIMEOUT": 10.0,
    # seconds after each failure; then give up
    "WEBHOOK_RETRY_SCHEDULE": [5, 300, 1800, 7200, 18000, 36000],
    "WEBHOOK_RETRY_JITTER": 0.1,  # up to +10% on each retry delay
    # seconds of failing deliveries before a webhook is disabled
    "WEBHOOK_DISABLE_AFTER": 3 * 24 * 3600,
    # seconds deliveries stay signed with the old secret too after a rotation
    "WEBHOOK_SECRET_OVERLAP": 24 * 3600,
    # seconds past the timeout before a claimed delivery counts as abandoned
    "WEBHOOK_LEASE_GRACE": 30.0,
    # seconds between passes re-enqueuing stalled deliveries (0: off)
    "WEBHOOK_REAPER_INTERVAL": 60.0,
    "WEBHOOK_REPLAY_RATE_LIMIT": "10/hour",  # webhook replays per tenant
    # a replay's lock outlives a replay that died by this long at most
    "WEBHOOK_REPLAY_LOCK_SECONDS": 600.0,
}
