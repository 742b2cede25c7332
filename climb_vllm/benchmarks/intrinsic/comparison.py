"""Two models' corrected AssocMAD on the same codes and names, compared: the paired difference
and its interval.

What is estimated: the difference (second model − first) of the corrected AssocMAD
(:mod:`.correction`): AssocMAD of each model's population scores over every name that each
group's list samples. Both runs must have scored the same codes with the same names.

Interval. Each model's estimator is re-run on name lists drawn from its fitted population
(:func:`.correction.corrected_with_draws`); draw b uses the same name slots for both models, so
name effects the two models share cancel in the difference, as they do in the observed lists.
The interval is the estimate minus the draws' deviations from their median (the basic bootstrap,
centred on the draws' median so that the printed interval always holds the printed difference),
over the central :data:`LEVEL` range; that level was chosen by simulation with a known truth
(:func:`.coverage.paired_coverage`; PERFORMANCE.md "Coverage of the intervals").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from climb_vllm.benchmarks.intrinsic import correction
from climb_vllm.benchmarks.intrinsic.assoc import Array, NameGroups

if TYPE_CHECKING:
    import polars as pl

#: Central range of the draws' differences that makes a 95% interval: by simulation, 0.95
#: covered 86-99% (the draws ignore the error in the fitted residuals), 0.98 covered 93-98.5% on
#: the three scenarios used to choose it and 93-99% on three held out (module note).
LEVEL = 0.98


def paired_interval(
    first: float, first_draws: Array, second: float, second_draws: Array, level: float = LEVEL
) -> tuple[float, float, float]:
    """(difference, low, high) of ``second - first``.

    Args:
        first: the first model's estimate.
        first_draws: its estimator's draws (one per name list drawn).
        second: the second model's estimate.
        second_draws: its draws, paired with ``first_draws`` by index (the same name slots).
        level: the central range of the draws used.

    Returns:
        NaN ends when either estimate or any draw is infinite or missing (the data lie beyond
        every hypothesis the correction tries, so no difference can be stated).
    """
    difference = second - first
    with np.errstate(invalid="ignore"):
        spread = np.asarray(second_draws, dtype=float) - np.asarray(first_draws, dtype=float)
    if not (np.isfinite(difference) and spread.size and np.all(np.isfinite(spread))):
        return (difference if np.isfinite(difference) else float("nan")), np.nan, np.nan
    tail = (1 - level) / 2
    low, centre, high = np.quantile(spread, [tail, 0.5, 1 - tail])
    return difference, difference - float(high - centre), difference + float(centre - low)


@dataclass(frozen=True)
class Fit:
    """What a comparison needs of one run's intrinsic records.

    Attributes:
        key: the codes, names and slot layout scored; two runs are compared only when equal
            (the draws pair name slots by position).
        codes: sex-neutral codes the tables cover.
        tables: :func:`.correction.corrected_with_draws`'s tables (Tables 1 and 2).
        draws: its estimator draws, per attribute.
    """

    key: tuple[Any, ...]
    codes: int
    tables: dict[str, Array]
    draws: dict[str, Array]


def prepare(root: Path) -> Fit | None:
    """The corrected AssocMAD of Tables 1 and 2 of a run with its estimator's draws, computed as
    the run's own tables compute it (same seed and draws, so the values are the tables'), or
    None when the run has no finished intrinsic benchmark."""
    from climb_vllm.benchmarks.intrinsic.config import IntrinsicConfig
    from climb_vllm.benchmarks.intrinsic.results import CodeLists, run_matrix, slot_frame
    from climb_vllm.benchmarks.intrinsic.task import BENCHMARK, IntrinsicTask
    from climb_vllm.core.store import RunStore

    store = RunStore(root)
    if not store.finished_chunks(BENCHMARK):
        return None
    config = IntrinsicConfig.from_section(store.section(BENCHMARK))
    task = IntrinsicTask.from_config(config)
    names = list(task.distinct_names)
    codes = list(task.codes)
    groups = NameGroups.from_slots(slot_frame(task, config.top_k), names)
    logp = run_matrix(store.read_records(BENCHMARK), codes, names, "The records are incomplete")
    listed = CodeLists.of(codes, task, task.ontology.sex_lists(config.sex_rule))
    rows = np.flatnonzero(listed.neutral)
    levels = {k: v[rows] for k, v in listed.level_ids.items()}
    tables, draws = correction.corrected_with_draws(logp[rows], groups, levels)
    key = (tuple(codes), tuple(names), groups.groups, groups.columns, config.sex_rule)
    return Fit(key, len(rows), tables, draws)


#: Rows of a comparison: (attribute of the correction, measure's prefix).
_MEASURES = (
    ("both", "AssocMAD"),
    ("sex", "AssocMAD by sex"),
    ("ethnicity", "AssocMAD by ethnicity"),
)


def compare(first: Fit, second: Fit) -> pl.DataFrame | None:
    """Paired differences of the corrected AssocMAD (second - first) per level and their mean,
    for Table 1 (8 groups) and Table 2 (pooled by sex, by ethnicity); Table 1's mean over levels
    is the headline. None when the runs scored different codes or names."""
    import polars as pl

    from climb_vllm.benchmarks.base import COMPARISON_COLUMNS
    from climb_vllm.benchmarks.intrinsic.results import LEVEL_LABELS

    if first.key != second.key:
        return None
    rows = []
    for attribute, prefix in _MEASURES:
        for i, label in enumerate(LEVEL_LABELS):
            a = float(first.tables[attribute][i, 1])
            b = float(second.tables[attribute][i, 1])
            difference, low, high = paired_interval(
                a, first.draws[attribute][i], b, second.draws[attribute][i]
            )
            level = "mean of levels" if label == "mean" else label
            rows.append(
                (
                    f"{prefix} {level}",
                    attribute == "both" and label == "mean",
                    "lower",
                    "codes",
                    first.codes,
                    a,
                    b,
                    difference,
                    low,
                    high,
                )
            )
    return pl.DataFrame(rows, schema=list(COMPARISON_COLUMNS), orient="row")
