"""The core (app/) names no family: names, event types and operation ids come from plugins/."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from app.plugins import available, core, event_types, load_plugin

ROOT = Path(__file__).resolve().parent.parent

# Strings of app/'s code equal to a family's name that mean something else there: string -> the
# files allowed it (None: any)
OTHER_MEANINGS = {
    # the column naming a row's tenant (app.data.tenancy), in every file that builds rows or indexes
    "tenant": None,
    "events": {"app/data/events.py"},  # the event store's table
    # the default search index's name and directory (the dataset's, not the routes')
    "person": {"app/config.py"},
}


def code_strings(path: Path):
    """(line, text) of every string constant of the file's code: docstrings are not code, f-string
    parts are."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = set()
    for node in ast.walk(tree):
        documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(node, documented) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            yield node.lineno, node.value


def family_words() -> dict[str, str]:
    """What the families declare, each with what it is: names, event types, operation ids."""
    plugins = [load_plugin(name) for name in (*core(), *available())]
    words = {plugin.name: "a family's name" for plugin in plugins}
    words.update((name, "an event type") for name in event_types(plugins))
    blueprints = {blueprint.name for plugin in plugins for blueprint in plugin.blueprints}
    document = json.loads((ROOT / "docs" / "openapi.json").read_text())
    for operations in document["paths"].values():
        for operation in operations.values():
            if isinstance(operation, dict) and set(operation.get("tags", ())) & blueprints:
                words[operation["operationId"]] = "a family's operation id"
    return words


def named_families(words: dict[str, str], root: Path = ROOT) -> list[str]:
    found = []
    for path in sorted((root / "app").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        for line, text in code_strings(path):
            if text not in words:
                continue
            allowed = OTHER_MEANINGS.get(text, set())
            if text in OTHER_MEANINGS and (allowed is None or relative in allowed):
                continue
            found.append(f"{relative}:{line}: {text!r} is {words[text]}")
    return found


def test_the_core_names_no_family_event_type_or_operation():
    found = named_families(family_words())
    assert not found, "app/ names what plugins/ declares:\n" + "\n".join(found)


def test_the_check_sees_code_strings_but_not_docstrings(tmp_path):
    (tmp_path / "app").mkdir()
    source = '"""jobs"""\n\n\ndef f():\n    """jobs"""\n    return f"{1}jobs", "jobs"\n'
    (tmp_path / "app" / "m.py").write_text(source)
    found = named_families({"jobs": "a family's name"}, tmp_path)
    assert found == ["app/m.py:6: 'jobs' is a family's name"] * 2
