"""The HIVE benchmarks as registered benchmarks: one class whose instances (BiasMD in
:mod:`climb_vllm.benchmarks.biasmd`, DiseaseMatcher in :mod:`climb_vllm.benchmarks.diseasematcher`)
differ only in what they declare: their :class:`~climb_vllm.benchmarks.hive.kind.Kind`,
configuration, options, tables, figures and speed measurements."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.benchmarks.base import (
    BenchHook,
    ExternalGrader,
    Finding,
    Option,
    Paired,
    ReportFigure,
    ReportTable,
    Synthetic,
)
from climb_vllm.benchmarks.hive import comparison
from climb_vllm.benchmarks.hive.config import GenerationConfig

if TYPE_CHECKING:
    from climb_vllm.benchmarks.hive.kind import Kind
    from climb_vllm.core.config import EngineConfig
    from climb_vllm.core.manifest import Section
    from climb_vllm.core.store import RunStore
    from climb_vllm.runner.run import RunContext


#: The sampling options of a generation run (the HIVE authors' settings by default).
_SAMPLING = (
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
)


def _options(name: str, suite_limit_help: str, controls: bool) -> tuple[Option, ...]:
    """The options of ``eval <name>`` (``--no-controls`` where the benchmark has controls)."""
    options: tuple[Option, ...] = (
        Option(
            "--split",
            "split",
            "eval: the authors' test split (the paper's numbers); all: every item",
            field="split",
            choices=("eval", "all"),
            suite_flags=("--split",),
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
        *_SAMPLING,
        Option("--system-prompt", "system_prompt", "add this system turn (the authors used none)"),
    )
    if controls:
        options += (
            Option(
                "--no-controls", "no_controls", "skip the resolvable control items", switch=True
            ),
        )
    return options + (
        Option(
            "--answer",
            "answer",
            "generate: sample an answer and grade it (the papers' protocol); choice: the option "
            "the model scores highest (for base models), with swaps that measure bias",
            field="answer",
            choices=("generate", "choice"),
            suite_flags=("--answer",),
        ),
        Option("--chunk-size", "chunk_size", "items per stored chunk", field="chunk_size"),
    )


class HiveBenchmark:
    """A HIVE benchmark: generate answers, grade them, tabulate as the HIVE paper.

    Args:
        name: its registry name.
        title: its name for readers.
        kind: what the shared library needs of it (items, grader, tables), built when first
            needed (it imports the grader and Polars).
        help: one line for ``--help``.
        config_type: its configuration class.
        suite_limit_help: the help of its ``--limit-<name>`` in ``eval all``.
        label_values: the labels ``grade --labels`` compares with.
        tables: the tables the report shows (called when the report asks: their titles live
            beside the tables' code, which imports Polars).
        figures: the figures the report draws (likewise; drawing imports matplotlib).
        controls: whether it derives resolvable control items (``--no-controls``).
        bench_hooks: speed measurements it offers.
        synthetic: its synthetic records for the report's measurement.
    """

    def __init__(
        self,
        name: str,
        title: str,
        kind: Callable[[], Kind],
        help: str,
        config_type: type[GenerationConfig],
        suite_limit_help: str,
        label_values: tuple[str, ...],
        tables: Callable[[], tuple[ReportTable, ...]],
        figures: Callable[[], tuple[ReportFigure, ...]],
        controls: bool = False,
        bench_hooks: tuple[BenchHook, ...] = (),
        synthetic: Synthetic | None = None,
    ) -> None:
        self.name: str = name
        self.title: str = title
        self._kind = kind
        self.help: str = help
        self.description: str = help
        self.config_type: type[GenerationConfig] = config_type
        self.options: tuple[Option, ...] = _options(name, suite_limit_help, controls)
        self.bench_hooks: tuple[BenchHook, ...] = bench_hooks
        self.synthetic: Synthetic | None = synthetic
        self.label_values: tuple[str, ...] = label_values
        self.controls: bool = controls
        self.external: ExternalGrader | None = self
        self.paired: Paired | None = comparison.paired(name, f"{title}: accuracy")
        self._tables = tables
        self._figures = figures

    @property
    def kind(self) -> Kind:
        """What the shared library needs of this benchmark."""
        return self._kind()

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
        return run_hive(self.kind, config, context)

    def results(self, store: RunStore, quiet: bool) -> dict[str, Any]:
        """Grade the stored answers again and recompute the tables."""
        from climb_vllm.benchmarks.hive.run import write_generation_report

        return write_generation_report(store, self.kind, quiet=quiet)

    def report_tables(self) -> tuple[ReportTable, ...]:
        """The tables the report shows, as declared."""
        return self._tables()

    def figures(self) -> tuple[ReportFigure, ...]:
        """The figures the report draws, as declared."""
        return self._figures()

    def finding(self, metrics: Mapping[str, Any]) -> Finding:
        """What the run found (the benchmark's own reading of its metrics; a choice-mode
        run's metrics hold its choice tables)."""
        choice = self.kind.choice
        if choice is not None and "choice_accuracy" in metrics:
            return choice.finding(metrics)
        return self.kind.finding(metrics)

    def scope(self, section: Section) -> str:
        """Items, split, sample, answer cap."""
        config, generation = section.config, section.generation
        split = "the authors' test split" if config.get("split") == "eval" else "every item"
        sample = f", a sample of {config['limit']}" if config.get("limit") else ""
        with_controls = self.controls and config.get("controls")
        controls = " with their controls" if with_controls else ""
        if config.get("answer") == "choice":
            return (
                f"{section.items or '?'} prompts (every item as written and swapped): {split}"
                f"{sample}{controls}; choice mode: the option with the highest log-probability "
                "(summed, per byte and calibrated; the method table names the headline)"
            )
        return (
            f"{section.items or '?'} prompts: {split}{sample}{controls}; answers of at most "
            f"{generation.max_tokens if generation else None} tokens"
        )

    def write_prompts(
        self, out: Path, split: str, limit: int | None, seed: int, controls: bool
    ) -> None:
        """Write the prompts as CSV (id, kind, prompt) for another tool."""
        from climb_vllm.benchmarks.hive.external import write_prompts

        write_prompts(self.kind, out, split, limit, seed, controls)

    def grade_external(self, responses: Path, out: Path | None, model: str, seed: int) -> None:
        """Grade another tool's answers and print the tables."""
        from climb_vllm.benchmarks.hive.external import grade_external

        grade_external(self.kind, responses, out, model, seed)

    def agreement(
        self, responses: Path, labels: str, by: str | None, out: Path, sample: int, seed: int
    ) -> None:
        """Grade labelled answers and write the agreement with the labels."""
        from climb_vllm.benchmarks.hive.external import agreement_external

        agreement_external(self.kind, responses, labels, by, out, sample, seed)
