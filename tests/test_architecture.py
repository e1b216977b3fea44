"""The import graph against docs/architecture.md: every import (function-level ones included)
goes in an allowed direction, no module imports another in a circle, and the page names only
subsystems and modules that exist."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("arena", "bots", "solver", "leaderboard")
PAGE = ROOT / "docs" / "architecture.md"
#: The most plain modules ``arena``'s top level may keep (besides ``__init__``).
MAX_PLAIN_MODULES = 6


@cache
def modules() -> dict[str, Path]:
    """Every module of the four packages, by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _resolve(name: str) -> str | None:
    """The module ``name`` refers to: itself, or the nearest enclosing module that exists."""
    known = modules()
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


@cache
def imports() -> dict[str, frozenset[str]]:
    """Each module's imports of the four packages, anywhere in it (functions and
    ``TYPE_CHECKING`` blocks included): ``from P import M`` counts as importing ``P.M`` when
    that is a module."""
    known = modules()
    graph: dict[str, frozenset[str]] = {}
    for name, path in known.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                    for a in node.names
                ]
            for target in targets:
                if target.split(".")[0] in PACKAGES:
                    resolved = _resolve(target)
                    if resolved is not None and resolved != name:
                        found.add(resolved)
        graph[name] = frozenset(found)
    return graph


def subsystem(module: str) -> str:
    """The subsystem a module belongs to: ``arena.X`` for anything under ``arena.X``, the
    package itself for ``bots``, ``solver`` and ``leaderboard``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "arena" and len(parts) > 1 else parts[0]


@cache
def allowed() -> dict[str, frozenset[str]]:
    """The page's table: each subsystem and what it may import."""
    table: dict[str, frozenset[str]] = {}
    for line in PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`[\w.]+`", cells[0]):
            table[cells[0].strip("`")] = frozenset(re.findall(r"`([\w.]+)`", cells[2]))
    return table


def test_the_page_lists_every_subsystem_and_nothing_else() -> None:
    actual = {subsystem(m) for m in modules()}
    assert set(allowed()) == actual
    for deps in allowed().values():
        assert deps <= actual


def test_arena_is_subpackages_and_a_few_plain_modules() -> None:
    plain = sorted(p.stem for p in (ROOT / "arena").glob("*.py") if p.stem != "__init__")
    assert len(plain) <= MAX_PLAIN_MODULES, plain
    for directory in (ROOT / "arena").iterdir():
        if directory.is_dir() and any(directory.glob("*.py")):
            assert (directory / "__init__.py").is_file(), f"{directory.name} is not a package"


def test_every_import_goes_in_an_allowed_direction() -> None:
    table = allowed()
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in imports().items()
        for target in targets
        if subsystem(target) != subsystem(module)
        and subsystem(target) not in table[subsystem(module)]
    )
    assert not wrong, "imports against docs/architecture.md:\n" + "\n".join(wrong)


def test_the_allowed_directions_have_no_circle() -> None:
    table = allowed()
    seen: dict[str, int] = {}  # 1 while on the path, 2 when done

    def visit(node: str, path: tuple[str, ...]) -> None:
        if seen.get(node) == 1:
            pytest.fail("a circle in docs/architecture.md: " + " -> ".join((*path, node)))
        if seen.get(node) == 2:
            return
        seen[node] = 1
        for dep in sorted(table[node]):
            visit(dep, (*path, node))
        seen[node] = 2

    for node in table:
        visit(node, ())


def _cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
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


def test_no_module_imports_another_in_a_circle() -> None:
    assert _cycles(imports()) == []


def test_the_circle_finder_finds_circles() -> None:
    graph = {
        "a": frozenset({"b"}),
        "b": frozenset({"c"}),
        "c": frozenset({"a"}),
        "d": frozenset({"a"}),
    }
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": frozenset({"b"}), "b": frozenset()}) == []


def _may_import_line(docstring: str) -> frozenset[str] | None:
    match = re.search(r"May import:(.*?)(?:\n\n|$)", docstring, re.S)
    if match is None:
        return None
    text = match.group(1)
    if "every subsystem" in text:
        return None  # checked against the table's full row below
    return frozenset(n.strip(" .\n") for n in text.replace("\n", " ").split(",") if n.strip(" ."))


@pytest.mark.parametrize(
    "package",
    sorted(s for s in {subsystem(m) for m in modules()} if (ROOT / s.replace(".", "/")).is_dir()),
)
def test_each_package_says_what_it_owns_and_may_import(package: str) -> None:
    init = ROOT / package.replace(".", "/") / "__init__.py"
    docstring = ast.get_docstring(ast.parse(init.read_text())) or ""
    if package == "arena":
        assert docstring, "arena/__init__.py has no docstring"
        return
    assert "May import:" in docstring, f"{init} does not say what it may import"
    said = _may_import_line(docstring)
    if said is None:  # "every subsystem (but ...)"
        everything = set(allowed()) - {package}
        if "but arena.cli" in docstring:
            everything.discard("arena.cli")
        assert allowed()[package] == everything
    else:
        assert said == allowed()[package], f"{init} and docs/architecture.md disagree"


def test_every_module_the_page_names_exists() -> None:
    text = PAGE.read_text()
    paths = set(re.findall(r"`((?:arena|bots|solver|leaderboard)/[\w/]+\.py)`", text))
    assert paths, "the page names no module"
    missing = sorted(p for p in paths if not (ROOT / p).is_file())
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"
    dotted = set(re.findall(r"`((?:arena|bots|solver|leaderboard)(?:\.\w+)+)", text))
    unknown = sorted(d for d in dotted if d not in modules() and d != "arena.bots")
    assert not unknown, f"docs/architecture.md names modules that do not exist: {unknown}"
