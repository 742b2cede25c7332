"""``climb-vllm eval all``: every selected benchmark into one run directory, one display, one
report.

Each benchmark is configured exactly as ``eval <benchmark>`` would configure it from the same
option values, so a suite run and single runs write the same records (and a suite interrupted
anywhere resumes like each benchmark does: finished chunks are kept, finished benchmarks only
recompute their tables). The model is loaded, or the servers probed, once for the whole suite:
the benchmarks share an :class:`~climb_vllm.runner.run.EngineCache`.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from climb_vllm.benchmarks.base import Benchmark
from climb_vllm.core.errors import NotApplicable, UserError
from climb_vllm.core.freshness import mark
from climb_vllm.core.store import manifest_path
from climb_vllm.runner.options import EngineOptions
from climb_vllm.runner.run import EngineCache, RunContext, resolve_engine


@dataclass(frozen=True)
class SuiteOutcome:
    """What a suite left behind.

    Attributes:
        run_dir: the run directory (None when no benchmark got as far as opening it).
        report: the report's path (None: not written).
        failed: per failed benchmark, its one-line error.
        not_applicable: per benchmark the engine cannot run (a server without prompt
            log-probs for intrinsic), why; not a failure.
    """

    run_dir: Path | None
    report: Path | None
    failed: dict[str, str]
    not_applicable: dict[str, str] = field(default_factory=dict)


def run_suite(
    benchmarks: Sequence[Benchmark],
    values: Mapping[str, Mapping[str, Any]],
    engine: EngineOptions,
    context: RunContext,
    report: bool = True,
) -> SuiteOutcome:
    """Run ``benchmarks`` in order into one run directory; a benchmark that fails (or that the
    engine cannot run) is recorded and the others still run, then the report shows what exists.

    Args:
        benchmarks: the benchmarks, in suite order.
        values: per benchmark name, its option values (as ``eval <benchmark>`` takes them).
        engine: the engine options every benchmark shares.
        context: the run folder; the suite adds the shared engines and keeps tables quiet.
        report: write the HTML report at the end.
    """
    from climb_vllm.core.progress import Board
    from climb_vllm.core.store import RunStore

    shared = replace(context, quiet=True, engines=context.engines or EngineCache())
    settings = resolve_engine(engine)
    run_dir: Path | None = context.out
    failed: dict[str, str] = {}
    not_applicable: dict[str, str] = {}
    with Board([b.name for b in benchmarks], settings.display):
        for benchmark in benchmarks:
            try:
                config = benchmark.configure(settings, values.get(benchmark.name, {}))
                run_dir = benchmark.run(config, shared)
                mark(run_dir, benchmark.name)  # its results are those of its final records
            except NotApplicable as exc:
                not_applicable[benchmark.name] = exc.message
                print(f"{benchmark.name}: not applicable here: {exc.message}", file=sys.stderr)
                continue
            except UserError as exc:
                failed[benchmark.name] = str(exc)
            except Exception as exc:  # a defect in one benchmark must not cost the others
                traceback.print_exc()
                failed[benchmark.name] = f"{type(exc).__name__}: {exc}"
            if benchmark.name in failed:
                print(f"{benchmark.name} failed: {failed[benchmark.name]}", file=sys.stderr)
    if run_dir is not None and manifest_path(run_dir).is_file():
        RunStore(run_dir).record_failures({b.name for b in benchmarks}, failed, not_applicable)
    written: Path | None = None
    if report and run_dir is not None and len(failed) + len(not_applicable) < len(benchmarks):
        from climb_vllm.report.html import write_report

        written = write_report([run_dir], run_dir / "report")
    return SuiteOutcome(run_dir, written, failed, not_applicable)
