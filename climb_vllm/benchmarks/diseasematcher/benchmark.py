"""DiseaseMatcher as a registered benchmark: which of two patients is more likely to have
disease D? What it declares to the registry, and to the shared HIVE library its
:class:`~climb_vllm.benchmarks.hive.kind.Kind`. Heavy imports (Polars, matplotlib, the graders)
happen when a function is called, so the registry and the command line load quickly."""

from __future__ import annotations

from climb_vllm.benchmarks.base import (
    BenchHook,
    ReportFigure,
    ReportTable,
    Synthetic,
    deferred,
)
from climb_vllm.benchmarks.diseasematcher.config import DiseaseMatcherConfig
from climb_vllm.benchmarks.diseasematcher.kind import NAME, TITLE, kind
from climb_vllm.benchmarks.hive.base import HiveBenchmark


def _report_tables() -> tuple[ReportTable, ...]:
    """HIVE Tables 1-2 among the papers' tables; grade shares as an extra."""
    from climb_vllm.benchmarks.diseasematcher.tables import PERCENT, TITLES
    from climb_vllm.benchmarks.hive.choice_tables import SWAP_NOTE

    def title(key: str) -> str:
        text = TITLES[key].replace("DiseaseMatcher Table", "HIVE Table")
        return text + (" (DiseaseMatcher)" if key.startswith("table") else "")

    from climb_vllm.benchmarks.diseasematcher import choice

    return (
        ReportTable("table1", title("table1"), 80, percent=PERCENT["table1"]),
        ReportTable("table2", title("table2"), 90, percent=PERCENT["table2"]),
        ReportTable("choice_method", "DiseaseMatcher, choice mode: method", 91),
        ReportTable("choice_accuracy", choice.TITLES["choice_accuracy"], 92),
        ReportTable(
            "choice_position",
            choice.TITLES["choice_position"],
            93,
            percent=choice.PERCENT["choice_position"],
        ),
        ReportTable(
            "choice_swaps",
            choice.TITLES["choice_swaps"],
            94,
            note=SWAP_NOTE,
        ),
        ReportTable("grades", title("grades"), 140, percent=PERCENT["grades"]),
    )


def _figures() -> tuple[ReportFigure, ...]:
    return (
        ReportFigure(
            NAME,
            deferred("climb_vllm.benchmarks.diseasematcher.figures:diseasematcher_accuracy"),
            "DiseaseMatcher accuracy by attribute with the correct patient first (plain) or "
            "second (hatched), authors' split.",
            50,
            "table1",
        ),
    )


DISEASEMATCHER = HiveBenchmark(
    NAME,
    TITLE,
    kind,
    "DiseaseMatcher: which of two patients has disease D",
    DiseaseMatcherConfig,
    ("same", "different", "ambiguous"),
    _report_tables,
    _figures,
    bench_hooks=(
        BenchHook(
            "grading",
            "measure grading speed on N responses of every graded benchmark instead (one "
            "process against the default workers)",
            deferred("climb_vllm.benchmarks.diseasematcher.perf:grading_bench"),
        ),
        BenchHook(
            "choice",
            "measure choice mode on N items of every benchmark that has it instead (default 64): "
            "options sharing their prompt against one sequence per option with lm-eval's HFLM",
            deferred("climb_vllm.benchmarks.diseasematcher.perf:choice_speed"),
            default=64,
        ),
    ),
    synthetic=Synthetic(deferred("climb_vllm.benchmarks.diseasematcher.perf:synthetic_answers")),
)
