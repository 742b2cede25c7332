"""The run directories a report covers: each recomputed from its records (unless its stored
results are stamped as made from the same inputs) and labelled."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from climb_vllm.benchmarks.registry import REGISTRY
from climb_vllm.core.errors import UserError
from climb_vllm.core.freshness import current_metrics
from climb_vllm.core.manifest import Manifest
from climb_vllm.core.processes import VARIABLE as PROCESSES
from climb_vllm.core.store import RunStore, model_label
from climb_vllm.report.rescore import READ_ONLY_FIX, benchmark_results, run_benchmarks


@dataclass(frozen=True)
class RunView:
    """One run directory as the report sees it.

    Attributes:
        root: the run directory.
        label: the model's name in every table and legend (made unique over the runs).
        benchmarks: the finished benchmarks it holds, in suite order.
        metrics: per finished benchmark, its recomputed metrics.json.
        manifest: its manifest.
        missing: per benchmark it started but did not finish (or that failed in a suite),
            why it is not in the report.
        prepared: per finished benchmark with a paired comparison, what that comparison needs
            of the run (:class:`~climb_vllm.benchmarks.base.Paired`; empty for a lone run).
    """

    root: Path
    label: str
    benchmarks: tuple[str, ...]
    metrics: dict[str, Any]
    manifest: Manifest
    missing: dict[str, str]
    prepared: dict[str, Any]


#: Environment of the report's worker processes: one BLAS thread (read by OpenBLAS / OpenMP at
#: import) and no process pools of their own (the workers already fill the CPUs).
_ONE_THREAD = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    PROCESSES: "1",
}


def _recompute(
    root: Path, compare: bool = False
) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """Every finished benchmark's metrics of one run, recomputed from its records, why each
    other one is missing and, with ``compare``, what each paired comparison needs of the run
    (a worker's task: the comparisons' heavy part runs beside the other runs' too)."""
    metrics: dict[str, Any] = {}
    missing: dict[str, str] = {}
    prepared: dict[str, Any] = {}
    for benchmark in run_benchmarks(root):
        try:
            # Results stamped as made from these very inputs are read, not computed again.
            stored = current_metrics(root, benchmark)
            metrics[benchmark] = (
                stored if stored is not None else benchmark_results(root, benchmark, quiet=True)
            )
        except UserError as exc:  # not finished: the report shows the rest and says so
            missing[benchmark] = exc.message
            continue
        paired = REGISTRY[benchmark].paired if benchmark in REGISTRY else None
        if compare and paired is not None:
            prepared[benchmark] = paired.prepare(root)
    return metrics, missing, prepared


def _recompute_all(
    run_dirs: list[Path], workers: int | None
) -> list[tuple[dict[str, Any], dict[str, str], dict[str, Any]]]:
    """:func:`_recompute` of every run, in order (``workers``: as for :func:`load_runs`)."""
    import os

    count = min(workers or len(os.sched_getaffinity(0)), len(run_dirs))
    task = partial(_recompute, compare=len(run_dirs) > 1)
    if count <= 1:
        return [task(root) for root in run_dirs]
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    # Runs are independent and most of the work is single-threaded (grading, Polars
    # expressions, numpy element-wise passes), so runs go to processes side by side, each
    # with one BLAS thread and one grading process: OpenBLAS threads that spin beside another
    # busy process made two workers no faster than one (measured 34 s vs 26 s on 4 runs).
    # spawn, not fork: this process may hold Polars' thread pool.
    saved = {k: os.environ.get(k) for k in _ONE_THREAD}
    os.environ.update(_ONE_THREAD)
    try:
        with ProcessPoolExecutor(count, mp_context=get_context("spawn")) as pool:
            recomputed = list(pool.map(task, run_dirs))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return recomputed


def load_runs(run_dirs: list[Path], workers: int | None = None) -> list[RunView]:
    """Recompute every run's results and give each a unique model label.

    Args:
        run_dirs: the run directories.
        workers: processes recomputing runs side by side (default: one per CPU, at most one
            per run); one recomputes in this process.
    """
    manifests = []
    present = []
    for root in run_dirs:
        benchmarks = tuple(run_benchmarks(root))
        if not benchmarks:
            raise UserError(f"{root} holds no benchmark run.", "run 'climb-vllm eval' into it.")
        present.append(benchmarks)
        manifests.append(RunStore(root, READ_ONLY_FIX).record())
    recomputed = _recompute_all(run_dirs, workers)
    labels = []
    for manifest in manifests:
        config = next(iter(manifest.benchmarks.values())).config
        labels.append(model_label(str(config.get("model"))))
    out = []
    for root, manifest, (metrics, missing, prepared), label in zip(
        run_dirs, manifests, recomputed, labels
    ):
        if labels.count(label) > 1:  # the same model twice: tell the runs apart by folder
            label = f"{label} ({root.name})"
        missing = {f"{k}": f"failed: {v}" for k, v in manifest.failed.items()} | missing
        missing |= {
            k: f"not applicable to this engine: {v}" for k, v in manifest.not_applicable.items()
        }
        if not metrics:
            first = next(iter(missing.items()), ("", "no benchmark finished"))
            raise UserError(
                f"{root} holds no finished benchmark ({first[0]}: {first[1]}).",
                "finish a benchmark first: rerun the 'climb-vllm eval' command that made it.",
            )
        finished = tuple(b for b in present[run_dirs.index(root)] if b in metrics)
        out.append(RunView(root, label, finished, metrics, manifest, missing, prepared))
    return out
