"""``climb-vllm bench``: the measurement the options name (each benchmark's own, declared as
:class:`~climb_vllm.benchmarks.base.BenchHook`; in-process generation; the report), or the
registry's default measurement, printed as a table (and JSON)."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from climb_vllm.benchmarks.base import BenchHook, PerfSettings
from climb_vllm.benchmarks.registry import REGISTRY
from climb_vllm.core.errors import UserError


def _print(results: dict[str, Any], path: Path | None) -> None:
    width = max(len(k) for k in results)
    for key, value in results.items():
        shown = f"{value:,.6g}" if isinstance(value, float) else str(value)
        print(f"{key.ljust(width)}  {shown}")
    if path:
        path.write_text(json.dumps(results, indent=2))


def settings(args: argparse.Namespace) -> PerfSettings:
    """The shared settings of every measurement, from the parsed options."""
    if args.peak_tflops is not None and not args.peak_tflops > 0:
        raise UserError(
            f"--peak-tflops {args.peak_tflops} is not a peak.",
            "give the device's dense bf16 peak in TFLOP/s, a number above 0 (e.g. 989).",
        )
    return PerfSettings(
        model=args.model,
        codes=args.codes,
        device=args.device,
        dtype=args.dtype,
        batch_tokens=args.batch_tokens,
        row_tokens=args.row_tokens,
        repeats=args.repeats,
        full_run=args.full_run,
        top_k=args.top_k,
        peak_tflops=args.peak_tflops,
        profile=args.profile,
        compile_layers=args.compile,
    )


def run_bench(args: argparse.Namespace) -> dict[str, Any]:
    """Run the measurement the options name; print a table and optionally write JSON."""
    # Benchmarks may offer the same measurement (``--grading``): one option runs each's.
    hooks: dict[str, list[BenchHook]] = {}
    for benchmark in REGISTRY.values():
        for hook in benchmark.bench_hooks:
            hooks.setdefault(hook.flag, []).append(hook)
    counts = [flag for flag, same in hooks.items() if same[0].value == "count"]
    for option in (*counts, "report", "generation"):
        value = getattr(args, option, None)
        if value is not None and value < 1:
            flag = option.replace("_", "-")
            raise UserError(f"--{flag} must be at least 1.", f"pass --{flag} N with N >= 1.")
    results: dict[str, Any]
    chosen = [flag for flag in hooks if getattr(args, flag, None)]
    if chosen:
        results = {}
        for hook in hooks[chosen[0]]:
            results |= hook.run(getattr(args, chosen[0]), settings(args))
    elif args.generation:
        from climb_vllm.engines.generation_perf import generation_bench

        results = generation_bench(args.model, args.generation, device=args.device)
    elif args.report:
        from climb_vllm.report.perf import report_bench

        with tempfile.TemporaryDirectory(prefix="climb-report-bench-") as folder:
            results = report_bench(args.report, Path(folder))
    else:
        default = [hook for same in hooks.values() for hook in same if hook.runs_by_default]
        if not default:
            raise UserError("No measurement runs by default.", "name one: climb-vllm bench -h.")
        results = default[0].run(None, settings(args))
    _print(results, args.json)
    return results
