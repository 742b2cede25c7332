"""The HIVE benchmarks as registered benchmarks: one class whose instances (BiasMD in
:mod:`climb_vllm.benchmarks.biasmd`, DiseaseMatcher in :mod:`climb_vllm.benchmarks.diseasematcher`)
differ only in what they declare: their :class:`~climb_vllm.benchmarks.hive.kind.Kind`,
configuration, options, tables, figures and speed measurements."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.benchmarks.base import (
    GREEDY,
    BenchHook,
    ExternalGrader,
    Finding,
    Option,
    Paired,
    ReportFigure,
    ReportTable,
    Synthetic,
    options_of,
)
from climb_vllm.benchmarks.hive import comparison
from climb_vllm.benchmarks.hive.config import GenerationConfig

if TYPE_CHECKING:
    from climb_vllm.benchmarks.hive.kind import Kind
    from climb_vllm.core.config import EngineConfig
    from climb_vllm.core.manifest import Section
    from climb_vllm.core.store import RunStore
    from climb_vllm.runner.run import RunContext


class HiveBenchmark:
    """A HIVE benchmark: generate answers, grade them, tabulate as the HIVE paper.

    Args:
        name: its registry name.
        title: its name for readers.
        kind: what the shared library needs of it (items, grader, tables), built when first
            needed (it imports the grader and Polars).
        help: one line for ``--help``.
        config_type: its configuration class.
        label_values: the labels ``grade --labels`` compares with.
        tables: the tables the report shows (called when the report asks: their titles live
            beside the tables' code, which imports Polars).
        figures: the figures the report draws (likewise; drawing imports matplotlib).
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
        label_values: tuple[str, ...],
        tables: Callable[[], tuple[ReportTable, ...]],
        figures: Callable[[], tuple[ReportFigure, ...]],
        bench_hooks: tuple[BenchHook, ...] = (),
        synthetic: Synthetic | None = None,
    ) -> None:
        self.name: str = name
        self.title: str = title
        self._kind = kind
        self.help: str = help
        self.description: str = help
        self.config_type: type[GenerationConfig] = config_type
        # Its configuration's options (with --no-controls where it has controls).
        self.options: tuple[Option, ...] = options_of(config_type, extra=(GREEDY,))
        self.bench_hooks: tuple[BenchHook, ...] = bench_hooks
        self.synthetic: Synthetic | None = synthetic
        self.label_values: tuple[str, ...] = label_values
        self.controls: bool = any(option.dest == "controls" for option in self.options)
        self.external: ExternalGrader | None = self
        self.paired: Paired | None = comparison.paired(name, f"{title}: accuracy")
        self._tables = tables
        self._figures = figures

    @property
    def kind(self) -> Kind:
        """What the shared library needs of this benchmark."""
        return self._kind()

    def configure(self, engine: EngineConfig, values: Mapping[str, Any]) -> GenerationConfig:
        """The run's configuration from the engine fields and the given option values."""
        from pydantic import ValidationError

        from climb_vllm.runner.run import invalid_option

        fields = dict(values)
        if fields.pop("greedy", False):
            fields.update(temperature=0.0, top_p=1.0)
        try:
            return engine.extend(self.config_type, fields)
        except ValidationError as exc:
            raise invalid_option(exc, self.name, self.config_type) from exc

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
