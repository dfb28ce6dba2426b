"""No code in app/ or plugins/ reaches into a library's private parts unless a ledger beside it says
so.

What counts as reaching in, found in the code itself (not kept by hand):
- a class overriding an underscore (or name-mangled) attribute that a third-party base class
  defines, but for the hooks a library documents for overriding (a marshmallow field's `_serialize`
  / `_deserialize`), and any method overridden on a base class its library does not document for
  subclassing (INTERNAL_BASES);
- `obj._name` read or written where `_name` is nothing the project defines (so a library's);
- a name-mangled attribute (`_Class__name`), a double-underscore keyword argument
  (`Model(__no_default__=1)`);
- SQL text taken from a query builder (`.sql()`) to be cut or rewritten.

A module that must keep such a reach declares it in `PRIVATE_OVERRIDES` ({distribution: {what: the
figure a user would notice without it}}); each library is reached from one module at most, every
ledger entry must still be found in the code, and setup.cfg binds the distributions named to one
minor version (tests/test_dependency_pins.py)."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pkgutil
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "plugins")

# Underscore hooks their library documents as the way to extend it.
DOCUMENTED_HOOKS = {
    ("marshmallow.fields", "Field", "_serialize"),
    ("marshmallow.fields", "Field", "_deserialize"),
}
# Base classes whose methods their library does not document for overriding: any override is a
# reach.
INTERNAL_BASES = {("gunicorn.workers.gthread", "ThreadWorker")}
# Underscore names their library documents for use: werkzeug's LocalProxy._get_current_object
# (flask.g, request),
# namedtuple's _replace / _asdict / _fields / _make.
DOCUMENTED_NAMES = {"_get_current_object", "_replace", "_asdict", "_fields", "_make"}


def project_files() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_mangled(name: str) -> bool:
    head, _, rest = name.lstrip("_").partition("__")
    return (
        name.startswith("_")
        and not name.startswith("__")
        and bool(head)
        and bool(rest)
        and head[0].isupper()
    )


def library_of(module: str) -> str | None:
    """The top-level package of a module that is neither the project's nor built in."""
    top = module.split(".")[0]
    if top in PACKAGES or top == "builtins":
        return None
    return top


def names_the_project_defines(trees: dict[str, ast.Module]) -> set[str]:
    defined: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.arg):
                defined.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                defined.add(node.attr)
            elif isinstance(node, ast.alias):
                defined.add((node.asname or node.name).split(".")[0])
            elif isinstance(
                node, ast.Call
            ):  # setattr(obj, "_x", ...) and namedtuple/dataclass-like field strings
                for arg in node.args:
                    if (
                        isinstance(arg, ast.Constant)
                        and isinstance(arg.value, str)
                        and arg.value.isidentifier()
                    ):
                        defined.add(arg.value)
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value.isidentifier()
            ):
                defined.add(node.value)  # __slots__ entries, dict keys of type() namespaces
    return defined


def text_findings(module: str, tree: ast.Module, defined: set[str]) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if is_mangled(node.attr):
                found.add(f"name-mangled .{node.attr}")
            elif (
                is_private(node.attr)
                and node.attr not in defined
                and node.attr not in DOCUMENTED_NAMES
            ):
                found.add(f"private .{node.attr}")
            elif node.attr == "sql" and query_builder_text(node):
                found.add("SQL text taken from .sql()")
        elif isinstance(node, ast.ImportFrom) and node.module and library_of(node.module):
            found |= {
                f"private import {node.module}.{alias.name}"
                for alias in node.names
                if is_private(alias.name)
            }
        elif isinstance(node, ast.keyword) and node.arg and node.arg.startswith("__"):
            found.add(f"keyword {node.arg}=")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_mangled(node.name):
            found.add(f"name-mangled {node.name}")
    return found


# str methods that cut or rewrite text
TEXT_EDITS = {
    "replace",
    "split",
    "rsplit",
    "partition",
    "rpartition",
    "strip",
    "lstrip",
    "rstrip",
    "removeprefix",
    "removesuffix",
    "format",
    "translate",
}


