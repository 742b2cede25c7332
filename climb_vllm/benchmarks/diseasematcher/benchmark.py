"""DiseaseMatcher as a registered benchmark: which of two patients is more likely to have
disease D? What it declares to the registry, and to the shared HIVE library its
:class:`~climb_vllm.benchmarks.hive.kind.Kind`. Heavy imports (Polars, matplotlib, the graders)
happen when a function is called, so the registry and the command line load quickly."""

from __future__ import annotations

from typing import Any

from climb_vllm.benchmarks.base import BenchHook, PerfSettings, ReportFigure, ReportTable, Synthetic
from climb_vllm.benchmarks.diseasematcher.config import DiseaseMatcherConfig
from climb_vllm.benchmarks.diseasematcher.kind import NAME, TITLE, kind
from climb_vllm.benchmarks.hive.base import HiveBenchmark


def _report_tables() -> tuple[ReportTable, ...]:
    """HIVE Tables 1-2 among the papers' tables; grade shares as an extra."""
    from climb_vllm.benchmarks.diseasematcher.tables import TITLES

    def title(key: str) -> str:
        text = TITLES[key].replace("DiseaseMatcher Table", "HIVE Table")
        return text + (" (DiseaseMatcher)" if key.startswith("table") else "")

    return (
        ReportTable("table1", title("table1"), 80),
        ReportTable("table2", title("table2"), 90),
        ReportTable("grades", title("grades"), 140),
    )


def _accuracy_figure(runs: Any) -> bytes | None:
    from climb_vllm.benchmarks.diseasematcher.figures import diseasematcher_accuracy

    return diseasematcher_accuracy(runs)


def _figures() -> tuple[ReportFigure, ...]:
    return (
        ReportFigure(
            NAME,
            _accuracy_figure,
            "DiseaseMatcher accuracy by attribute with the correct patient first (plain) or "
            "second (hatched), authors' split.",
            50,
            "table1",
        ),
    )


def _grading_bench(count: int, _: PerfSettings) -> dict[str, Any]:
    from climb_vllm.benchmarks.diseasematcher.perf import grading_bench

    return grading_bench(count)


def _synthetic(store: Any, model: str, rng: Any) -> int:
    from climb_vllm.benchmarks.diseasematcher.perf import synthetic_answers

    return synthetic_answers(store, model, rng)


DISEASEMATCHER = HiveBenchmark(
    NAME,
    TITLE,
    kind,
    "DiseaseMatcher: which of two patients has disease D",
    DiseaseMatcherConfig,
    "a sample of N questions",
    ("same", "different", "ambiguous"),
    _report_tables,
    _figures,
    bench_hooks=(
        BenchHook(
            "grading",
            "measure grading speed on N responses of every graded benchmark instead (one "
            "process against the default workers)",
            _grading_bench,
        ),
    ),
    synthetic=Synthetic(_synthetic),
)
