"""The registry is the one place outside a benchmark's folder that names it: no other module
imports a benchmark's folder or spells its name or title in code (docstrings and comments may
speak of it), so a new benchmark gets the command line, the suite, the report and the speed
measurements from its declarations alone."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from climb_vllm.benchmarks.base import Deferred
from climb_vllm.benchmarks.registry import REGISTRY, get, selected
from climb_vllm.core.errors import UserError

PACKAGE = Path(__file__).parents[2] / "climb_vllm"


def _folder(name: str) -> str:
    """The package folder of a registered benchmark: ``benchmarks/<name>``."""
    folder = f"benchmarks/{name}"
    assert (PACKAGE / folder / "benchmark.py").is_file(), f"{name} has no folder of its own"
    return folder


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr):
            if isinstance(node.body[0].value, ast.Constant):
                found.add(id(node.body[0].value))
    return found


def namings(source: str, name: str, title: str, folder: str) -> list[str]:
    """Where ``source`` names a benchmark in code: imports of its folder's modules, and string
    literals (not docstrings) holding its name or title as a word. ``line: what`` each."""
    module = "climb_vllm." + folder.replace("/", ".")
    words = re.compile(rf"\b({re.escape(name)}|{re.escape(title)})\b", re.IGNORECASE)
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(module):
            found.append(f"{node.lineno}: from {node.module}")
        elif isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {a.name}" for a in node.names if a.name.startswith(module)
            ]
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        ):
            if words.search(node.value):
                found.append(f"{node.lineno}: {node.value[:60]!r}")
    return found


@pytest.mark.parametrize("name", list(REGISTRY))
def test_only_the_registry_and_its_folder_name_a_benchmark(name: str) -> None:
    folder = _folder(name)
    title = REGISTRY[name].title
    offenders = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(folder + "/") or relative == "benchmarks/registry.py":
            continue
        found = namings(path.read_text(), name, title, folder)
        if found:
            offenders[relative] = found
    assert offenders == {}


def test_the_check_sees_imports_and_literals_but_not_docstrings() -> None:
    source = (
        '"""Speaks of intrinsic in its docstring."""\n'
        "from climb_vllm.benchmarks.intrinsic.task import sample_requests\n"
        "import climb_vllm.benchmarks.intrinsic.perf\n"
        "def f() -> str:\n"
        '    """intrinsic here too."""\n'
        "    return 'CLIMB Intrinsic'\n"
        "LABEL = 'intrinsical'\n"
    )
    found = namings(source, "intrinsic", "CLIMB intrinsic", "benchmarks/intrinsic")
    assert [f.split(":")[0] for f in found] == ["2", "3", "6"]


def test_every_benchmark_declares_a_title_and_the_lookups_refuse_unknown_names() -> None:
    assert all(b.title and b.title != b.name for b in REGISTRY.values())
    assert get("biasmd").name == "biasmd"
    with pytest.raises(UserError, match="Unknown benchmark"):
        get("nope")
    assert [b.name for b in selected("diseasematcher,intrinsic")] == ["intrinsic", "diseasematcher"]
    with pytest.raises(UserError):
        selected(" , ")


def test_at_most_one_measurement_runs_by_default() -> None:
    default = [h.flag for b in REGISTRY.values() for h in b.bench_hooks if h.runs_by_default]
    assert len(default) == 1


def test_every_deferred_declaration_names_a_function_that_exists() -> None:
    declared = [
        thing
        for b in REGISTRY.values()
        for thing in (
            *(hook.run for hook in b.bench_hooks),
            *(figure.draw for figure in b.figures()),
            *((b.synthetic.write, b.synthetic.baseline) if b.synthetic else ()),
        )
        if isinstance(thing, Deferred)
    ]
    assert declared, "the HIVE benchmarks declare their figures and measurements deferred"
    for thing in declared:
        assert callable(thing.resolve()), thing.path
