"""The tenant's do-not-call list: E.164 numbers no call or text message of the tenant's reaches,
added and removed through the API and imported in bulk from a file by `flask candidates do-not-call
import`."""

from __future__ import annotations

import peewee as pw

from app.data.db import BaseModel, database, utcnow
from app.data.tenancy import Tenant
from app.errors import NotFound
from app.http import listing

MAX_NOTE = 500


class DoNotCallNumber(BaseModel):
    id = pw.AutoField()
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    phone_no = pw.CharField(max_length=32)
    note = pw.CharField(max_length=MAX_NOTE, null=True)
    created_at = pw.DateTimeField(default=utcnow)

    class Meta:
        table_name = "do_not_call_numbers"
        indexes = ((("tenant", "phone_no"), True),)


def is_listed(tenant_id: str, phone_no: str | None) -> bool:
    """Whether the number is on the tenant's do-not-call list."""
    if not phone_no:
        return False
    return (
        DoNotCallNumber.select()
        .where((DoNotCallNumber.tenant == tenant_id) & (DoNotCallNumber.phone_no == phone_no))
        .exists()
    )


def add_number(
    tenant_id: str, phone_no: str, note: str | None = None
) -> tuple[DoNotCallNumber, bool]:
    """(the entry, whether it is new): adding a listed number again keeps the first entry."""
    with database.atomic():
        existing = DoNotCallNumber.get_or_none(
            (DoNotCallNumber.tenant == tenant_id) & (DoNotCallNumber.phone_no == phone_no)
        )
        if existing is not None:
            return existing, False
        return DoNotCallNumber.create(tenant=tenant_id, phone_no=phone_no, note=note), True


def add_numbers(tenant_id: str, numbers: list[str]) -> int:
    """Bulk import: add every number not yet listed; answers how many were new."""
    added = 0
    with database.atomic():
        for phone_no in dict.fromkeys(numbers):
            added += add_number(tenant_id, phone_no)[1]
    return added


def remove_number(tenant_id: str, phone_no: str) -> None:
    deleted = (
        DoNotCallNumber.delete()
        .where((DoNotCallNumber.tenant == tenant_id) & (DoNotCallNumber.phone_no == phone_no))
        .execute()
    )
    if not deleted:
        raise NotFound("do-not-call number", phone_no)


def list_numbers(tenant_id: str, page: int, size: int) -> dict:
    """A page of the tenant's list, oldest entry first."""
    query = DoNotCallNumber.select().where(DoNotCallNumber.tenant == tenant_id)
    return listing.paginate(
        query, page=page, size=size, order_by=(DoNotCallNumber.created_at, DoNotCallNumber.id)
    )
