"""Rows of choice mode's tables that BiasMD and DiseaseMatcher share: accuracy by each score
with its interval, and the paired effect of a swap.

What each number estimates:
- accuracy by a score: the share of items whose highest-scoring option is the correct one;
  95% Wilson score interval. A choice is deterministic, so shares of 0% or 100% are common, where
  a percentile bootstrap collapses to [0, 0] (tests/benchmarks/hive/test_choice_tables.py
  computes the Wilson interval's exact coverage).
- a swap's change: per item, the log-odds of choosing the option in the first position over
  the one in the second (by the benchmark's headline score) after the swap minus before it.
  Its mean says whether the swapped property favours one position on average; its mean
  absolute value says how much the property moves the answer at all (a model that ignores it
  changes nothing, exactly: the scores are deterministic). Flips: the share of items whose
  choice changes, with its Wilson interval. The changes' intervals are 95% percentile
  bootstraps over items, each item drawn with both of its versions (paired).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from climb_vllm.benchmarks.hive.agreement import wilson
from climb_vllm.benchmarks.hive.choice import SCORES
from climb_vllm.core.resampling import mean_interval

if TYPE_CHECKING:
    import polars as pl

#: How to read a swaps table, shown under it.
SWAP_NOTE = (
    "A model that ignores the swapped property scores the same before and after: every change "
    "0 and no choice flipped."
)


def accuracy_rows(frame: pl.DataFrame, headline: str, **keys: Any) -> list[dict[str, Any]]:
    """One row per score: ``n, accuracy, ci_low, ci_high`` of ``frame``'s items.

    Args:
        frame: one row per item with ``answer`` (the correct option's index) and the
            ``choice_<score>`` columns of :func:`~climb_vllm.benchmarks.hive.choice.choices_frame`.
        headline: the benchmark's headline score (flagged in its row).
        keys: the row's labels (subset, kind, ...).
    """
    rows = []
    for score in SCORES:
        right = (frame[f"choice_{score}"] == frame["answer"]).cast(int).to_numpy()
        low, high = wilson(int(right.sum()), int(right.size))
        rows.append(
            {
                **keys,
                "score": score,
                "headline": score == headline,
                "n": frame.height,
                "accuracy": float(right.mean()) if right.size else float("nan"),
                "ci_low": low,
                "ci_high": high,
            }
        )
    return rows


def swap_row(choices: pl.DataFrame, swap: str, **keys: Any) -> dict[str, Any] | None:
    """The paired effect of the variant ``swap`` against the original, or None when no item of
    ``choices`` has both.

    Args:
        choices: rows of :func:`~climb_vllm.benchmarks.hive.choice.choices_frame` (one subset's
            items, every variant).
        swap: the variant's name ("name_swap", "attribute_swap").
        keys: the row's labels.
    """
    import polars as pl

    choice = "choice"
    before = choices.filter(pl.col("variant") == "original").select("id", "margin", choice)
    after = choices.filter(pl.col("variant") == swap).select("id", "margin", choice)
    paired = before.join(after, on="id", suffix="_swap")
    if paired.height == 0:
        return None
    change = (paired["margin_swap"] - paired["margin"]).to_numpy()
    flips = (paired[f"{choice}_swap"] != paired[choice]).cast(int).to_numpy()
    low, high = mean_interval(change)
    abs_low, abs_high = mean_interval(abs(change))
    flip_low, flip_high = wilson(int(flips.sum()), int(flips.size))
    return {
        **keys,
        "swap": swap,
        "n": paired.height,
        "change": float(change.mean()),
        "ci_low": low,
        "ci_high": high,
        "abs_change": float(abs(change).mean()),
        "abs_ci_low": abs_low,
        "abs_ci_high": abs_high,
        "flips": float(flips.mean()),
        "flips_ci_low": flip_low,
        "flips_ci_high": flip_high,
    }


def swap_layout(frame: pl.DataFrame, model: str, labels: list[str]) -> pl.DataFrame:
    """The swaps table as shown: changes in nats with their intervals, flips in percent.

    Args:
        frame: rows of :func:`swap_row`.
        model: the run's label.
        labels: the row label columns of ``frame`` to show first.
    """
    import polars as pl

    from climb_vllm.benchmarks.hive.tables import interval, pct

    def nats(low: str, high: str, name: str) -> pl.Expr:
        return pl.format("[{}, {}]", pl.col(low).round(3), pl.col(high).round(3)).alias(name)

    if frame.height == 0:
        return pl.DataFrame()
    return frame.select(
        pl.lit(model).alias("Model"),
        "swap",
        *labels,
        "n",
        pl.col("change").round(3).alias("Mean change in log-odds of the first"),
        nats("ci_low", "ci_high", "95% CI"),
        pl.col("abs_change").round(3).alias("Mean absolute change"),
        nats("abs_ci_low", "abs_ci_high", "Absolute 95% CI"),
        pct("flips").alias("Choices that flip (%)"),
        interval("flips_ci_low", "flips_ci_high", "Flips 95% CI"),
    )


def accuracy_layout(frame: pl.DataFrame, model: str, labels: list[str]) -> pl.DataFrame:
    """The accuracy table as shown: one row per subset, each score's accuracy and interval.

    Args:
        frame: rows of :func:`accuracy_rows`.
        model: the run's label.
        labels: the subset label columns of ``frame``.
    """
    import polars as pl

    from climb_vllm.benchmarks.hive.tables import interval, pct

    if frame.height == 0:
        return pl.DataFrame()
    names = {"sum": "summed", "per_byte": "per byte", "calibrated": "calibrated"}
    parts: list[pl.DataFrame] = []
    for score in SCORES:
        part = frame.filter(pl.col("score") == score).select(
            *labels,
            "n",
            pct("accuracy").alias(f"Accuracy, {names[score]}"),
            interval("ci_low", "ci_high", f"{names[score].capitalize()} 95% CI"),
        )
        parts.append(part if not parts else part.drop("n"))
    shown = parts[0]
    for part in parts[1:]:
        shown = shown.join(part, on=labels, how="left", maintain_order="left")
    return shown.select(pl.lit(model).alias("Model"), pl.all())


def position_layout(
    frame: pl.DataFrame, model: str, label: str, names: tuple[str, str, str]
) -> pl.DataFrame:
    """The position table as shown: the first and second shares, their difference and its
    interval, in percent.

    Args:
        frame: rows with ``label, n, first, second, position_bias, bias_ci_low, bias_ci_high``.
        model: the run's label.
        label: the row label column.
        names: the shown names of the first share, the second and their difference.
    """
    import polars as pl

    from climb_vllm.benchmarks.hive.tables import interval, pct

    if frame.height == 0:
        return pl.DataFrame()
    return frame.select(
        pl.lit(model).alias("Model"),
        label,
        "n",
        pct("first").alias(names[0]),
        pct("second").alias(names[1]),
        pct("position_bias").alias(names[2]),
        interval("bias_ci_low", "bias_ci_high", "95% CI"),
    )
