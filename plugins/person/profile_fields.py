"""The one definition of a person record's fields and their kinds; the index layouts, the DSL
validator and the mapping derive from it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

KEYWORD = "keyword"
TEXT = "text"
INTEGER = "integer"
FLOAT = "float"
DATE = "date"
BOOLEAN = "boolean"
KINDS = (KEYWORD, TEXT, INTEGER, FLOAT, DATE, BOOLEAN)

DATE_FORMAT = "yyyy-MM-dd||yyyy-MM||yyyy"

# path -> kind; object arrays are flattened into dotted paths (Elasticsearch's non-nested objects).
_TOP_LEVEL = {
    "id": KEYWORD,
    "full_name": KEYWORD,
    "first_name": KEYWORD,
    "middle_name": KEYWORD,
    "last_name": KEYWORD,
    "sex": KEYWORD,
    "birth_year": INTEGER,
    "linkedin_url": KEYWORD,
    "linkedin_id": KEYWORD,
    "work_email": KEYWORD,
    "personal_emails": KEYWORD,
    "phone_numbers": KEYWORD,
    "industry": KEYWORD,
    "job_title": TEXT,
    "job_title_role": KEYWORD,
    "job_title_sub_role": KEYWORD,
    "job_title_levels": KEYWORD,
    "job_company_name": KEYWORD,
    "job_company_industry": KEYWORD,
    "job_company_size": KEYWORD,
    "job_start_date": DATE,
    "location_name": KEYWORD,
    "location_locality": KEYWORD,
    "location_region": KEYWORD,
    "location_country": KEYWORD,
    "skills": KEYWORD,
    "interests": KEYWORD,
    "inferred_years_experience": INTEGER,
    "summary": TEXT,
    "dataset_version": KEYWORD,
}

_OBJECT_ARRAYS = {
    "emails": {"address": KEYWORD, "type": KEYWORD},
    "experience": {
        "company.id": KEYWORD,
        "company.name": KEYWORD,
        "company.website": KEYWORD,
        "company.size": KEYWORD,
        "company.industry": KEYWORD,
        "title.name": TEXT,
        "title.role": KEYWORD,
        "title.sub_role": KEYWORD,
        "title.levels": KEYWORD,
        "start_date": DATE,
        "end_date": DATE,
        "is_primary": BOOLEAN,
    },
    "education": {
        "school.id": KEYWORD,
        "school.name": KEYWORD,
        "school.type": KEYWORD,
        "degrees": KEYWORD,
        "majors": KEYWORD,
        "minors": KEYWORD,
        "gpa": FLOAT,
        "start_date": DATE,
        "end_date": DATE,
    },
    "profiles": {"network": KEYWORD, "id": KEYWORD, "url": KEYWORD, "username": KEYWORD},
}

# Top-level fields that hold a list of values; every other top-level field holds one value (a list
# there is malformed).
ARRAY_FIELDS = frozenset(
    {"personal_emails", "phone_numbers", "job_title_levels", "skills", "interests"}
)

# Contact details: answered by "enrich with additional profile info", removed from plain v2 enrich.
CONTACT_FIELDS = (
    "work_email",
    "personal_emails",
    "emails",
    "phone_numbers",
    "profiles",
    "linkedin_url",
    "linkedin_id",
)


@dataclass(frozen=True)
class Field:
    """One searchable path: its kind, whether it sits inside an object array, whether it holds a
    list, and whether it sorts."""

    path: str
    kind: str
    in_object_array: bool
    multi: bool = False

    @property
    def sortable(self) -> bool:
        return self.kind != TEXT and not self.in_object_array


def _build_fields() -> dict[str, Field]:
    fields = {
        path: Field(path, kind, False, path in ARRAY_FIELDS) for path, kind in _TOP_LEVEL.items()
    }
    for parent, children in _OBJECT_ARRAYS.items():
        for sub, kind in children.items():
            path = f"{parent}.{sub}"
            fields[path] = Field(path, kind, True, True)
    return fields


FIELDS: dict[str, Field] = _build_fields()
OBJECT_ARRAYS: dict[str, tuple[str, ...]] = {
    parent: tuple(children) for parent, children in _OBJECT_ARRAYS.items()
}


def _object_paths() -> frozenset[str]:
    """Every path that names an object (experience, experience.company, ...): valid in `exists`
    only."""
    paths = set()
    for path in FIELDS:
        parts = path.split(".")
        for depth in range(1, len(parts)):
            paths.add(".".join(parts[:depth]))
    return frozenset(paths)


OBJECT_PATHS = _object_paths()


def field(path: str) -> Field | None:
    return FIELDS.get(path)


def elasticsearch_mapping() -> dict:
    """The index mapping both backends answer on GET /v2/person/schema and `person create-index`
    sends to Elasticsearch."""
    properties: dict = {}
    for f in FIELDS.values():
        node = properties
        parts = f.path.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {"properties": {}})["properties"]
        node[parts[-1]] = _leaf_mapping(f.kind)
    return {"dynamic": False, "properties": properties}


def _leaf_mapping(kind: str) -> dict:
    if kind == TEXT:
        return {"type": "text", "analyzer": "standard"}
    if kind == INTEGER:
        return {"type": "long"}
    if kind == FLOAT:
        return {"type": "double"}
    if kind == DATE:
        return {"type": "date", "format": DATE_FORMAT}
    if kind == BOOLEAN:
        return {"type": "boolean"}
    return {"type": "keyword"}


def parse_date(value) -> dt.date:
    """yyyy-MM-dd, yyyy-MM or yyyy (missing parts default to the first), as Elasticsearch's date
    format does; ValueError otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        return dt.date(value, 1, 1)
    if not isinstance(value, str):
        raise ValueError("not a date")
    text = value.strip()[:10]
    parts = text.split("-")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts) or len(parts[0]) != 4:
        raise ValueError(f"{value!r} is not yyyy-MM-dd, yyyy-MM or yyyy")
    numbers = [int(p) for p in parts] + [1] * (3 - len(parts))
    return dt.date(*numbers)


def date_ordinal(value) -> int:
    """Days since 0001-01-01: the integer the embedded engine stores for a date."""
    return parse_date(value).toordinal()


def require_id(record: dict) -> str:
    if not isinstance(record.get("id"), str) or not record["id"]:
        raise ValueError("id: missing or not a string")
    return record["id"]
