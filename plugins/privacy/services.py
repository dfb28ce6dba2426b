"""Reads of the erasure log shared by the REST list and the CLI."""

from app.http import listing
from plugins.privacy.models import Erasure


def erasures_query(tenant_id: str | None):
    """The erasure log of a tenant (every tenant's for None: the operator's view)."""
    return Erasure.select() if tenant_id is None else Erasure.owned_by(tenant_id)


def list_erasures(tenant_id: str, **args) -> dict:
    """A page of the tenant's erasure log in either list mode (app.http.listing)."""
    window, filters = listing.split_window(args)
    return listing.answer(
        erasures_query(tenant_id),
        window,
        tenant_id=tenant_id,
        list_name="privacy-erasures",
        filters=filters,
    )
