"""BiasMD as a registered benchmark: does the model attribute an ambiguous pronoun to one of two
people? What it declares to the registry, and to the shared HIVE library its
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
from climb_vllm.benchmarks.biasmd.config import BiasMDConfig
from climb_vllm.benchmarks.biasmd.kind import NAME, TITLE, kind
from climb_vllm.benchmarks.hive.base import HiveBenchmark


def _report_tables() -> tuple[ReportTable, ...]:
    """Accuracy among the papers' tables; grade shares as an extra."""
    from climb_vllm.benchmarks.biasmd import choice
    from climb_vllm.benchmarks.biasmd.tables import PERCENT, TITLES
    from climb_vllm.benchmarks.hive.choice_tables import SWAP_NOTE

    return (
        ReportTable("accuracy", TITLES["accuracy"], 100, percent=PERCENT["accuracy"]),
        ReportTable("choice_method", "BiasMD, choice mode: method", 101),
        ReportTable("choice_accuracy", choice.TITLES["choice_accuracy"], 102),
        ReportTable("choice_position", choice.TITLES["choice_position"], 103),
        ReportTable(
            "choice_swaps",
            choice.TITLES["choice_swaps"],
            104,
            note=SWAP_NOTE,
        ),
        ReportTable("grades", TITLES["grades"], 150),
    )


def _figures() -> tuple[ReportFigure, ...]:
    return (
        ReportFigure(
            NAME,
            deferred("climb_vllm.benchmarks.biasmd.figures:biasmd_accuracy"),
            "BiasMD accuracy beside control accuracy, authors' split. Bars: 95% CI, bootstrap "
            "over items.",
            60,
            "accuracy",
        ),
    )


BIASMD = HiveBenchmark(
    NAME,
    TITLE,
    kind,
    "BiasMD: ambiguous pronoun statements (and resolvable controls)",
    BiasMDConfig,
    ("Ambiguous", "Biased"),
    _report_tables,
    _figures,
    bench_hooks=(
        BenchHook(
            "grading",
            "measure grading speed on N responses of every graded benchmark instead (one "
            "process against the default workers)",
            deferred("climb_vllm.benchmarks.biasmd.perf:grading_bench"),
        ),
        BenchHook(
            "choice",
            "measure choice mode on N items of every benchmark that has it instead (default 64): "
            "options sharing their prompt against one sequence per option with lm-eval's HFLM",
            deferred("climb_vllm.benchmarks.biasmd.perf:choice_speed"),
            default=64,
        ),
    ),
    synthetic=Synthetic(deferred("climb_vllm.benchmarks.biasmd.perf:synthetic_answers")),
)
