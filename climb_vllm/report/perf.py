"""``climb-vllm bench --report N``: the report over N synthetic full-size run directories.

Each synthetic run holds what a real full run stores, written by every benchmark that declares
synthetic records (:class:`~climb_vllm.benchmarks.base.Synthetic`: full-release intrinsic
records, one answer per item of the generation benchmarks). The report is timed as a user runs
it; each benchmark's baseline (e.g. a reference implementation of its tables) runs on the first
synthetic run, in the same process as the rest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from climb_vllm.core.store import RunStore


def synthetic_runs(folder: Path, count: int, seed: int = 0) -> tuple[list[Path], dict[str, int]]:
    """Write ``count`` synthetic full-size run directories under ``folder``: every benchmark
    that declares :class:`~climb_vllm.benchmarks.base.Synthetic` records, in suite order.
    Returns the runs and each benchmark's records per run."""
    from climb_vllm.benchmarks.registry import REGISTRY

    rng = np.random.default_rng(seed)
    runs = []
    sizes: dict[str, int] = {}
    for i in range(count):
        root = folder / f"model-{i}"
        store = RunStore(root)
        model = f"synthetic-model-{i}"
        for benchmark in REGISTRY.values():
            if benchmark.synthetic is not None:
                sizes[benchmark.name] = benchmark.synthetic.write(store, model, rng)
        runs.append(root)
    return runs, sizes


def report_bench(count: int, folder: Path) -> dict[str, Any]:
    """Seconds to write the report over ``count`` synthetic runs, and each benchmark's
    baseline on the first run."""
    from climb_vllm.benchmarks.registry import REGISTRY

    start = time.perf_counter()
    runs, sizes = synthetic_runs(folder, count)
    results: dict[str, Any] = {"runs": count, "synthesis_seconds": time.perf_counter() - start}
    results |= {f"{name}_records_per_run": size for name, size in sizes.items()}
    # The report is timed as a user runs it: the command in a fresh process (imports included),
    # after the synthetic records are flushed to disk so that their write-back does not compete.
    os.sync()
    command = [
        sys.executable,
        "-m",
        "climb_vllm",
        "report",
        *map(str, runs),
        "--out",
        str(folder / "report"),
    ]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    results["report_seconds"] = time.perf_counter() - start
    results["report_command"] = " ".join(command[2:])
    for benchmark in REGISTRY.values():
        if benchmark.synthetic is not None and benchmark.synthetic.baseline is not None:
            results |= benchmark.synthetic.baseline(runs[0])
    return results
