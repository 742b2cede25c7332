"""The package's shape: no import circle (lazy imports included), no ``argparse.Namespace`` below
the command line, no oversized module, nothing machine-specific tracked by git."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "climb_vllm"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """Every package module ``path`` imports anywhere: top level, inside functions, under
    TYPE_CHECKING. ``from a.b import c`` names module ``a.b.c`` when it exists, else ``a.b``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in modules else node.module)
    return {name for name in found if name in modules}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as a list of modules, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return stack[stack.index(target) :] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_package_has_no_import_circle() -> None:
    modules = _modules()
    graph = {name: _imports(path, modules) - {name} for name, path in modules.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_circle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_core_imports_nothing_from_the_cli_or_the_benchmarks() -> None:
    modules = _modules()
    for name, path in modules.items():
        if name.startswith("climb_vllm.core"):
            bad = [
                m
                for m in _imports(path, modules)
                if m.startswith(("climb_vllm.cli", "climb_vllm.benchmarks"))
            ]
            assert not bad, f"{name} imports {bad}"


def test_no_signature_below_the_cli_takes_a_namespace() -> None:
    offenders = []
    for name, path in _modules().items():
        if name.startswith("climb_vllm.cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = node.args.args + node.args.kwonlyargs + node.args.posonlyargs
                for argument in arguments:
                    if argument.annotation and "Namespace" in ast.unparse(argument.annotation):
                        offenders.append(f"{name}.{node.name}({argument.arg})")
    assert not offenders


def test_modules_stay_small_and_there_is_no_utils_module() -> None:
    sizes = {name: len(p.read_text().splitlines()) for name, p in _modules().items()}
    assert not {n: s for n, s in sizes.items() if s > 600}
    assert not [n for n in sizes if n.split(".")[-1] in ("utils", "util", "helpers", "misc")]


def _tracked() -> list[tuple[str, str]]:
    """(mode, path) of every file git tracks."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-s"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.fail("git ls-files failed: run the tests inside the git checkout")
    rows = [line.split(maxsplit=3) for line in listed.splitlines()]
    return [(row[0], row[3]) for row in rows]


def test_nothing_machine_specific_is_tracked() -> None:
    tracked = _tracked()
    assert tracked, "git tracks no file"
    links = [path for mode, path in tracked if mode == "120000"]
    assert not links, f"tracked symbolic links (they point outside a fresh clone): {links}"
    checkout = str(ROOT.resolve())
    mentions = []
    for _, path in tracked:
        file = ROOT / path
        if file.suffix in (".parquet", ".png") or not file.is_file():
            continue
        if checkout in file.read_text(errors="ignore"):
            mentions.append(path)
    assert not mentions, f"files naming this machine's checkout path {checkout}: {mentions}"


#: Files over this size change only with a row in docs/development.md's "Large files".
LARGE = 1024 * 1024


def test_every_large_file_has_a_row_giving_the_figures_it_improves() -> None:
    import hashlib

    page = (ROOT / "docs" / "development.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    missing = []
    for _, path in _tracked():
        file = ROOT / path
        if not file.is_file() or file.stat().st_size <= LARGE:
            continue
        digest = hashlib.sha256(file.read_bytes()).hexdigest()[:16]
        if not any(f"`{path}`" in row and f"`{digest}`" in row for row in rows):
            missing.append(f"{path} ({digest})")
    assert not missing, (
        "files over 1 MB without a row (path, SHA-256 first 16, the figures it improves) in "
        f"docs/development.md's Large files: {missing}"
    )


def test_python_dash_m_runs_the_command_line() -> None:
    import sys

    shown = subprocess.run(
        [sys.executable, "-m", "climb_vllm", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert shown.returncode == 0, shown.stderr
    assert "eval" in shown.stdout and "report" in shown.stdout
