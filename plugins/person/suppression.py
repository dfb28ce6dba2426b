"""The suppression list: people who opted out of the person dataset (People Data Labs' opt-out), by
email or by id.

A suppressed person is never answered by search, search-enrich, enrich, bulk, retrieve or identify,
on either backend and whatever dataset is loaded: searches exclude them in the query itself (a
`must_not` over the id and every email field, so totals and pages are right on the embedded index
and on Elasticsearch alike), and every record an answer would carry is checked against the list
first. Nothing is removed from the dataset, so a reload cannot bring them back. The list keeps the
email (lower-cased) or id it was given: it is what must be recognised in every later load."""

from __future__ import annotations

import peewee as pw

from app.data.db import BaseModel, database, utcnow

EMAIL, ID = "email", "id"
# where a profile carries an email (profile_fields)
EMAIL_FIELDS = ("emails.address", "work_email", "personal_emails")


class PersonSuppression(BaseModel):
    kind = pw.CharField(max_length=16)
    value = pw.CharField(max_length=320)
    created_at = pw.DateTimeField(default=utcnow)

    class Meta:
        table_name = "person_suppressions"
        indexes = ((("kind", "value"), True),)


def normalized(kind: str, value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError(f"an empty {kind}")
    if len(value) > 320:
        raise ValueError(f"a {kind} longer than 320 characters")
    return value.lower() if kind == EMAIL else value


def suppress(kind: str, value: str) -> bool:
    """Add a person to the list; answers False when they were on it already."""
    value = normalized(kind, value)
    with database.atomic():
        listed = PersonSuppression.select().where(
            (PersonSuppression.kind == kind) & (PersonSuppression.value == value)
        )
        if listed.exists():
            return False
        PersonSuppression.insert(
            kind=kind, value=value, created_at=utcnow()
        ).on_conflict_ignore().execute()
    return True


def unsuppress(kind: str, value: str) -> bool:
    """Take a person off the list; answers whether they were on it."""
    return bool(
        PersonSuppression.delete()
        .where(
            (PersonSuppression.kind == kind) & (PersonSuppression.value == normalized(kind, value))
        )
        .execute()
    )


def entries() -> list[PersonSuppression]:
    return list(
        PersonSuppression.select().order_by(PersonSuppression.created_at, PersonSuppression.id)
    )


def _values() -> tuple[list[str], list[str]]:
    """(ids, emails) on the list."""
    ids, emails = [], []
    for kind, value in PersonSuppression.select(
        PersonSuppression.kind, PersonSuppression.value
    ).tuples():
        (ids if kind == ID else emails).append(value)
    return ids, emails


def excluding(query: dict) -> tuple[dict, bool]:
    """(the search query with the suppressed people excluded, whether anyone is on the list); the
    query unchanged when the list is empty."""
    ids, emails = _values()
    if not ids and not emails:
        return query, False
    must_not = ([{"terms": {"id": ids}}] if ids else []) + [
        {"terms": {field: emails}} for field in EMAIL_FIELDS if emails
    ]
    return {"bool": {"must": [query], "must_not": must_not}}, True


def record_emails(record: dict) -> set[str]:
    """Every email a profile carries, lower-cased."""
    found = set()
    for item in record.get("emails") or ():
        address = item.get("address") if isinstance(item, dict) else item
        if isinstance(address, str):
            found.add(address.lower())
    for name in ("work_email", "personal_emails"):
        values = record.get(name)
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, str):
                found.add(value.lower())
    return found


def unsuppressed(records: list[dict]) -> list[dict]:
    """The records whose person is not on the list (by id, or by any of their emails), in their
    order."""
    ids = [record["id"] for record in records if isinstance(record.get("id"), str)]
    emails = sorted(set().union(*(record_emails(record) for record in records))) if records else []
    if not ids and not emails:
        return list(records)
    listed_ids, listed_emails = set(), set()
    query = PersonSuppression.select(PersonSuppression.kind, PersonSuppression.value).where(
        ((PersonSuppression.kind == ID) & PersonSuppression.value.in_(ids or [""]))
        | ((PersonSuppression.kind == EMAIL) & PersonSuppression.value.in_(emails or [""]))
    )
    for kind, value in query.tuples():
        (listed_ids if kind == ID else listed_emails).add(value)
    if not listed_ids and not listed_emails:
        return list(records)
    return [
        record
        for record in records
        if record.get("id") not in listed_ids and not (record_emails(record) & listed_emails)
    ]


def is_suppressed(record: dict) -> bool:
    return not unsuppressed([record])
