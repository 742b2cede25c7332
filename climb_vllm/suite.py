"""``climb-vllm eval all``: every selected benchmark into one run directory, one display, one
report.

Each benchmark is configured exactly as ``eval <benchmark>`` would configure it from the same
option values, so a suite run and single runs write the same records (and a suite interrupted
anywhere resumes like each benchmark does: finished chunks are kept, finished benchmarks only
recompute their tables). The model is loaded, or the servers probed, once for the whole suite:
the benchmarks share an :class:`~climb_vllm.core.run.EngineCache`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from climb_vllm.benchmarks.base import Benchmark
from climb_vllm.core.config import EngineConfig
from climb_vllm.core.run import EngineCache, EngineOptions, RunContext, engine_settings


def run_suite(
    benchmarks: Sequence[Benchmark],
    values: Mapping[str, Mapping[str, Any]],
    engine: EngineOptions,
    context: RunContext,
    report: bool = True,
) -> Path:
    """Run ``benchmarks`` in order into one run directory.

    Args:
        benchmarks: the benchmarks, in suite order.
        values: per benchmark name, its option values (as ``eval <benchmark>`` takes them).
        engine: the engine options every benchmark shares.
        context: the run folder; the suite adds the shared engines and keeps tables quiet.
        report: write the HTML report at the end.

    Returns:
        The report's path, or the run directory when ``report`` is False.
    """
    from climb_vllm.core.progress import Board

    shared = replace(context, quiet=True, engines=context.engines or EngineCache())
    settings = engine_settings(engine)
    run_dir: Path | None = None
    display = settings.get("display", EngineConfig.model_fields["display"].default)
    with Board([b.name for b in benchmarks], display):
        for benchmark in benchmarks:
            config = benchmark.configure(settings, values.get(benchmark.name, {}))
            run_dir = benchmark.run(config, shared)
    assert run_dir is not None
    if not report:
        return run_dir
    from climb_vllm.report.html import write_report

    return write_report([run_dir], run_dir / "report")
