"""The run directories a report covers: each recomputed from its records and labelled."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from climb_vllm.core.errors import UserError
from climb_vllm.core.processes import VARIABLE as PROCESSES
from climb_vllm.core.store import RunStore
from climb_vllm.rescore import benchmark_results, run_benchmarks


@dataclass(frozen=True)
class RunView:
    """One run directory as the report sees it.

    Attributes:
        root: the run directory.
        label: the model's name in every table and legend (made unique over the runs).
        benchmarks: the benchmarks it holds, in suite order.
        metrics: per benchmark, its recomputed metrics.json.
        manifest: its manifest.
    """

    root: Path
    label: str
    benchmarks: tuple[str, ...]
    metrics: dict[str, Any]
    manifest: dict[str, Any]


#: Environment of the report's worker processes: one BLAS thread (read by OpenBLAS / OpenMP at
#: import) and no process pools of their own (the workers already fill the CPUs).
_ONE_THREAD = {
    "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", PROCESSES: "1",
}  # fmt: skip

def _recompute(root: Path) -> dict[str, Any]:
    """Every benchmark's metrics of one run, recomputed from its records (a worker's task)."""
    return {b: benchmark_results(root, b, quiet=True) for b in run_benchmarks(root)}


def load_runs(run_dirs: list[Path], workers: int | None = None) -> list[RunView]:
    """Recompute every run's results and give each a unique model label.

    Args:
        run_dirs: the run directories.
        workers: processes recomputing runs side by side (default: one per CPU, at most one
            per run); one recomputes in this process.
    """
    import os

    manifests = []
    present = []
    for root in run_dirs:
        benchmarks = tuple(run_benchmarks(root))
        if not benchmarks:
            raise UserError(f"{root} holds no benchmark run.", "run 'climb-vllm eval' into it.")
        present.append(benchmarks)
        manifests.append(RunStore(root).manifest())
    count = min(workers or len(os.sched_getaffinity(0)), len(run_dirs))
    if count <= 1:
        recomputed = [_recompute(root) for root in run_dirs]
    else:
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
                recomputed = list(pool.map(_recompute, run_dirs))
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    labels = []
    for manifest in manifests:
        first = next(iter(manifest["benchmarks"].values()))["config"]
        labels.append(str(first.get("model")))
    out = []
    for root, benchmarks, manifest, metrics, label in zip(
        run_dirs, present, manifests, recomputed, labels
    ):
        if labels.count(label) > 1:  # the same model twice: tell the runs apart by folder
            label = f"{label} ({root.name})"
        out.append(RunView(root, label, benchmarks, metrics, manifest))
    return out
