"""CLIMB extrinsic as a registered benchmark: its options, run, results, report tables, figure
and mapping bench."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.benchmarks.base import (
    GREEDY,
    BenchHook,
    ExternalGrader,
    Finding,
    Option,
    Paired,
    PerfSettings,
    ReportFigure,
    ReportTable,
    Synthetic,
    options_of,
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


def _budget(engine: EngineConfig, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The context length and new-token limit a run uses when the options leave them out.

    The context is the servers' own (a server may be started with less than the model allows)
    and else the local model folder's; the new-token limit under CliBench's protocol is its
    rule on the folder's ``max_length``."""
    from climb_vllm.benchmarks.extrinsic import layout
    from climb_vllm.engines.served_context import served_context

    facts = layout.model_facts(engine.tokenizer or engine.model)
    chosen: dict[str, Any] = {}
    if fields.get("context_tokens") is None:
        served = None
        if engine.engine == "http":
            served = served_context(engine.endpoints, engine.served_model)
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
    options: tuple[Option, ...] = options_of(ExtrinsicConfig, extra=(GREEDY,))
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

    def configure(self, engine: EngineConfig, values: Mapping[str, Any]) -> ExtrinsicConfig:
        """The run's configuration; the case file and the sex rewrite are hashed so that a run
        is never resumed into with either changed."""
        from pydantic import ValidationError

        from climb_vllm.benchmarks.extrinsic import run
        from climb_vllm.runner.run import invalid_option

        fields = dict(values)
        if fields.pop("greedy", False):
            fields.update(temperature=0.0, top_p=None)
        cases = str(fields.get("cases", ExtrinsicConfig.model_fields["cases"].default))
        fields["cases_sha256"] = run.cases_sha256(cases)
        fields["rewrite_sha256"] = run.rewrite_sha256()
        if fields.get("rewrite_decisions"):
            from climb_vllm.rewrite.review import file_sha256, load_decisions

            load_decisions(fields["rewrite_decisions"])  # a bad file fails before the run
            fields["rewrite_decisions_sha256"] = file_sha256(fields["rewrite_decisions"])
        fields.update(_budget(engine, fields))
        try:
            return engine.extend(ExtrinsicConfig, fields)
        except ValidationError as exc:
            raise invalid_option(exc, NAME, ExtrinsicConfig) from exc

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
