"""What each verb does with its parsed arguments: turn them into typed values and call the
library. Nothing below the command line ever sees an ``argparse.Namespace``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from climb_vllm.benchmarks.base import Benchmark, ExternalGrader
from climb_vllm.benchmarks.registry import get, selected
from climb_vllm.cli.parser import SUITE_DEST, suite_options
from climb_vllm.core.errors import UserError
from climb_vllm.core.freshness import mark
from climb_vllm.runner.options import ENGINE_FLAGS, EngineOptions
from climb_vllm.runner.options import engine_options as read_engine_options
from climb_vllm.runner.run import RunContext, resolve_engine


def engine_options(args: argparse.Namespace, adapter: str | None = None) -> EngineOptions:
    """The engine options of an ``eval`` verb (read by their declarations, ``ENGINE_FLAGS``).

    Args:
        args: the parsed command line.
        adapter: the adapter of this run (None: the single ``--adapter`` given, if any).
    """
    if adapter is None and len(args.adapter) > 1:
        raise UserError(
            f"{len(args.adapter)} adapters were given to one benchmark.",
            "pass one --adapter per 'eval <benchmark>', or use 'eval all' to run the base "
            "model and several adapters and compare them.",
        )
    if adapter is None:
        adapter = args.adapter[0] if args.adapter else None
    return read_engine_options({f.field: getattr(args, f.field) for f in ENGINE_FLAGS}, adapter)


def run_context(args: argparse.Namespace) -> RunContext:
    """Where an ``eval`` verb writes."""
    return RunContext(out=args.out, run_id=args.run_id)


def _given(values: dict[str, Any]) -> dict[str, Any]:
    """The options the user gave (argparse leaves the others None)."""
    return {k: v for k, v in values.items() if v is not None}


def eval_one(args: argparse.Namespace) -> Path:
    """``eval <benchmark>``; returns the run directory."""
    benchmark = get(args.benchmark)
    values = _given({o.dest: getattr(args, o.dest) for o in benchmark.options})
    config = benchmark.configure(resolve_engine(engine_options(args)), values)
    run_dir = benchmark.run(config, run_context(args))
    mark(run_dir, benchmark.name)  # its results are those of its final records
    return run_dir


def suite_values(args: argparse.Namespace, benchmarks: list[Benchmark]) -> dict[str, Any]:
    """Per benchmark, the values of its options that ``eval all`` was given."""
    given = {flag: getattr(args, SUITE_DEST + flag) for flag in suite_options()}

    def first(flags: tuple[str, ...]) -> Any:
        return next((given[f] for f in flags if given[f] is not None), None)

    return {
        b.name: _given({o.dest: first(o.suite_flags) for o in b.options if o.suite_flags})
        for b in benchmarks
    }


def eval_all(args: argparse.Namespace) -> Path:
    """``eval all``; returns the report's path (the run directory with ``--no-report``).

    Raises:
        UserError: one or more benchmarks failed (after the others ran and the report of what
            exists was written), naming each and why.
    """
    from climb_vllm.suite import run_suite

    benchmarks = selected(args.benchmarks)
    if args.adapter:
        return _eval_adapters(args, benchmarks)
    outcome = run_suite(
        benchmarks,
        suite_values(args, benchmarks),
        engine_options(args),
        run_context(args),
        report=not args.no_report,
    )
    if outcome.report is not None:
        print(f"report written to {outcome.report}")
    elif outcome.run_dir is not None and not outcome.failed:
        print(f"run written to {outcome.run_dir}")
    if outcome.failed:
        names = ", ".join(outcome.failed)
        first = next(iter(outcome.failed.values()))
        raise UserError(
            f"{len(outcome.failed)} of {len(benchmarks)} benchmarks failed ({names}); the first: "
            f"{first}",
            "fix the cause and rerun the same command: finished benchmarks and chunks are kept.",
        )
    assert outcome.run_dir is not None
    return outcome.report or outcome.run_dir


def _eval_adapters(args: argparse.Namespace, benchmarks: list[Benchmark]) -> Path:
    """``eval all --adapter A --adapter B``: the base model, then each adapter, each into its
    own run directory (with ``--out DIR``: DIR, then DIR+<adapter> beside it); one report over
    all of them, with the paired comparisons, in the base run's ``report/``."""
    from dataclasses import replace

    from climb_vllm.report.html import write_report
    from climb_vllm.suite import run_suite

    values = suite_values(args, benchmarks)
    context = run_context(args)
    variants: list[str | None] = [None, *args.adapter]
    base = engine_options(args, adapter="")
    outcomes = []
    for adapter in variants:
        options = replace(base, adapter=adapter)
        here = context
        if adapter and context.out is not None:
            name = Path(adapter).name or adapter
            here = replace(context, out=context.out.parent / f"{context.out.name}+{name}")
        outcomes.append(run_suite(benchmarks, values, options, here, report=False))
    failed = [(v or "base", o.failed) for v, o in zip(variants, outcomes) if o.failed]
    run_dirs = [o.run_dir for o in outcomes if o.run_dir is not None]
    report: Path | None = None
    if run_dirs and not args.no_report and outcomes[0].run_dir is not None:
        report = write_report(run_dirs, outcomes[0].run_dir / "report")
        print(f"report written to {report}")
    if failed:
        variant, reasons = failed[0]
        raise UserError(
            f"Benchmarks failed in {len(failed)} of {len(variants)} runs; first: {variant}: "
            f"{next(iter(reasons.values()))}",
            "fix the cause and rerun the same command: finished benchmarks and chunks are kept.",
        )
    return report or run_dirs[0]