def query_builder_text(node: ast.Attribute) -> bool:
    """`query.sql()` whose SQL text is then cut or rewritten (sliced, concatenated, formatted or
    edited by a str method), read where the (sql, params) answer is indexed or unpacked. Text run
    as peewee wrote it is peewee's documented use of `Query.sql`."""
    call = getattr(node, "parent", None)
    if not isinstance(call, ast.Call) or call.func is not node:
        return False
    user = getattr(call, "parent", None)
    if isinstance(user, ast.Subscript):
        return text_is_edited(user)
    if isinstance(user, ast.Assign):
        for target in user.targets:
            if isinstance(target, ast.Tuple) and isinstance(target.elts[0], ast.Name):
                return any(text_is_edited(use) for use in name_uses(user, target.elts[0].id))
    return False


def text_is_edited(expression: ast.expr) -> bool:
    """Whether the text `expression` stands for is cut or rewritten where it is used."""
    user = getattr(expression, "parent", None)
    if isinstance(user, ast.Attribute):
        return user.attr in TEXT_EDITS
    if isinstance(user, (ast.BinOp, ast.FormattedValue)):
        return True
    if isinstance(user, ast.Subscript) and user.value is expression:
        return isinstance(user.slice, ast.Slice) or text_is_edited(user)
    return False


def name_uses(statement: ast.stmt, name: str) -> list[ast.Name]:
    """The reads of `name` in the function (or module) around `statement`."""
    scope = statement
    while not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        scope = scope.parent
    return [
        node
        for node in ast.walk(scope)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
    ]


def class_bodies(tree: ast.Module) -> dict[str, tuple[set[str], set[str]]]:
    """{class qualname: (the names its body defines, the private `self._x` attributes its methods
    touch)} for the classes written in a module."""
    bodies: dict[str, tuple[set[str], set[str]]] = {}

    def visit(node, prefix: str) -> None:
        for child in getattr(node, "body", ()):
            if isinstance(child, ast.ClassDef):
                names = set()
                touched = {
                    item.attr
                    for item in ast.walk(child)
                    if isinstance(item, ast.Attribute)
                    and isinstance(item.value, ast.Name)
                    and item.value.id == "self"
                    and is_private(item.attr)
                }
                for item in child.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        names.add(item.name)
                    elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                        targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                        names |= {target.id for target in targets if isinstance(target, ast.Name)}
                bodies[prefix + child.name] = (names, touched)
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return bodies


@functools.lru_cache(maxsize=None)
def source_of(cls) -> str:
    try:
        return inspect.getsource(cls)
    except (OSError, TypeError):  # built in
        return ""


def class_findings(module, tree: ast.Module | None = None) -> set[str]:
    found = set()
    bodies = class_bodies(tree if tree is not None else ast.parse(inspect.getsource(module)))
    for cls in vars(module).values():
        if not inspect.isclass(cls) or cls.__module__ != module.__name__:
            continue
        written, touched = bodies.get(cls.__qualname__, (set(), set()))
        for base in cls.__mro__[1:]:
            if library_of(base.__module__) is None:
                continue
            base_source = source_of(base)
            found |= {
                f"{cls.__qualname__} touches self.{name} of {base.__module__}.{base.__qualname__}"
                for name in touched
                if f"self.{name}" in base_source
            }
            internal = (base.__module__, base.__qualname__) in INTERNAL_BASES
            for name in vars(cls):
                if (
                    name not in written
                    or name not in vars(base)
                    or (name.startswith("__") and name.endswith("__"))
                ):
                    continue
                documented = any(
                    (klass.__module__, klass.__qualname__, name) in DOCUMENTED_HOOKS
                    for klass in base.__mro__
                )
                if (internal or is_private(name)) and not documented:
                    found.add(
                        f"{cls.__qualname__}.{name} overrides {base.__module__}.{base.__qualname__}"
                    )
    return found


def parsed(source: str, filename: str = "<scratch>") -> ast.Module:
    """The module's syntax tree, each node knowing its parent (what the scan reads)."""
    tree = ast.parse(source, filename)
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child.parent = node
    return tree


@functools.lru_cache(maxsize=1)
def findings_by_module() -> dict[str, set[str]]:
    trees = {}
    for path in project_files():
        trees[module_name(path)] = parsed(path.read_text(), str(path))
    defined = names_the_project_defines(trees)
    found: dict[str, set[str]] = defaultdict(set)
    for name, tree in trees.items():
        found[name] |= text_findings(name, tree, defined)
    for package in PACKAGES:
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            if info.name in trees:  # not a compiled extension
                found[info.name] |= class_findings(
                    importlib.import_module(info.name), trees[info.name]
                )
    return {name: items for name, items in found.items() if items}


