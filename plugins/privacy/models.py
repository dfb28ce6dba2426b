"""The erasure log: what an erasure removed, by record id and count, with no personal data.

docs/privacy.md (Proving it: the erasure log) describes it to clients and operators."""

import peewee as pw

from app.data.db import JSONField
from app.data.records import TenantRecord, tenant_indexes

# why a candidate was erased: asked for (REST, CLI), or past the retention
REQUEST, RETENTION = "request", "retention"


class Erasure(TenantRecord):
    """One candidate's erasure: created_at is when it committed."""

    label = "erasure"

    candidate_id = pw.UUIDField()
    reason = pw.CharField(max_length=16)
    # the API key that asked; None for the CLI and the retention pass
    key_id = pw.IntegerField(null=True)
    record_ids = JSONField()  # {"applications": [...], "calls": [...], "events": [...]}
    counts = JSONField()  # {"applications": n, "calls": n, ...}

    class Meta:
        table_name = "privacy_erasures"
        indexes = tenant_indexes()
