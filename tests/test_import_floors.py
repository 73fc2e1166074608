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


# SPEC §2: an app reaches into another only through its services, selectors and models.
# A module of an app's web surface — views, admin, API, serializers — is that app's own.
SURFACE = ("views", "admin", "api", "serializers")
# What several apps share lives outside those modules: the admin's workspace scoping in
# players/scoping.py, input shapes in each app's inputs.py, the bridge's view base in
# challenges/bridge/endpoint.py (docs/one-rule-once.md).


def is_surface(module: str) -> bool:
    return any(
        part in SURFACE or part.startswith(tuple(f"{name}_" for name in SURFACE))
        for part in module.split(".")[1:]
    )


def surface_reach_ins() -> set[tuple[str, str]]:
    """(importer, imported module) for each app module importing another app's surface.
    `core` is no app (its api module is everyone's), and `config` wires the apps."""
    graph = all_modules()
    return {
        (name, target)
        for name, targets in graph.items()
        for target in targets
        if name.split(".")[0] not in ("core", "config")
        and target.split(".")[0] not in ("core", name.split(".")[0])
        and is_surface(target)
    }


def test_no_app_reaches_into_another_apps_views_admin_api_or_serializers():
    assert sorted(surface_reach_ins()) == []


def test_theme_and_markdown_are_shared_from_core():
    found = surface_reach_ins()
    assert not {pair for pair in found if pair[1] in ("challenges.views", "challenges.markdown")}
    assert ("redblue.teams.views", "challenges.views") not in found
