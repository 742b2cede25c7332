"""Recomputing a run directory's results from its stored records, and saying what changed.

Every benchmark writes ``results/<benchmark>/`` (tables.md, a CSV per table, metrics.json) from
its records alone, so a metric or grader change never needs the model again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from climb_vllm.benchmarks.registry import REGISTRY, get
from climb_vllm.core.errors import UserError
from climb_vllm.core.freshness import mark
from climb_vllm.core.store import RunStore, manifest_path, results_folder

#: Relative differences below this are rounding, not change: matrix products give results that
#: differ in the last digits with the number of BLAS threads (measured ~1e-8 relative between
#: the report's one-thread workers and a two-thread process), far below any shown digit.
RELATIVE_NOISE = 1e-6


#: Results are rewritten inside the run directory, so a read-only one is copied first.
READ_ONLY_FIX = "copy the run directory to a writable place (cp -r RUN_DIR COPY) and pass the copy."


def require_run_dir(run_dir: Path) -> None:
    """Raise a UserError unless ``run_dir`` holds a manifest."""
    if not manifest_path(run_dir).is_file():
        raise UserError(
            f"{run_dir} is not a run directory (no manifest.json).",
            "pass the folder that 'climb-vllm eval' wrote, e.g. outputs/runs/<model>/main.",
        )


def run_benchmarks(run_dir: Path) -> list[str]:
    """The registered benchmarks a run directory's manifest holds, in suite order."""
    require_run_dir(run_dir)
    present = RunStore(run_dir, READ_ONLY_FIX).record().benchmarks
    return [name for name in REGISTRY if name in present]


def benchmark_results(run_dir: Path, benchmark: str, quiet: bool) -> dict[str, Any]:
    """Recompute and write one benchmark's results, stamped with their inputs
    (:mod:`climb_vllm.core.freshness`); returns its metrics."""
    metrics = get(benchmark).results(RunStore(run_dir, READ_ONLY_FIX), quiet=quiet)
    mark(run_dir, benchmark)
    return metrics


def grade_change_lines(benchmark: str, regraded: list[dict[str, Any]]) -> str:
    """What the graders now read differently, in words: changes of reading first, renamings
    of a grade after them."""
    read = [r for r in regraded if not r["renamed"]]
    renamed = [r for r in regraded if r["renamed"]]
    lines = []
    if read:
        total = sum(r["answers"] for r in read)
        lines.append(f"{benchmark}: {total} answers graded differently:")
        lines += [f"  {r['from']} -> {r['to']}: {r['answers']}" for r in read]
    if renamed:
        lines.append(f"{benchmark}: grades renamed (same reading):")
        lines += [f"  {r['from']} -> {r['to']}: {r['answers']}" for r in renamed]
    return "\n".join(lines)


def rescore(run_dir: Path) -> dict[str, list[str]]:
    """Recompute every benchmark of a run, print and return what changed per benchmark."""
    from climb_vllm.core.results import diff_metrics

    benchmarks = run_benchmarks(run_dir)
    if not benchmarks:
        raise UserError(
            f"{run_dir} holds no benchmark run.", "run 'climb-vllm eval ...' into it first."
        )
    changed: dict[str, list[str]] = {}
    unfinished: dict[str, str] = {}
    for benchmark in benchmarks:
        old_path = results_folder(run_dir, benchmark) / "metrics.json"
        old = json.loads(old_path.read_text()) if old_path.exists() else {}
        try:
            new = benchmark_results(run_dir, benchmark, quiet=True)
        except UserError as exc:  # not finished: the others are rescored all the same
            unfinished[benchmark] = str(exc)
            print(f"{benchmark}: not finished, left out: {exc}")
            continue
        regraded = new.pop("grade_changes", [])
        if regraded:
            print(grade_change_lines(benchmark, regraded))
        changes = diff_metrics(old, new, relative=RELATIVE_NOISE)
        changed[benchmark] = changes
        if not old:
            print(f"{benchmark}: no earlier metrics in {run_dir}; computed them now")
        elif changes:
            print(f"{benchmark}: {len(changes)} values changed:")
            print("\n".join(changes))
        else:
            print(f"{benchmark}: no metric changed")
    if len(unfinished) == len(benchmarks):
        raise UserError(
            f"{run_dir} holds no finished benchmark ({next(iter(unfinished.values()))}).",
            "finish a benchmark first: rerun the 'climb-vllm eval' command that made it.",
        )
    return changed
