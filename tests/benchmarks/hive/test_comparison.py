"""BiasMD / DiseaseMatcher compared on the items both runs answered."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from climb_vllm.benchmarks.hive.comparison import compare_accuracy


def test_difference_is_over_the_shared_items_only() -> None:
    first = pl.DataFrame({"id": ["a", "b", "c", "d"], "accuracy": [1.0, 0.5, 0.0, 1.0]})
    second = pl.DataFrame({"id": ["b", "c", "d", "e"], "accuracy": [1.0, 1.0, 0.0, 0.0]})
    frame = compare_accuracy(first, second)
    assert frame is not None
    row = frame.row(0, named=True)
    # Shared: b, c, d. First 50%, second 66.7%; per item +50, +100, -100 points.
    assert row["shared"] == 3 and row["unit"] == "items" and row["headline"]
    assert row["first"] == pytest.approx(50.0) and row["second"] == pytest.approx(200 / 3)
    assert row["difference"] == pytest.approx(np.mean([50, 100, -100]))
    assert row["ci_low"] <= row["difference"] <= row["ci_high"]
    assert row["measure"].endswith("(%)") and row["better"] == "higher"


def test_no_shared_item_gives_no_comparison() -> None:
    first = pl.DataFrame({"id": ["a"], "accuracy": [1.0]})
    assert compare_accuracy(first, first.with_columns(pl.lit("z").alias("id"))) is None
