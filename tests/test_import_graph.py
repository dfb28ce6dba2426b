"""The code flows one way: no import cycle among the modules of app/ and plugins/, imports inside
functions included."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "plugins")


def module_files(root: Path = ROOT, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every module under the checked packages (a package is its
    __init__.py)."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def imported_modules(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The checked modules that the file's import statements name, wherever they stand, relative
    imports resolved.

    `from pkg import name` imports the module `pkg.name` when there is one, else `pkg` (where `name`
    is defined); an import's edge goes to the module named, not to the packages above it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                source = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                found.add(
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                )
    return {name for name in found if name in modules and name != module}


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of app/ and plugins/ it imports."""
    modules = module_files()
    return {module: imported_modules(module, path, modules) for module, path in modules.items()}


def components(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan): each holds at least one
    cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def shortest_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """The shortest cycle through the component's first module (breadth-first inside the
    component)."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & component):
                if target == start:
                    return paths[node] + [start]
                if target not in paths:
                    paths[target] = paths[node] + [target]
                    following.append(target)
        frontier = following
    # cannot happen: a component is strongly connected
    raise AssertionError(f"no cycle through {start} in its component")


def describe(graph: dict[str, set[str]], component: set[str]) -> str:
    """A cycle of the component, and every import between its modules (each of which may be the one
    to remove)."""
    edges = [
        f"{source} -> {target}"
        for source in sorted(component)
        for target in sorted(graph[source] & component)
    ]
    return (
        "  "
        + " -> ".join(shortest_cycle(graph, component))
        + "\n"
        + "".join(f"      {edge}\n" for edge in edges)
    )


def test_app_and_plugins_have_no_import_cycle():
    graph = import_graph()
    found = components(graph)
    assert not found, "import cycles:\n" + "".join(
        describe(graph, component) for component in found
    )


def test_the_check_sees_relative_imports_inside_functions_and_reports_their_cycle(tmp_path):
    files = {
        "__init__.py": "",
        "a.py": "def later():\n    from . import b\n",
        "b.py": "from pkg.a import later\n",
        "c.py": "from .a import later\nimport pkg.b\n",
    }
    (tmp_path / "pkg").mkdir()
    for name, text in files.items():
        (tmp_path / "pkg" / name).write_text(text)
    modules = module_files(tmp_path, ("pkg",))
    graph = {module: imported_modules(module, path, modules) for module, path in modules.items()}
    assert graph == {
        "pkg": set(),
        "pkg.a": {"pkg.b"},
        "pkg.b": {"pkg.a"},
        "pkg.c": {"pkg.a", "pkg.b"},
    }
    assert components(graph) == [{"pkg.a", "pkg.b"}]
    assert describe(graph, {"pkg.a", "pkg.b"}).startswith("  pkg.a -> pkg.b -> pkg.a\n")


def test_the_core_never_imports_a_family():
    """app/ stands under plugins/: families are found by the registry (app.plugins), never imported
    by the core."""
    graph = import_graph()
    reaching_up = {
        module: sorted(name for name in imported if name.split(".")[0] == "plugins")
        for module, imported in graph.items()
        if module.split(".")[0] == "app"
    }
    assert not {module: names for module, names in reaching_up.items() if names}
