"""Reads of the erasure log shared by the REST list and the CLI."""

from plugins.privacy.models import Erasure


def erasures_query(tenant_id: str | None):
    """The erasure log of a tenant (every tenant's for None: the operator's view)."""
    return Erasure.select() if tenant_id is None else Erasure.owned_by(tenant_id)
