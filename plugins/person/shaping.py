"""PDL's output options on person answers: `data_include` (keep or drop dotted fields), `titlecase`
and `pretty`.

Records are stored lowercase; `titlecase=true` capitalizes the words of names, titles, companies,
schools and places. `data_include="a,b.c"` keeps those paths (through object arrays:
`experience.title.name` keeps only that inside each job); a string beginning with `-` drops the
listed paths instead; `""` answers each record as `{}`. `pretty=true` indents.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

import orjson

from app.errors import ApiError

OPTION_NAMES = ("data_include", "titlecase", "pretty")
TITLECASE_PATHS = (
    "full_name",
    "first_name",
    "middle_name",
    "last_name",
    "job_title",
    "job_company_name",
    "location_name",
    "location_locality",
    "location_region",
    "location_country",
    "location_metro",
    "experience.title.name",
    "experience.company.name",
    "education.school.name",
)
_PATH = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")
_WORD_START = re.compile(r"(^|[\s\-/(&])([^\W\d_])")


@dataclass(frozen=True)
class OutputOptions:
    data_include: str | None = None
    titlecase: bool = False
    pretty: bool = False

    @property
    def plain(self) -> bool:
        """Nothing to change: the answer is served as the service built it."""
        return self.data_include is None and not self.titlecase and not self.pretty

    @classmethod
    def take(cls, params: dict) -> "OutputOptions":
        """The options, removed from the validated parameters (the services never see them); 400 on
        a bad data_include."""
        options = cls(
            params.pop("data_include", None),
            bool(params.pop("titlecase", False)),
            bool(params.pop("pretty", False)),
        )
        if options.data_include is not None:
            parse_data_include(options.data_include)
        return options


# Where an answer keeps its records: each layout lists (container, key) pairs whose value is one
# record.
Layout = Callable[[object], Iterable[tuple]]


def hits(body) -> Iterable[tuple]:
    """Search answers: {"data": [record, ...]}."""
    data = body.get("data") or []
    return [(data, index) for index in range(len(data))]


def record(body) -> Iterable[tuple]:
    """Enrich and retrieve answers: {"data": record}."""
    return [(body, "data")] if isinstance(body.get("data"), dict) else []


def items(body) -> Iterable[tuple]:
    """The bulk enrich answer: {"data": [{"data": record, ...}, ...]}."""
    return [(item, "data") for item in body.get("data") or [] if isinstance(item.get("data"), dict)]


def array_items(body) -> Iterable[tuple]:
    """PDL's bulk answer: [{"data": record, ...}, ...]."""
    return [(item, "data") for item in body if isinstance(item.get("data"), dict)]


def matches(body) -> Iterable[tuple]:
    """Identify's answer: {"matches": [{"data": record, ...}, ...]}."""
    return [
        (match, "data")
        for match in body.get("matches") or []
        if isinstance(match.get("data"), dict)
    ]


def shape(body, layout: Layout, options: OutputOptions):
    """The answer with every record it holds passed through the options (titlecase first, then
    data_include)."""
    for container, key in layout(body):
        container[key] = shape_record(container[key], options)
    return body


def shape_record(person: dict, options: OutputOptions) -> dict:
    if options.titlecase:
        person = titlecase_record(person)
    if options.data_include is not None:
        excluding, tree = parse_data_include(options.data_include)
        person = _exclude(person, tree) if excluding else _include(person, tree)
    return person


def render(body, options: OutputOptions) -> bytes:
    return orjson.dumps(body, option=orjson.OPT_INDENT_2 if options.pretty else 0)


# ---- titlecase ------------------------------------------------------------------


def title_case(text: str) -> str:
    """Each word's first letter upper-cased, the rest as stored: "san francisco" -> "San Francisco",
    "jean-luc" -> "Jean-Luc"."""
    return _WORD_START.sub(lambda m: m.group(1) + m.group(2).upper(), text)


def titlecase_record(person: dict) -> dict:
    out = dict(person)
    for path in TITLECASE_PATHS:
        _titlecase_path(out, path.split("."))
    return out


def _titlecase_path(node: dict, keys: list[str]) -> None:
    """Title-cases the strings at the path in place, copying each object array and object it
    descends into."""
    head, rest = keys[0], keys[1:]
    value = node.get(head)
    if value is None:
        return
    if not rest:
        if isinstance(value, str):
            node[head] = title_case(value)
        elif isinstance(value, list):
            node[head] = [title_case(v) if isinstance(v, str) else v for v in value]
        return
    if isinstance(value, dict):
        node[head] = copy = dict(value)
        _titlecase_path(copy, rest)
    elif isinstance(value, list):
        copies = [dict(item) if isinstance(item, dict) else item for item in value]
        for item in copies:
            if isinstance(item, dict):
                _titlecase_path(item, rest)
        node[head] = copies


# ---- data_include -----------------------------------------------------------------


@lru_cache(maxsize=256)
def parse_data_include(text: str) -> tuple[bool, dict]:
    """(excluding, tree of the paths: {"experience": {"title": {"name": True}}}); 400 naming a
    malformed path."""
    parts = [part.strip() for part in text.split(",")]
    parts = [part for part in parts if part]
    excluding = bool(parts) and parts[0].startswith("-")
    tree: dict = {}
    for part in parts:
        if part.startswith("-"):
            if not excluding:
                raise ApiError(
                    400,
                    f"data_include: {part!r} excludes while the list includes; begin the whole "
                    "list with - "
                    "to exclude (e.g. -emails,phone_numbers)",
                    fields={"data_include": ["Cannot mix includes and excludes."]},
                )
            part = part[1:]
        if not _PATH.match(part):
            raise ApiError(
                400,
                f"data_include: {part!r} is not a field path (letters, digits, _ and dots, e.g. "
                "experience.title.name)",
                fields={"data_include": [f"Not a field path: {part!r}."]},
            )
        node = tree
        keys = part.split(".")
        for key in keys[:-1]:
            child = node.setdefault(key, {})
            if child is True:
                break
            node = child
        else:
            node[keys[-1]] = True
    return excluding, tree


def _include(value, tree):
    if tree is True:
        return value
    if isinstance(value, list):
        kept = [_include(item, tree) for item in value if isinstance(item, dict)]
        return kept
    if isinstance(value, dict):
        return {key: _include(value[key], sub) for key, sub in tree.items() if key in value}
    return None


def _exclude(value, tree):
    if isinstance(value, list):
        return [_exclude(item, tree) for item in value]
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            sub = tree.get(key)
            if sub is True:
                continue
            kept[key] = _exclude(item, sub) if sub else item
        return kept
    return value
