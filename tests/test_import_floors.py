"""SPEC §2: who may import whom. Any upward import or cycle between our packages fails here."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Each package and the packages of ours it may import.
FLOORS: dict[str, set[str]] = {
    "core": set(),
    "judging": {"core"},
    "players": {"core"},
    "notifications": {"core", "players"},
    "challenges": {"core", "players", "judging", "notifications"},
    "redblue": {"core", "players", "judging", "notifications", "challenges"},
    "config": {"core", "players", "judging", "notifications", "challenges", "redblue"},
}
OURS = set(FLOORS)


def python_files(package: str) -> list[Path]:
    return [path for path in (ROOT / package).rglob("*.py") if "migrations" not in path.parts]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> set[str]:
    """Every module of ours the file imports, at the top or inside a function."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] in OURS}


def all_modules() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for package in FLOORS:
        for path in python_files(package):
            graph[module_name(path)] = imported_modules(path)
    known = set(graph)
    # Keep edges to modules only ("from challenges import selectors" names a module).
    return {
        name: {target for target in targets if target in known} for name, targets in graph.items()
    }


@pytest.mark.parametrize("package", sorted(FLOORS))
def test_it_imports_only_downward(package):
    upward = []
    for path in python_files(package):
        for target in imported_modules(path):
            top = target.split(".")[0]
            if top != package and top not in FLOORS[package]:
                upward.append(f"{module_name(path)} imports {target}")
    assert upward == []


def test_it_has_no_import_cycle_between_modules():
    graph = all_modules()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            # A package's __init__ and its own submodules are one unit.
            if target == node or target.startswith(node + ".") or node.startswith(target + "."):
                continue
            if state.get(target) == 1:
                cycles.append(stack[stack.index(target) :] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == []


def test_it_never_imports_a_private_name_of_another_module():
    private = []
    for package in FLOORS:
        for path in python_files(package):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and not node.level:
                    for alias in node.names:
                        if alias.name.startswith("_") and not alias.name.startswith("__"):
                            private.append(f"{module_name(path)}: {node.module}.{alias.name}")
    assert private == []
