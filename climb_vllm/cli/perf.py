"""``climb-vllm bench``: the intrinsic scoring bench by default, or the serving, report or a
benchmark's own bench (``--grading``, ``--mapping``, ...), printed as a table (and JSON)."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from climb_vllm.benchmarks.registry import REGISTRY
from climb_vllm.core.errors import UserError


def _print(results: dict[str, Any], path: Path | None) -> None:
    width = max(len(k) for k in results)
    for key, value in results.items():
        shown = f"{value:,.6g}" if isinstance(value, float) else str(value)
        print(f"{key.ljust(width)}  {shown}")
    if path:
        path.write_text(json.dumps(results, indent=2))


def run_bench(args: argparse.Namespace) -> dict[str, Any]:
    """Run the bench the options name; print a table and optionally write JSON."""
    hooks = {hook.flag: hook for b in REGISTRY.values() for hook in b.bench_hooks}
    for option in (*hooks, "report", "generation"):
        value = getattr(args, option, None)
        if value is not None and value < 1:
            flag = option.replace("_", "-")
            raise UserError(f"--{flag} must be at least 1.", f"pass --{flag} N with N >= 1.")
    results: dict[str, Any]
    chosen = [flag for flag in hooks if getattr(args, flag, None)]
    if chosen:
        results = hooks[chosen[0]].run(getattr(args, chosen[0]))
    elif args.generation:
        from climb_vllm.perf.generation import generation_bench

        results = generation_bench(args.model, args.generation, device=args.device)
    elif args.report:
        from climb_vllm.perf.report import report_bench

        with tempfile.TemporaryDirectory(prefix="climb-report-bench-") as folder:
            results = report_bench(args.report, Path(folder))
    elif args.drilldown_coverage:
        from climb_vllm.benchmarks.intrinsic.coverage import run_drilldown_coverage

        results = run_drilldown_coverage(args.drilldown_coverage)
    elif args.names_growth:
        from climb_vllm.benchmarks.intrinsic.perf import names_growth_bench

        results = names_growth_bench(
            args.model,
            args.codes,
            args.device,
            args.dtype,
            args.batch_tokens,
            repeats=args.repeats,
        )
    elif args.agreement:
        from climb_vllm.models.sources import resolve
        from climb_vllm.perf.serving import agreement_bench

        if args.model is None:
            raise UserError("bench --agreement needs the served weights.", "add --model.")
        model = Path(resolve(str(args.model)))
        results = agreement_bench(model, args.agreement, args.codes, args.top_k)
    elif args.endpoint:
        from climb_vllm.benchmarks.intrinsic.perf import requests_for
        from climb_vllm.perf.serving import serving_bench

        if args.model is None:
            raise UserError("bench --endpoint needs the served model's folder.", "add --model DIR.")
        requests = requests_for(args.model, args.codes)
        results = serving_bench(args.endpoint, str(args.model), requests, args.codes)
    else:
        from climb_vllm.benchmarks.intrinsic.perf import scoring_bench

        results = scoring_bench(
            args.model,
            args.codes,
            args.device,
            args.dtype,
            args.batch_tokens,
            args.full_run,
            args.row_tokens,
            args.repeats,
        )
    _print(results, args.json)
    return results
