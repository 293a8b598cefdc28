"""No import cycles among the project's modules, and no import hidden in a function to dodge one.

A cycle makes the order modules load in matter, and an import tucked inside a function only
hides the cycle from the reader while keeping it. The walk reads every module with :mod:`ast`
(nothing is executed), takes each module-to-module import as an edge (imports under
``if TYPE_CHECKING:`` too: a module that needs another's types to be read depends on it as
much as one that runs it, and a circle of them is one a reader walks in; the packages a module
sits in are edges as well, since importing it runs their ``__init__``), and looks for strongly
connected components.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = tuple(
    f"amws_conformance/{part}"
    for part in ("spec", "harness", "suites", "fixtures", "reference_server", "selfcheck")
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {
    _module_name(path): path
    for package in PACKAGES
    for path in sorted((ROOT / package).rglob("*.py"))
}


def _imports(node: ast.AST, in_function: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    """Every import statement, type-only ones included, with whether it sits in a function."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, in_function
        nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
        yield from _imports(child, nested)


def _targets(module: str, node: ast.AST) -> set[str]:
    """The project modules an import statement loads (the deepest one each name reaches)."""
    names: set[str] = set()
    if isinstance(node, ast.Import):
        names.update(alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = module.split(".")
            is_package = MODULES[module].name == "__init__.py"
            package = package[: len(package) - node.level + (1 if is_package else 0)]
            base = ".".join([*package, base] if base else package)
        for alias in node.names:
            names.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    found = set()
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        # Importing a module runs its packages' __init__ first: each is an edge too (so
        # importing ``faults._model`` loads the whole ``faults`` package). A module's own
        # packages load before it, though; naming one is no edge back.
        while name:
            if name in MODULES and name != module and not module.startswith(name + "."):
                found.add(name)
            name = name.rpartition(".")[0]
    return found


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[module] = set()
        for node, _ in _imports(tree):
            graph[module] |= _targets(module, node)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_walk_sees_a_cycle_when_there_is_one() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_a_type_only_import_is_an_edge() -> None:
    source = "from amws_conformance.reference_server._server import ServerView"
    tree = ast.parse(f"if TYPE_CHECKING:\n    {source}\n")
    (node, in_function), *_ = _imports(tree)
    assert not in_function
    assert "amws_conformance.reference_server._server" in _targets(
        "amws_conformance.reference_server._policy", node
    )


def test_importing_a_module_loads_its_packages_too() -> None:
    # Python runs reference_server/faults/__init__.py (which loads every fault module) before
    # faults/_model.py; a package the importer itself sits in has already run.
    tree = ast.parse("from amws_conformance.reference_server.faults._model import Faults")
    assert _targets("amws_conformance.reference_server._state", tree.body[0]) == {
        "amws_conformance.reference_server.faults._model",
        "amws_conformance.reference_server.faults",
    }


def test_there_are_no_import_cycles_among_the_project_modules() -> None:
    cycles = _cycles(_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_project_import_hides_inside_a_function() -> None:
    hidden = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, in_function in _imports(tree):
            if in_function and _targets(module, node):
                hidden.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}")
    assert not hidden, "imports inside functions (move them to the top):\n" + "\n".join(hidden)
