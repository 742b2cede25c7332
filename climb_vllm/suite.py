"""``climb-vllm eval all``: every benchmark into one run directory, one display, one report.

Each benchmark runs through its own verb with that verb's defaults, overridden by the suite's
options, so a suite run and four single runs write the same records (and a suite interrupted
anywhere resumes like each benchmark does: finished chunks are kept, finished benchmarks only
recompute their tables). The model is loaded, or the servers probed, once for the whole suite.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from climb_vllm.errors import UserError
from climb_vllm.run_results import SUITE

#: Options every benchmark shares, copied from the suite's arguments.
SHARED = (
    "model", "tokenizer", "revision", "engine", "endpoint", "served_model", "concurrency",
    "rate", "device", "dtype", "out", "run_id", "display", "seed",
)  # fmt: skip


def add_suite_args(parser: argparse.ArgumentParser) -> None:
    """The suite's own options (the engine options are added by the caller)."""
    parser.add_argument(
        "--benchmarks", default=",".join(SUITE),
        help=f"comma-separated subset of {','.join(SUITE)} (default: all, in that order)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="base seed of every benchmark")
    parser.add_argument("--limit-intrinsic", type=int, help="stratified sample of N codes")
    parser.add_argument("--limit-extrinsic", type=int, help="the first N cases")
    parser.add_argument("--limit-biasmd", type=int, help="a sample of N BiasMD statements")
    parser.add_argument("--limit-diseasematcher", type=int, help="a sample of N questions")
    parser.add_argument(
        "--split", default="eval", choices=["eval", "all"],
        help="BiasMD / DiseaseMatcher items: the authors' test split (eval) or all",
    )  # fmt: skip
    parser.add_argument("--cases", default="synthetic", help="extrinsic case file (JSONL)")
    parser.add_argument("--index-limit", type=int, help="extrinsic: map onto N sampled codes")
    parser.add_argument(
        "--extrinsic-max-tokens", type=int, default=650, help="extrinsic: new tokens per answer"
    )
    parser.add_argument(
        "--sensitivity-codes", type=int, default=2000,
        help="intrinsic: codes scored under every sensitivity template",
    )  # fmt: skip
    parser.add_argument("--no-report", action="store_true", help="skip the HTML report")


def selected(text: str) -> list[str]:
    """The benchmarks named in ``--benchmarks``, in suite order; unknown names are an error."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in SUITE]
    if unknown or not names:
        raise UserError(
            f"Unknown benchmark(s) {', '.join(unknown) or '(none)'} in --benchmarks.",
            f"choose from {','.join(SUITE)}.",
        )
    return [b for b in SUITE if b in names]


def benchmark_args(
    parser: argparse.ArgumentParser, suite: argparse.Namespace, benchmark: str
) -> argparse.Namespace:
    """The arguments of ``eval <benchmark>``: its defaults, then the suite's options."""
    args = parser.parse_args(["eval", benchmark])
    for name in SHARED:
        setattr(args, name, getattr(suite, name))
    limit = getattr(suite, f"limit_{benchmark}")
    args.limit = limit
    if benchmark == "intrinsic":
        args.sensitivity_codes = suite.sensitivity_codes
    elif benchmark == "extrinsic":
        args.cases = suite.cases
        args.index_limit = suite.index_limit
        args.max_tokens = suite.extrinsic_max_tokens
    else:
        args.split = suite.split
    args.in_suite = True  # tables go to the report, not the terminal
    return args


def eval_all(parser: argparse.ArgumentParser, suite: argparse.Namespace) -> Path:
    """Run the selected benchmarks in order into one run directory; returns the report path
    (or the run directory with ``--no-report``)."""
    from climb_vllm.cli import run_benchmark
    from climb_vllm.progress import Board

    benchmarks = selected(suite.benchmarks)
    engines: dict[str, Any] = {}
    run_dir: Path | None = None
    with Board(benchmarks, suite.display):
        for benchmark in benchmarks:
            args = benchmark_args(parser, suite, benchmark)
            args.shared_engines = engines
            run_dir = run_benchmark(args)
    assert run_dir is not None
    if suite.no_report:
        return run_dir
    from climb_vllm.suite_report import write_report

    return write_report([run_dir], run_dir / "report")
