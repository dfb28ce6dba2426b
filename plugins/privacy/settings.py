"""Settings of the privacy family: retention passes erasing candidates (read by app.config)."""

from __future__ import annotations

# each setting's comment is its meaning on docs/configuration.md (app.config_docs)
DEFAULTS: dict[str, object] = {
    # --- Privacy ---
    # seconds between the worker's passes erasing candidates past their tenant's
    # candidate_retention_days (0: off)
    "CANDIDATE_RETENTION_INTERVAL": 3600.0,
    # candidates a retention pass (or `flask privacy expire`) erases per batch
    "CANDIDATE_RETENTION_BATCH": 100,
}
