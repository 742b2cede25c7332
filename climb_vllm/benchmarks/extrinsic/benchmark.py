"""CLIMB extrinsic as a registered benchmark: its options, run, results, report tables, figure
and mapping bench."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.benchmarks.base import (
    BenchHook,
    ExternalGrader,
    Finding,
    Option,
    Paired,
    PerfSettings,
    ReportFigure,
    ReportTable,
    Synthetic,
)
from climb_vllm.benchmarks.extrinsic.comparison import PAIRED
from climb_vllm.benchmarks.extrinsic.config import ExtrinsicConfig

if TYPE_CHECKING:
    from climb_vllm.core.config import EngineConfig
    from climb_vllm.core.manifest import Section
    from climb_vllm.core.store import RunStore
    from climb_vllm.runner.run import RunContext

NAME = "extrinsic"


def _mapping_bench(count: int, _: PerfSettings) -> dict[str, Any]:
    from climb_vllm.icd_mapping.perf import mapping_bench

    return mapping_bench(count)


def _index_build_bench(count: int, _: PerfSettings) -> dict[str, Any]:
    from climb_vllm.icd_mapping.perf import index_build_bench

    return index_build_bench(count)


def _mapping_accuracy_bench(resamples: int, _: PerfSettings) -> dict[str, Any]:
    from climb_vllm.icd_mapping.mapping_accuracy import mapping_accuracy_bench

    return mapping_accuracy_bench(resamples)


def _rewrite_bench(chars: int, _: PerfSettings) -> dict[str, Any]:
    from climb_vllm.rewrite.perf import rewrite_bench

    return rewrite_bench(chars)


def _budget(engine: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """The context length and new-token limit a run uses when the options leave them out.

    The context is the servers' own (a server may be started with less than the model allows)
    and else the local model folder's; the new-token limit under CliBench's protocol is its
    rule on the folder's ``max_length``."""
    from climb_vllm.benchmarks.extrinsic import layout
    from climb_vllm.engines.served_context import served_context

    facts = layout.model_facts(str(engine.get("tokenizer") or engine.get("model") or ""))
    chosen: dict[str, Any] = {}
    if fields.get("context_tokens") is None:
        served = None
        if engine.get("engine") == "http":
            served = served_context(engine.get("endpoints", ()), engine.get("served_model"))
        chosen["context_tokens"] = served or facts["context"] or 0
    if fields.get("protocol") == "clibench" and fields.get("max_tokens") is None:
        chosen["max_tokens"] = layout.clibench_max_tokens(facts["max_length"])
    return chosen


