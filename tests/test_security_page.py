"""docs/security.md's cost-bound table states the values the code has, names tests that exist, and
lists every bound of the person query budget."""

import importlib
import re
from pathlib import Path

from app import config
from plugins.person import query_budget

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "security.md"
UNITS = {"MiB": 1024 * 1024, "KiB": 1024}


def bound_rows() -> list[list[str]]:
    section = PAGE.read_text().split("## Cost bounds", 1)[1]
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("| bound ")
    ]
    assert len(rows) >= 20
    return rows


def stated_number(value: str) -> float:
    """The value cell's leading number, in bytes when it carries a unit: "16 MiB, raised..." ->
    16777216."""
    number = re.match(r"([\d,.]+)\s*(MiB|KiB)?", value)
    assert number, value
    return float(number[1].replace(",", "")) * UNITS.get(number[2], 1)


def code_values(where: str) -> list[object]:
    """What the code holds for a `where` cell: a setting's default, and/or a module constant."""
    values = []
    for name in re.findall(r"`HIREKIT_([A-Z0-9_]+)`", where):
        values.append(
            config.DEFAULTS[name] if name in config.DEFAULTS else config.PROCESS_VARIABLES[name][0]
        )
    for path, constant in re.findall(r"`([\w/]+)\.py` `([A-Z0-9_]+)`", where):
        values.append(getattr(importlib.import_module(path.replace("/", ".")), constant))
    assert values, where
    return values


def test_each_stated_bound_is_the_codes_value():
    for bound, value, where, _beyond, _test in bound_rows():
        for actual in code_values(where):
            if isinstance(actual, str) and not re.fullmatch(r"[\d.]+", actual):
                assert actual in value, (bound, value, actual)
            else:
                assert stated_number(value) == float(actual), (bound, value, actual)


def test_each_bound_names_a_test_that_exists():
    for bound, *_, test in bound_rows():
        for path in re.findall(r"`(tests/[\w/]+\.py)`", test):
            assert (ROOT / path).is_file(), (bound, path)


def test_every_person_query_bound_is_listed():
    constants = {
        name
        for name, value in vars(query_budget).items()
        if name.isupper() and isinstance(value, int)
    }
    listed = {
        constant
        for *_, where, _beyond, _test in bound_rows()
        for constant in re.findall(r"`([A-Z_]+)`", where)
    }
    assert constants - listed == set()
