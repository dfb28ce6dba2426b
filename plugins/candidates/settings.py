"""Settings of the candidates family: the hours and zone candidates are reached in (app.config reads
DEFAULTS)."""

from __future__ import annotations

# each setting's comment is its meaning on docs/configuration.md (app.config_docs)
DEFAULTS: dict[str, object] = {
    # --- Contact hours ---
    # the zone of candidates whose zone is neither set, inferred from their phone number or
    # location, nor their tenant's default (an IANA name, e.g. America/New_York)
    "TIMEZONE": "UTC",
    # the hours calls and texts may reach a candidate, in the candidate's local time (HH:MM-HH:MM;
    # 00:00-24:00: any hour); a tenant sets its own with PUT /v1/tenant/contact-settings
    "CALLING_HOURS": "08:00-21:00",
    # calls placed to one phone number per local day across a tenant's jobs (0: no cap); per tenant
    # too
    "DAILY_CALL_LIMIT": 0,
}