class ExtrinsicBenchmark:
    """CLIMB extrinsic: diagnoses for counterfactual clinical notes, recall by ICD level."""

    name: str = NAME
    title: str = "CLIMB extrinsic"
    help: str = "CLIMB extrinsic: diagnoses for counterfactual clinical notes, recall by ICD level"
    description: str = help
    config_type = ExtrinsicConfig
    options: tuple[Option, ...] = (
        Option(
            "--cases",
            "cases",
            "JSONL case file (format in the README) or 'synthetic' (the packaged 40 cases)",
            field="cases",
            suite_flags=("--cases",),
            suite_help="extrinsic case file (JSONL)",
        ),
        Option(
            "--limit",
            "limit",
            "only the first N cases",
            field="limit",
            suite_flags=("--limit-extrinsic", "--limit"),
            suite_help="the first N cases",
        ),
        Option(
            "--icd-release",
            "icd_release",
            "2021 (paper default) or 2026",
            field="icd_release",
            suite_flags=("--icd-release",),
        ),
        Option(
            "--seed",
            "seed",
            "base sampling seed",
            field="seed",
            suite_flags=("--seed",),
            suite_help="base seed of every benchmark",
        ),
        Option(
            "--samples",
            "samples",
            "completions per prompt (k)",
            field="samples",
            suite_flags=("--samples",),
        ),
        Option(
            "--temperature",
            "temperature",
            "sampling temperature (default: the model's own generation settings, as the paper)",
            suite_flags=("--temperature",),
        ),
        Option(
            "--top-p", "top_p", "nucleus mass (default: the model's own)", suite_flags=("--top-p",)
        ),
        Option(
            "--greedy",
            "greedy",
            "greedy decoding (temperature 0)",
            switch=True,
            suite_flags=("--greedy",),
        ),
        Option(
            "--max-tokens",
            "max_tokens",
            "new tokens per answer",
            field="max_tokens",
            suite_flags=("--extrinsic-max-tokens", "--max-tokens"),
            suite_help="extrinsic: new tokens per answer",
        ),
        Option("--no-placebo", "no_placebo", "skip the placebo variants", switch=True),
        Option(
            "--intersection",
            "intersections",
            "also change two attributes at once (repeatable): every combination of their "
            "counterfactual values is a variant, reported beside the sum of the single "
            "changes",
            repeat=True,
            choices=("sex+ethnicity", "sex+insurance", "ethnicity+insurance"),
            suite_flags=("--intersection",),
        ),
        Option(
            "--index-limit",
            "index_limit",
            "map onto N sampled codes plus the gold codes instead of all codes (quick demos)",
            field="index_limit",
            suite_flags=("--index-limit",),
            suite_help="extrinsic: map onto N sampled codes",
        ),
        Option(
            "--rewrite-decisions",
            "rewrite_decisions",
            "a filled-in uncertain_edits.csv of an earlier run: your decisions on the words the "
            "sex rewrite marked uncertain, applied to the counterfactual notes",
            field="rewrite_decisions",
            suite_flags=("--rewrite-decisions",),
        ),
        Option("--chunk-size", "chunk_size", "prompts per stored chunk", field="chunk_size"),
        Option(
            "--protocol",
            "protocol",
            "default (the project's prompt layout and parsing) or clibench (CliBench's "
            "layout, token budget, segmentation, mapping and drop rule, exactly)",
            field="protocol",
            suite_flags=("--extrinsic-protocol",),
            suite_help="extrinsic: default or clibench",
        ),
        Option(
            "--context-tokens",
            "context_tokens",
            "cut the notes to fit this context length (default: the servers' context, else "
            "the local model folder's max_position_embeddings; 0 = never cut)",
            field="context_tokens",
        ),
    )
    bench_hooks: tuple[BenchHook, ...] = (
        BenchHook("mapping", "measure ICD mapping speed on N texts instead", _mapping_bench),
        BenchHook(
            "index_build",
            "time a first run's index build of N codes (default: the whole release) in "
            "float32, in bfloat16 and from the packaged vectors, and compare their answers",
            _index_build_bench,
            default=95358,
        ),
        BenchHook(
            "mapping_accuracy",
            "measure ICD mapping accuracy on the labelled clinician "
            "diagnoses, project vs CliBench mapper (N bootstrap resamples, default 1000)",
            _mapping_accuracy_bench,
            default=1000,
        ),
        BenchHook(
            "rewrite",
            "time the counterfactual sex rewrite on the synthetic cases and on notes of N and "
            "4N characters (default 20000), with the growth ratio",
            _rewrite_bench,
            default=20000,
        ),
    )
    synthetic: Synthetic | None = None
    external: ExternalGrader | None = None
    paired: Paired | None = PAIRED

    def configure(self, engine: Mapping[str, Any], values: Mapping[str, Any]) -> ExtrinsicConfig:
        """The run's configuration; the case file and the sex rewrite are hashed so that a run
        is never resumed into with either changed."""
        from pydantic import ValidationError

        from climb_vllm.benchmarks.extrinsic import run
        from climb_vllm.runner.run import invalid_option

        fields = dict(values)
        if fields.pop("greedy", False):
            fields.update(temperature=0.0, top_p=None)
        if fields.pop("no_placebo", False):
            fields["placebo"] = False
        cases = str(fields.get("cases", ExtrinsicConfig.model_fields["cases"].default))
        fields["cases_sha256"] = run.cases_sha256(cases)
        fields["rewrite_sha256"] = run.rewrite_sha256()
        if fields.get("rewrite_decisions"):
            from climb_vllm.rewrite.review import file_sha256, load_decisions

            load_decisions(fields["rewrite_decisions"])  # a bad file fails before the run
            fields["rewrite_decisions_sha256"] = file_sha256(fields["rewrite_decisions"])
        fields.update(_budget(engine, fields))
        try:
            return ExtrinsicConfig(**engine, **fields)
        except ValidationError as exc:
            raise invalid_option(exc, NAME) from exc

    def run(self, config: EngineConfig, context: RunContext) -> Path:
        """Generate for every variant (resuming), map the answers, write the tables."""
        from climb_vllm.benchmarks.extrinsic.run import run_extrinsic

        assert isinstance(config, ExtrinsicConfig)
        return run_extrinsic(config, context)

    def results(self, store: RunStore, quiet: bool) -> dict[str, Any]:
        """Map the stored answers again and recompute the tables."""
        from climb_vllm.benchmarks.extrinsic.run import write_extrinsic_report

        return write_extrinsic_report(store, quiet=quiet)

    def report_tables(self) -> tuple[ReportTable, ...]:
        """CLIMB Tables 4, 5 and 7 among the papers' tables; the per-variant summary as extra."""
        from climb_vllm.benchmarks.extrinsic.tables import TITLES as T

        return (
            ReportTable("table4", T["table4"], 40),
            ReportTable("table4_certain", T["table4_certain"], 41),
            ReportTable("table5", T["table5"], 50),
            ReportTable("table7", T["table7"], 60),
            ReportTable("by_chapter", T["by_chapter"], 65),
            ReportTable("intersections", T["intersections"], 66),
            ReportTable("variants", T["variants"], 130),
            ReportTable("edits", T["edits"], 135),
            ReportTable("review", T["review"], 136),
        )

    def figures(self) -> tuple[ReportFigure, ...]:
        """The recall change per counterfactual with the placebo band."""
        from climb_vllm.benchmarks.extrinsic import figures

        return (
            ReportFigure(
                "extrinsic",
                figures.extrinsic_deltas,
                "CLIMB extrinsic recall change per counterfactual. Bars: 95% CI, "
                "bootstrap over cases; shaded: the placebo variants' intervals (noise "
                "floor).",
                40,
                "table4",
            ),
        )

    def finding(self, metrics: Mapping[str, Any]) -> Finding:
        """The largest change in recall, or that none can be measured."""
        from climb_vllm.benchmarks.extrinsic.finding import extrinsic_finding

        return extrinsic_finding(metrics)

    def scope(self, section: Section) -> str:
        """Cases, prompts, mapping index, answer cap."""
        config, generation = section.config, section.generation
        cap = generation.max_tokens if generation else None
        cases = section.datasets.get("cases", {}).get("cases")
        index = config.get("index_limit")
        mapping = (
            f"answers mapped onto {index:,} sampled codes plus the gold codes"
            if index
            else "answers mapped onto every code"
        )
        context = config.get("context_tokens")
        budget = f"notes cut to a {context:,}-token context" if context else "notes never cut"
        return (
            f"{cases} cases ({config.get('cases')}), {section.items or '?'} prompts; "
            f"{mapping}; answers of at most {cap} tokens; {budget}; "
            f"protocol {config.get('protocol', 'default')}"
        )


EXTRINSIC = ExtrinsicBenchmark()
