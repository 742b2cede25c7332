"""DiseaseMatcher: which of two patients is more likely to have disease D?

32,000 questions in 32 categories of 1,000: attribute (belief, race, status, none) x symptoms per
patient (3-6) x position of the correct patient (first, second). The prompt is the bare
question. Grades (:mod:`climb_vllm.benchmarks.diseasematcher.grading`): correct, wrong,
hedged_correct / hedged_wrong (a disclaimer, then a pick), refusal, indecisive (no pick,
"both"), unparseable, empty. Reported as the paper's Tables 1 and 2 (accuracy = the gold
patient picked without a disclaimer, the paper's ``same``) overall, by correct position, by
attribute and by symptom count, plus position bias = accuracy(first) - accuracy(second) with a
bootstrap interval (items resampled within each position); and the share of every grade by
attribute, with the accuracy that also counts hedged picks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from climb_vllm.benchmarks.diseasematcher.grading import LABELS, grade_diseasematcher
from climb_vllm.benchmarks.hive.grading import grade_many
from climb_vllm.benchmarks.hive.items import splits, stratified_sample
from climb_vllm.core.resampling import difference_interval, mean_interval
from climb_vllm.resources.data import packaged

if TYPE_CHECKING:
    import polars as pl

BENCHMARK = "diseasematcher"
ATTRIBUTES = ("belief", "race", "status", "none")


def load_diseasematcher() -> pl.DataFrame:
    """The 32,000 DiseaseMatcher items (columns as in ``data/hive/DISEASEMATCHER_SOURCE.md``)."""
    import polars as pl

    return pl.read_parquet(packaged("hive", "diseasematcher.parquet"))


def items_frame(split: str = "eval", limit: int | None = None, seed: int = 0) -> pl.DataFrame:
    """The questions to ask, with ``prompt`` = the question.

    Args:
        split: "eval" (the authors' 3,200-question test split) or "all".
        limit: a sample of this many questions spread over the 32 categories.
        seed: seed of the sample.
    """
    import polars as pl

    frame = load_diseasematcher()
    if split == "eval":
        frame = frame.filter(pl.col("in_eval_split"))
    frame = stratified_sample(frame, "category", limit, seed)
    return frame.with_columns(pl.col("question").alias("prompt"))


def grade_frame(records: pl.DataFrame, items: pl.DataFrame) -> pl.DataFrame:
    """Grade records (``id, response`` ...) against their items; adds ``grade, rule, correct``."""
    import polars as pl

    joined = records.join(items.drop("prompt"), on="id", how="inner")
    grades = grade_many(
        grade_diseasematcher,
        joined.select("response", "patient1", "patient2", "answer", "question", "disease").rows(),
    )
    return joined.with_columns(
        pl.Series("grade", [g.label for g in grades], dtype=pl.String),
        pl.Series("rule", [g.rule for g in grades], dtype=pl.String),
    ).with_columns((pl.col("grade") == "correct").alias("correct"))


def _summary(frame: pl.DataFrame, **keys: Any) -> dict[str, Any]:
    values = frame["correct"].cast(int).to_numpy()
    low, high = mean_interval(values)
    counts = {label: int((frame["grade"] == label).sum()) for label in LABELS}
    n = max(frame.height, 1)
    return {
        **keys,
        "n": frame.height,
        "accuracy": float(values.mean()) if values.size else float("nan"),
        "ci_low": low,
        "ci_high": high,
        "accuracy_any_pick": (counts["correct"] + counts["hedged_correct"]) / n,
        **{f"{label}_rate": counts[label] / n for label in LABELS if label != "correct"},
    }


def tables(graded: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """DiseaseMatcher tables from graded records, for the authors' split and for all items.

    Returns:
        ``table1``: accuracy by attribute and correct position, with position bias (paper
        Table 1 layout: one row per attribute, plus "overall").
        ``table2``: accuracy by symptom count and correct position (paper Table 2).
        ``grades``: accuracy and the rate of every other grade by attribute (refusal rate by
        attribute included).
    """
    import polars as pl

    table1: list[dict[str, Any]] = []
    table2: list[dict[str, Any]] = []
    grades: list[dict[str, Any]] = []
    for split_name, subset in splits(graded):
        if subset.height == 0:
            continue
        groups = [("overall", subset)] + [
            (a, subset.filter(pl.col("attribute") == a)) for a in ATTRIBUTES
        ]
        for label, group in groups:
            if group.height == 0:
                continue
            table1.append(_position_row(group, split=split_name, attribute=label))
            grades.append(_summary(group, split=split_name, attribute=label))
        for count in sorted(subset["n_symptoms"].unique().to_list()):
            group = subset.filter(pl.col("n_symptoms") == count)
            table2.append(_position_row(group, split=split_name, n_symptoms=count))
    return {
        "table1": pl.DataFrame(table1),
        "table2": pl.DataFrame(table2),
        "grades": pl.DataFrame(grades),
    }


def _position_row(group: pl.DataFrame, **keys: Any) -> dict[str, Any]:
    import polars as pl

    first = group.filter(pl.col("correct_position") == "first")["correct"].cast(int).to_numpy()
    second = group.filter(pl.col("correct_position") == "second")["correct"].cast(int).to_numpy()
    both = group["correct"].cast(int).to_numpy()
    low, high = difference_interval(first, second)
    nan = float("nan")
    acc_first = float(first.mean()) if first.size else nan
    acc_second = float(second.mean()) if second.size else nan
    return {
        **keys,
        "n": group.height,
        "accuracy": float(both.mean()) if both.size else nan,
        "accuracy_first": acc_first,
        "accuracy_second": acc_second,
        "position_bias": acc_first - acc_second,
        "bias_ci_low": low,
        "bias_ci_high": high,
    }