@functools.lru_cache(maxsize=1)
def ledgers_by_distribution() -> dict[str, dict[str, dict[str, str]]]:
    """{module: its PRIVATE_OVERRIDES} for every module that declares one."""
    return {
        module_name(path): importlib.import_module(module_name(path)).PRIVATE_OVERRIDES
        for path in project_files()
        if "\nPRIVATE_OVERRIDES" in path.read_text()
    }


def ledgers() -> dict[str, dict[str, str]]:
    """{module: {what: figure}} over every distribution the module's ledger names."""
    return {
        name: {what: why for entries in ledger.values() for what, why in entries.items()}
        for name, ledger in ledgers_by_distribution().items()
    }


def distributions_overridden() -> set[str]:
    """The distributions some ledger names: setup.cfg binds each to one minor version."""
    return {
        distribution for ledger in ledgers_by_distribution().values() for distribution in ledger
    }


def test_every_reach_into_a_library_is_in_its_modules_ledger_and_every_entry_is_still_there():
    found, declared = findings_by_module(), ledgers()
    unlisted = {name: sorted(items - set(declared.get(name, {}))) for name, items in found.items()}
    assert not {name: items for name, items in unlisted.items() if items}, (
        "private parts of libraries reached without a ledger entry (move onto the library's "
        "documented API, or list "
        "it in the module's PRIVATE_OVERRIDES with the figure a user would notice without it)"
    )
    stale = {
        name: sorted(set(entries) - found.get(name, set())) for name, entries in declared.items()
    }
    assert not {name: items for name, items in stale.items() if items}, (
        "ledger entries the code no longer has"
    )


def test_each_ledger_entry_names_a_figure_a_user_would_notice():
    for name, entries in ledgers().items():
        for what, why in entries.items():
            assert any(character.isdigit() for character in why), (
                f"{name}: {what}: no figure beside it"
            )


def test_each_library_is_reached_from_one_fenced_module_at_most():
    modules_by_library: dict[str, set[str]] = defaultdict(set)
    for name, ledger in ledgers_by_distribution().items():
        for distribution, entries in ledger.items():
            if entries:
                modules_by_library[distribution].add(name)
    assert {
        library: sorted(names) for library, names in modules_by_library.items() if len(names) > 1
    } == {}


def test_the_scan_finds_what_it_looks_for():
    """The scan is not blind: each kind of reach, written in a scratch module, is found."""
    sample = parsed(
        "import peewee as pw\n"
        "row = pw.Model(__no_default__=1)\n"
        "state = db._state.commit_callbacks\n"
        "store._MemoryStorage__expire_events()\n"
        "sql = query.sql()[0].rsplit(' LIMIT ', 1)[0]\n"
        "def kept(query):\n"
        "    text, params = query.sql()\n"
        "    return db.execute_sql(text, params)\n"
    )
    assert text_findings("scratch", sample, set()) == {
        "keyword __no_default__=",
        "private ._state",
        "name-mangled ._MemoryStorage__expire_events",
        "SQL text taken from .sql()",
    }
    rewritten = parsed(
        "def prepare(query):\n"
        "    text, params = query.sql()\n"
        "    return text.replace('%s', '$1'), params\n"
    )
    assert text_findings("scratch", rewritten, set()) == {"SQL text taken from .sql()"}

    import types

    import marshmallow as ma
    from werkzeug.routing import Rule

    scratch = types.ModuleType("app.scratch_overrides")

    class SharedRule(Rule):
        def _compile_builder(self, append_unknown=True):
            return super()._compile_builder(append_unknown)

    class Upper(ma.fields.String):
        def _serialize(self, value, attr, obj, **kwargs):
            return str(value).upper()

    for cls in (SharedRule, Upper):
        cls.__module__ = scratch.__name__
        cls.__qualname__ = cls.__name__
        setattr(scratch, cls.__name__, cls)
    body = ast.parse(
        "class SharedRule:\n    def _compile_builder(self): pass\n"
        "class Upper:\n    def _serialize(self): pass\n"
    )
    assert class_findings(scratch, body) == {
        "SharedRule._compile_builder overrides werkzeug.routing.rules.Rule"
    }
