"""``climb-vllm bench``: speed and work measured as ratios against a baseline in the same run.

P1  forward tokens per (code, name) pair: prefix-shared scoring vs naive full sequences, on the
    same requests from the same tokenizer, with the largest log-prob difference between them.
P2  wall time of the same two scorers on the same model and requests (after one warm-up each).
Grading (``--grading N``): see :mod:`climb_vllm.bench_grading`.
ICD mapping (``--mapping N``): see :mod:`climb_vllm.bench_mapping`.
The report (``--report N``): see :mod:`climb_vllm.bench_report`.
Memory (``--full-run``): a full-release intrinsic run in a child process; its peak resident set
    size is read from the kernel's accounting of finished children.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from climb_vllm.engines.base import ScoreRequest, ScoreResult
from climb_vllm.engines.local import LocalEngine
from climb_vllm.errors import UserError


def _requests(tokenizer: Any, codes: int) -> tuple[list[ScoreRequest], int]:
    """The sample's requests and its number of (code, name) pairs (top-5 names)."""
    from climb_vllm.benchmarks.intrinsic import sample_requests
    from climb_vllm.names import load_names

    return sample_requests(tokenizer, codes), codes * len(load_names().distinct(5))


def _timed(engine: LocalEngine, requests: list[ScoreRequest]) -> tuple[float, list[ScoreResult]]:
    engine.score(requests[:8])  # warm-up: first-call allocations and kernel selection
    engine.stats.forward_tokens = engine.stats.padded_tokens = engine.stats.head_rows = 0
    engine.stats.batches = 0
    start = time.perf_counter()
    results = engine.score(requests)
    return time.perf_counter() - start, results


def _full_run(model: Path, device: str, dtype: str, batch_tokens: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            sys.executable, "-m", "climb_vllm.cli", "eval", "intrinsic", "--model", str(model),
            "--device", device, "--dtype", dtype, "--batch-tokens", str(batch_tokens),
            "--out", str(Path(tmp) / "run"), "--display", "plain",
        ]  # fmt: skip
        start = time.perf_counter()
        completed = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if completed.returncode != 0:
            raise RuntimeError(f"full run failed:\n{completed.stderr[-2000:]}")
    # ru_maxrss of finished children is in KiB on Linux: the largest child so far.
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"seconds": seconds, "peak_rss_gib": peak_kib / 2**20}


def _print(results: dict[str, Any], path: Path | None) -> None:
    width = max(len(k) for k in results)
    for key, value in results.items():
        shown = f"{value:,.6g}" if isinstance(value, float) else str(value)
        print(f"{key.ljust(width)}  {shown}")
    if path:
        path.write_text(json.dumps(results, indent=2))


def run_bench(args: argparse.Namespace) -> dict[str, Any]:
    """Run the benchmarks; print a table and optionally write JSON. Returns the results."""
    for option in ("grading", "mapping", "report"):
        if getattr(args, option, None) is not None and getattr(args, option) < 1:
            raise UserError(f"--{option} must be at least 1.", f"pass --{option} N with N >= 1.")
    if getattr(args, "grading", None):
        from climb_vllm.bench_grading import grading_bench

        graded = grading_bench(args.grading)
        _print(graded, args.json)
        return graded
    if getattr(args, "report", None):
        from climb_vllm.bench_report import report_bench

        with tempfile.TemporaryDirectory(prefix="climb-report-bench-") as folder:
            reported = report_bench(args.report, Path(folder))
        _print(reported, args.json)
        return reported
    if getattr(args, "mapping", None):
        from climb_vllm.bench_mapping import mapping_bench

        mapped = mapping_bench(args.mapping)
        _print(mapped, args.json)
        return mapped
    if getattr(args, "endpoint", None):
        from transformers import AutoTokenizer

        from climb_vllm.bench_serving import serving_bench

        if args.model is None:
            raise UserError("bench --endpoint needs the served model's folder.", "add --model DIR.")
        tokenizer = AutoTokenizer.from_pretrained(str(args.model))
        requests, _ = _requests(tokenizer, args.codes)
        served = serving_bench(args, requests, args.codes)
        _print(served, args.json)
        return served
    model = args.model
    tmp: tempfile.TemporaryDirectory[str] | None = None
    if model is None:
        from climb_vllm.demo_model import build_demo_model

        tmp = tempfile.TemporaryDirectory()
        model = build_demo_model(Path(tmp.name) / "tiny")
    shared = LocalEngine(
        str(model), device=args.device, dtype=args.dtype, batch_tokens=args.batch_tokens
    )
    naive = LocalEngine(
        str(model),
        device=args.device,
        dtype=args.dtype,
        batch_tokens=args.batch_tokens,
        prefix_sharing=False,
    )
    start = time.perf_counter()
    requests, pairs = _requests(shared.tokenizer, args.codes)
    encode_seconds = time.perf_counter() - start
    naive_seconds, naive_results = _timed(naive, requests)
    shared_seconds, shared_results = _timed(shared, requests)
    worst = max(
        abs(a - b)
        for x, y in zip(shared_results, naive_results)
        for a, b in zip(x.logprobs, y.logprobs)
    )
    facts = shared.describe()
    results: dict[str, Any] = {
        "model": str(args.model or "tiny demo model (built now)"),
        "parameters": facts["parameters"],
        "device": facts["device"],
        "dtype": facts["dtype"],
        "codes": args.codes,
        "pairs": pairs,
        "encode_seconds": encode_seconds,
        "P1_naive_tokens_per_pair": naive.stats.forward_tokens / pairs,
        "P1_shared_tokens_per_pair": shared.stats.forward_tokens / pairs,
        "P1_ratio": naive.stats.forward_tokens / shared.stats.forward_tokens,
        "P1_naive_head_rows": naive.stats.head_rows,
        "P1_shared_head_rows": shared.stats.head_rows,
        "P1_max_abs_logprob_diff": worst,
        "P2_naive_seconds": naive_seconds,
        "P2_shared_seconds": shared_seconds,
        "P2_ratio": naive_seconds / shared_seconds,
        "P2_shared_codes_per_second": args.codes / shared_seconds,
    }
    if args.full_run:
        full = _full_run(Path(model), facts["device"], facts["dtype"], args.batch_tokens)
        results["full_run_seconds"] = full["seconds"]
        results["full_run_peak_rss_gib"] = full["peak_rss_gib"]
    _print(results, args.json)
    if tmp is not None:
        tmp.cleanup()
    return results
