"""BiasMD and DiseaseMatcher (the HIVE benchmarks) as registered benchmarks: one class, two
instances that differ in name, configuration, options, tables and figure."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.benchmarks.base import (
    BenchHook,
    ExternalGrader,
    Option,
    Paired,
    PerfSettings,
    ReportFigure,
    ReportTable,
    Synthetic,
)
from climb_vllm.benchmarks.hive import comparison
from climb_vllm.benchmarks.hive.config import BiasMDConfig, DiseaseMatcherConfig, GenerationConfig

if TYPE_CHECKING:
    import numpy as np

    from climb_vllm.core.config import EngineConfig
    from climb_vllm.core.store import RunStore
    from climb_vllm.runner.run import RunContext


def _grading_bench(count: int, _: PerfSettings) -> dict[str, Any]:
    from climb_vllm.benchmarks.hive.perf import grading_bench

    return grading_bench(count)


def _options(name: str, suite_limit_help: str, controls: bool) -> tuple[Option, ...]:
    """The options of ``eval biasmd`` / ``eval diseasematcher`` (BiasMD adds --no-controls)."""
    options: tuple[Option, ...] = (
        Option(
            "--split",
            "split",
            "eval: the authors' test split (the paper's numbers); all: every item",
            field="split",
            choices=("eval", "all"),
            suite_flags=("--split",),
            suite_help="BiasMD / DiseaseMatcher items: the authors' test split (eval) or all",
        ),
        Option(
            "--limit",
            "limit",
            "a sample of N items spread over the categories",
            field="limit",
            suite_flags=(f"--limit-{name}", "--limit"),
            suite_help=suite_limit_help,
        ),
        Option(
            "--seed",
            "seed",
            "base sampling seed (and --limit's)",
            field="seed",
            suite_flags=("--seed",),
            suite_help="base seed of every benchmark",
        ),
        Option(
            "--samples",
            "samples",
            "completions per item",
            field="samples",
            suite_flags=("--samples",),
        ),
        Option(
            "--temperature",
            "temperature",
            "sampling temperature (the authors' 0.8)",
            field="temperature",
            suite_flags=("--temperature",),
        ),
        Option(
            "--top-p",
            "top_p",
            "nucleus mass (the authors' 0.9)",
            field="top_p",
            suite_flags=("--top-p",),
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
            suite_flags=("--max-tokens",),
        ),
        Option("--system-prompt", "system_prompt", "add this system turn (the authors used none)"),
    )
    if controls:
        options += (
            Option(
                "--no-controls", "no_controls", "skip the resolvable control items", switch=True
            ),
        )
    return options + (
        Option("--chunk-size", "chunk_size", "items per stored chunk", field="chunk_size"),
    )


class HiveBenchmark:
    """BiasMD or DiseaseMatcher: generate answers, grade them, tabulate as the HIVE paper.

    Args:
        name: "biasmd" or "diseasematcher".
        help: one line for ``--help``.
        config_type: its configuration class.
        suite_limit_help: the help of its ``--limit-<name>`` in ``eval all``.
        display: its name for readers ("BiasMD").
        label_values: the labels ``grade --labels`` compares with.
        controls: whether it derives resolvable control items (``--no-controls``).
        bench_hooks: speed benchmarks it offers.
    """

    def __init__(
        self,
        name: str,
        help: str,
        config_type: type[GenerationConfig],
        suite_limit_help: str,
        display: str,
        label_values: tuple[str, ...],
        controls: bool = False,
        bench_hooks: tuple[BenchHook, ...] = (),
    ) -> None:
        self.name: str = name
        self.title: str = display
        self.help: str = help
        self.description: str = help
        self.config_type: type[GenerationConfig] = config_type
        self.options: tuple[Option, ...] = _options(name, suite_limit_help, controls)
        self.bench_hooks: tuple[BenchHook, ...] = bench_hooks
        self.synthetic: Synthetic | None = Synthetic(self._synthetic)
        self.label_values: tuple[str, ...] = label_values
        self.controls: bool = controls
        self.external: ExternalGrader | None = self
        self.paired: Paired | None = comparison.paired(name, f"{display}: accuracy")

    def _synthetic(self, store: RunStore, model: str, rng: np.random.Generator) -> int:
        """One answer per item (every item, controls included) for the report's measurement."""
        from climb_vllm.benchmarks.hive.perf import synthetic_answers

        return synthetic_answers(store, model, self.name, rng)

    def configure(self, engine: Mapping[str, Any], values: Mapping[str, Any]) -> GenerationConfig:
        """The run's configuration from the engine fields and the given option values."""
        from pydantic import ValidationError

        from climb_vllm.runner.run import invalid_option

        fields = dict(values)
        if fields.pop("greedy", False):
            fields.update(temperature=0.0, top_p=1.0)
        if fields.pop("no_controls", False):
            fields["controls"] = False
        try:
            return self.config_type(**engine, **fields)
        except ValidationError as exc:
            raise invalid_option(exc, self.name) from exc

    def run(self, config: EngineConfig, context: RunContext) -> Path:
        """Generate for every item (resuming), grade, write the tables."""
        from climb_vllm.benchmarks.hive.run import run_hive

        assert isinstance(config, GenerationConfig)
        return run_hive(config, context)

    def results(self, store: RunStore, quiet: bool) -> dict[str, Any]:
        """Grade the stored answers again and recompute the tables."""
        from climb_vllm.benchmarks.hive.run import write_generation_report

        return write_generation_report(store, self.name, quiet=quiet)

    def report_tables(self) -> tuple[ReportTable, ...]:
        """DiseaseMatcher as HIVE Tables 1-2 and BiasMD accuracy among the papers' tables;
        grade shares as extras."""
        from climb_vllm.benchmarks.hive.tables import BIASMD_TITLES, DISEASEMATCHER_TITLES

        if self.name == "biasmd":
            return (
                ReportTable("accuracy", BIASMD_TITLES["accuracy"], 100),
                ReportTable("grades", BIASMD_TITLES["grades"], 150),
            )

        def title(key: str) -> str:
            text = DISEASEMATCHER_TITLES[key].replace("DiseaseMatcher Table", "HIVE Table")
            return text + (" (DiseaseMatcher)" if key.startswith("table") else "")

        return (
            ReportTable("table1", title("table1"), 80),
            ReportTable("table2", title("table2"), 90),
            ReportTable("grades", title("grades"), 140),
        )

    def figures(self) -> tuple[ReportFigure, ...]:
        """Accuracy by answer position (DiseaseMatcher) or beside the controls (BiasMD)."""
        from climb_vllm.benchmarks.hive import figures

        if self.name == "biasmd":
            return (
                ReportFigure(
                    "biasmd",
                    figures.biasmd_accuracy,
                    "BiasMD accuracy beside control accuracy, authors' split. Bars: "
                    "95% CI, bootstrap over items.",
                    60,
                    "accuracy",
                ),
            )
        return (
            ReportFigure(
                "diseasematcher",
                figures.diseasematcher_accuracy,
                "DiseaseMatcher accuracy by attribute with the correct patient first "
                "(plain) or second (hatched), authors' split.",
                50,
                "table1",
            ),
        )

    def scope(self, section: dict[str, Any]) -> str:
        """Items, split, sample, answer cap."""
        config = section.get("config", {})
        split = "the authors' test split" if config.get("split") == "eval" else "every item"
        sample = f", a sample of {config['limit']}" if config.get("limit") else ""
        with_controls = self.controls and config.get("controls")
        controls = " with their controls" if with_controls else ""
        return (
            f"{section.get('items', '?')} prompts: {split}{sample}{controls}; answers of at most "
            f"{config.get('max_tokens')} tokens"
        )

    def write_prompts(
        self, out: Path, split: str, limit: int | None, seed: int, controls: bool
    ) -> None:
        """Write the prompts as CSV (id, kind, prompt) for another tool."""
        from climb_vllm.benchmarks.hive.external import write_prompts

        write_prompts(self.name, out, split, limit, seed, controls)

    def grade_external(self, responses: Path, out: Path | None, model: str, seed: int) -> None:
        """Grade another tool's answers and print the tables."""
        from climb_vllm.benchmarks.hive.external import grade_external

        grade_external(self.name, responses, out, model, seed)

    def agreement(
        self, responses: Path, labels: str, by: str | None, out: Path, sample: int, seed: int
    ) -> None:
        """Grade labelled answers and write the agreement with the labels."""
        from climb_vllm.benchmarks.hive.external import agreement_external

        agreement_external(self.name, responses, labels, by, out, sample, seed)


BIASMD = HiveBenchmark(
    "biasmd",
    "BiasMD: ambiguous pronoun statements (and resolvable controls)",
    BiasMDConfig,
    "a sample of N BiasMD statements",
    "BiasMD",
    ("Ambiguous", "Biased"),
    controls=True,
    bench_hooks=(
        BenchHook(
            "grading",
            "measure grading speed (BiasMD and DiseaseMatcher) on N responses instead",
            _grading_bench,
        ),
    ),
)
DISEASEMATCHER = HiveBenchmark(
    "diseasematcher",
    "DiseaseMatcher: which of two patients has disease D",
    DiseaseMatcherConfig,
    "a sample of N questions",
    "DiseaseMatcher",
    ("same", "different", "ambiguous"),
)
