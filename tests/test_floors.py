"""The package's floors: each folder imports only from the floors below it (lazy and
type-checking imports counted), so a newcomer reads the package bottom up. The order is written
once, here; docs/development.md explains it."""

from __future__ import annotations

from pathlib import Path

from tests.test_package import _imports, _modules

#: Floors, lowest first. A unit is a folder of ``climb_vllm`` (or one module for the benchmark
#: interface and registry); the benchmark folders share one floor and never import each other.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("core",),  # errors, config, store, progress, statistics: imports nothing above
    ("resources",),  # ontology, other names, first names, the encoder, the data locator
    ("rewrite", "icd_mapping"),  # text libraries: the sex rewrite; free text to ICD-10-CM codes
    ("models",),  # model sources, loading, demo models, adapters
    ("serving",),  # launch, state and configuration of vLLM and llama.cpp servers
    ("engines",),  # in-process and HTTP engines, strategies, capabilities
    ("runner",),  # opens engines and servers for a benchmark; generation runs
    ("benchmarks.base",),  # the interface every benchmark implements
    ("benchmarks.hive",),  # the library BiasMD and DiseaseMatcher share
    (
        "benchmarks.intrinsic",
        "benchmarks.extrinsic",
        "benchmarks.biasmd",
        "benchmarks.diseasematcher",
    ),
    ("benchmarks.registry",),  # the one list of benchmarks
    ("report",),  # tables, figures, HTML, comparison, rescore
    ("suite",),  # eval all
    ("cli",),
    ("__main__",),
)
#: Units with no code of their own (the package's and the benchmarks' docstrings).
EMPTY = ("", "benchmarks")


def unit(module: str) -> str:
    """The floor unit of a package module (``climb_vllm.engines.http`` -> ``engines``)."""
    parts = module.split(".")[1:]
    if parts[:1] == ["benchmarks"] and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0] if parts else ""


def _floor() -> dict[str, int]:
    return {name: level for level, names in enumerate(FLOORS) for name in names}


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Every import in ``graph`` (module -> modules it imports) of a unit on the same floor or
    above, as ``a -> b``."""
    floor = _floor()
    found = []
    for name in sorted(graph):
        source = unit(name)
        if source in EMPTY:
            continue
        for target in sorted(graph[name]):
            other = unit(target)
            if other != source and other not in EMPTY and floor[other] >= floor[source]:
                found.append(f"{name} -> {target}")
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, modules) for name, path in modules.items()}


def test_every_unit_has_a_floor() -> None:
    units = {unit(name) for name in _modules()} - set(EMPTY)
    assert units <= set(_floor()), f"give these a floor: {sorted(units - set(_floor()))}"


def test_no_import_runs_up_a_floor_or_across_benchmarks() -> None:
    assert upward(_graph()) == []


def test_the_package_root_holds_at_most_three_modules() -> None:
    root = sorted(p.name for p in _modules().values() if p.parent.name == "climb_vllm")
    assert len(root) <= 3, root


def test_the_check_finds_upward_sideways_and_lazy_imports(tmp_path: Path) -> None:
    graph = {
        "climb_vllm.core.run": {"climb_vllm.engines.registry"},
        "climb_vllm.benchmarks.hive.run": {"climb_vllm.benchmarks.intrinsic.task"},
        "climb_vllm.engines.http": {"climb_vllm.serving.state", "climb_vllm.core.errors"},
    }
    assert upward(graph) == [
        "climb_vllm.benchmarks.hive.run -> climb_vllm.benchmarks.intrinsic.task",
        "climb_vllm.core.run -> climb_vllm.engines.registry",
    ]
    # Imports inside functions and under TYPE_CHECKING are read too.
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from climb_vllm.cli import parser\n"
        "def f() -> None:\n    import climb_vllm.suite\n"
    )
    found = _imports(module, _modules())
    assert {"climb_vllm.cli.parser", "climb_vllm.suite"} <= found