def _external(name: str) -> ExternalGrader:
    """The external grader of a benchmark (the parser only offers benchmarks that have one)."""
    external = get(name).external
    if external is None:
        raise UserError(f"{name} cannot grade outside answers.", "choose another benchmark.")
    return external


def grade(args: argparse.Namespace) -> None:
    """``grade``: grade another tool's answers, or measure agreement with their labels."""
    external = _external(args.benchmark)
    if args.labels:
        if args.out is None:
            raise UserError(
                "--labels writes the agreement and the disagreements to a folder.",
                "add --out DIR.",
            )
        external.agreement(
            args.responses, args.labels, args.by, args.out, args.disagreements, args.seed
        )
        return
    if args.by:
        raise UserError("--by groups labelled answers.", "add --labels COLUMN, or drop --by.")
    external.grade_external(args.responses, args.out, args.model, args.seed)


def prompts(args: argparse.Namespace) -> None:
    """``prompts``: write a benchmark's prompts for another tool."""
    _external(args.benchmark).write_prompts(
        args.out, args.split, args.limit, args.seed, not args.no_controls
    )


def rescore(args: argparse.Namespace) -> Path:
    """``rescore``: recompute a run's results and its report; returns the report's path."""
    from climb_vllm.report.html import write_report
    from climb_vllm.report.rescore import rescore as recompute

    recompute(args.run_dir)
    return write_report([args.run_dir], args.run_dir / "report")


def report(args: argparse.Namespace) -> Path:
    """``report``: one report over run directories; returns its path."""
    from climb_vllm.report.html import write_report

    out = args.out or (
        args.run_dirs[0] / "report" if len(args.run_dirs) == 1 else Path("outputs/report")
    )
    return write_report(args.run_dirs, out)


def serve(args: argparse.Namespace) -> list[str]:
    """``serve``: start vLLM or llama.cpp servers; returns their URLs."""
    from climb_vllm.models.adapters import lora_flags, parse_adapters
    from climb_vllm.serving.launch import serve as start

    models = [m for m in args.model.split(",") if m]
    adapters = lora_flags(parse_adapters(args.adapters))
    if adapters and args.server != "vllm":
        raise UserError(
            "--adapters are served by vLLM only.", "serve adapters without --server llamacpp."
        )
    if adapters and len(models) > 1:
        raise UserError(
            "--adapters belong to one base model, but several models were given.",
            "serve one base model with its adapters per 'serve' command (another --port).",
        )
    return start(
        models,
        port=args.port,
        gpus=[g for g in args.gpus.split(",") if g],
        tp=args.tp,
        python=args.python,
        host=args.host,
        cpu=args.cpu,
        extra=adapters + [a for a in args.vllm_args if a != "--"],
        timeout=args.timeout,
        server=args.server,
    )


def demo_model(args: argparse.Namespace) -> Path:
    """``demo-model``: build the tiny random model, or a shape preset; returns its folder."""
    from climb_vllm.models.demo_model import build_demo_model

    if args.preset:
        from climb_vllm.models.presets import build_preset

        if args.lora:
            raise UserError("--lora does not combine with --preset.", "drop one of the two.")
        return build_preset(args.out, args.preset, seed=args.seed, layers=args.layers)
    model = args.out
    if not (model / "config.json").is_file() or not args.lora:
        model = build_demo_model(
            args.out,
            vocab_size=args.vocab_size,
            hidden_size=args.hidden_size,
            layers=args.layers or 2,
            heads=args.heads,
            intermediate_size=args.intermediate_size,
            seed=args.seed,
        )
    if args.lora:
        from climb_vllm.models.adapters import make_demo_adapter

        for k, folder in enumerate(args.lora):
            make_demo_adapter(model, folder, seed=args.seed + 1 + k)
    return Path(model)


def model(args: argparse.Namespace) -> str:
    """``model get NAME`` (the folder's path) or ``model list`` (a line per source)."""
    from climb_vllm.models import sources

    if args.model_verb == "get":
        if args.gguf == "file":
            return str(sources.gguf_file(args.name))
        if args.gguf == "f32":
            from climb_vllm.serving.llamacpp import dequantized

            return str(dequantized(sources.gguf_file(args.name)))
        return str(sources.get(args.name))
    lines = []
    for name, source in sources.SOURCES.items():
        folder = sources.folder_of(name)
        state = str(folder) if (folder / sources.SOURCE_FILE).is_file() else "not converted"
        lines.append(f"{name}  {source.title}  [{state}]")
    return "\n".join(lines)
