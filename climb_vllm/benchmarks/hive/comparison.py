"""BiasMD and DiseaseMatcher compared between two runs on the items both answered.

What is compared: the paper's accuracy (BiasMD: items, controls left out). Each item counts
once, with the share of its samples graded correct; the difference (second run - first) is
averaged over the items both runs answered, and its 95% interval is a percentile bootstrap over
those items, each drawn with both of its answers (a paired bootstrap).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from climb_vllm.benchmarks.base import COMPARISON_COLUMNS, Paired
from climb_vllm.core.store import results_folder

if TYPE_CHECKING:  # imported where used: the command line loads this module at start
    import polars as pl

NOTE = (
    "Accuracy per item (the share of its samples graded correct; control items left out), the "
    "difference averaged over the items both runs answered; 95% interval: percentile "
    "bootstrap over those items, each drawn with both runs' answers."
)


def item_accuracy(root: Path, benchmark: str) -> pl.DataFrame | None:
    """Per item id, the share of its samples graded correct, or None when the run has no graded
    answers of ``benchmark``.

    Args:
        root: the run directory (its ``results/<benchmark>/graded.parquet``).
        benchmark: the benchmark's registry name.
    """
    import polars as pl

    path = results_folder(root, benchmark) / "graded.parquet"
    if not path.is_file():
        return None
    graded = pl.read_parquet(path)
    if "kind" in graded.columns:
        graded = graded.filter(pl.col("kind") != "control")
    return graded.group_by("id").agg(pl.col("correct").cast(pl.Float64).mean().alias("accuracy"))


def compare_accuracy(first: pl.DataFrame, second: pl.DataFrame) -> pl.DataFrame | None:
    """Accuracy (%) of both runs on their common items and the paired difference (points), or
    None when they share no item."""
    import polars as pl

    from climb_vllm.core.resampling import mean_interval

    joined = first.join(second, on="id", suffix="_second")
    if joined.height == 0:
        return None
    a = joined["accuracy"].to_numpy() * 100
    b = joined["accuracy_second"].to_numpy() * 100
    low, high = mean_interval(b - a)
    row = (
        "accuracy (%)",
        True,
        "higher",
        "items",
        joined.height,
        float(a.mean()),
        float(b.mean()),
        float((b - a).mean()),
        low,
        high,
    )
    return pl.DataFrame([row], schema=list(COMPARISON_COLUMNS), orient="row")


def paired(benchmark: str, title: str) -> Paired:
    """The paired comparison of the benchmark named ``benchmark``, headed ``title``."""
    return Paired(title, NOTE, partial(item_accuracy, benchmark=benchmark), compare_accuracy)
