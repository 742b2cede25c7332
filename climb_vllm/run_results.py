"""Recomputing a run directory's results from its stored records, and saying what changed.

Every benchmark writes ``results/<benchmark>/`` (tables.md, a CSV per table, metrics.json) from
its records alone, so a metric or grader change never needs the model again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from climb_vllm.errors import UserError
from climb_vllm.store import RunStore

#: Suite order: the order of benchmarks in reports and in ``eval all``.
SUITE = ("intrinsic", "extrinsic", "biasmd", "diseasematcher")


def require_run_dir(run_dir: Path) -> None:
    """Raise a UserError unless ``run_dir`` holds a manifest."""
    if not (run_dir / "manifest.json").is_file():
        raise UserError(
            f"{run_dir} is not a run directory (no manifest.json).",
            "pass the folder that 'climb-vllm eval' wrote, e.g. outputs/<model>/main.",
        )


def run_benchmarks(run_dir: Path) -> list[str]:
    """The benchmarks a run directory's manifest holds, in suite order."""
    require_run_dir(run_dir)
    present = RunStore(run_dir).manifest().get("benchmarks", {})
    return [b for b in SUITE if b in present]


def write_intrinsic_results(store: RunStore, quiet: bool = False) -> dict[str, Any]:
    """Recompute the intrinsic tables of a run directory, write them, print the Markdown."""
    from climb_vllm.benchmarks.intrinsic import BENCHMARK, TEMPLATES, IntrinsicTask
    from climb_vllm.config import IntrinsicConfig
    from climb_vllm.intrinsic_results import intrinsic_tables
    from climb_vllm.report import metrics_json, write_intrinsic_report

    config = IntrinsicConfig(**store.section(BENCHMARK)["config"])
    task = IntrinsicTask.from_config(config)
    templates = store.read_records(TEMPLATES) if store.finished_chunks(TEMPLATES) else None
    tables = intrinsic_tables(
        store.read_records(BENCHMARK), task, config.top_k, templates, config.template
    )
    path = write_intrinsic_report(store, tables, config.model)
    if not quiet:
        print(path.read_text())
        print(f"tables written to {path.parent}")
    return metrics_json(tables)


def benchmark_results(run_dir: Path, benchmark: str, quiet: bool) -> dict[str, Any]:
    """Recompute and write one benchmark's results; returns its metrics."""
    store = RunStore(run_dir)
    if benchmark == "intrinsic":
        return write_intrinsic_results(store, quiet=quiet)
    if benchmark == "extrinsic":
        from climb_vllm.extrinsic_runs import write_extrinsic_report

        return write_extrinsic_report(store, quiet=quiet)
    from climb_vllm.hive_runs import write_generation_report

    return write_generation_report(store, benchmark, quiet=quiet)


def rescore(run_dir: Path) -> dict[str, list[str]]:
    """Recompute every benchmark of a run, print and return what changed per benchmark."""
    from climb_vllm.report import diff_metrics

    benchmarks = run_benchmarks(run_dir)
    if not benchmarks:
        raise UserError(
            f"{run_dir} holds no benchmark run.", "run 'climb-vllm eval ...' into it first."
        )
    changed: dict[str, list[str]] = {}
    for benchmark in benchmarks:
        old_path = run_dir / "results" / benchmark / "metrics.json"
        old = json.loads(old_path.read_text()) if old_path.exists() else {}
        new = benchmark_results(run_dir, benchmark, quiet=True)
        changes = diff_metrics(old, new)
        changed[benchmark] = changes
        if not old:
            print(f"{benchmark}: no earlier metrics in {run_dir}; computed them now")
        elif changes:
            print(f"{benchmark}: {len(changes)} values changed:")
            print("\n".join(changes))
        else:
            print(f"{benchmark}: no metric changed")
    return changed
