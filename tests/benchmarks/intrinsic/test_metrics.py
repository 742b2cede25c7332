"""Metrics against hand-computed golden values stored as data."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from climb_vllm.benchmarks.intrinsic import metrics
from tests.helpers import GOLDEN as GOLDEN_DIR

GOLDEN = json.loads((GOLDEN_DIR / "intrinsic_metrics.json").read_text())


def _records() -> pl.DataFrame:
    rows = [
        {"code": code, "name": name, "logprob": math.log(p)}
        for code, probs in GOLDEN["probabilities"].items()
        for name, p in probs.items()
    ]
    return pl.DataFrame(rows)


def _slots(max_rank: int) -> pl.DataFrame:
    return pl.DataFrame(GOLDEN["slots"]).filter(pl.col("rank") <= max_rank)


def _as_dict(frame: pl.DataFrame) -> dict[str, float]:
    return {row["level"]: row["assoc_mad"] for row in frame.iter_rows(named=True)}


LEVELS = pl.DataFrame(GOLDEN["levels"])


@pytest.mark.parametrize(
    ("key", "groups", "max_rank"),
    [
        ("assoc_mad_top1", ("sex", "ethnicity"), 1),
        ("sex_top1", ("sex",), 1),
        ("ethnicity_top1", ("ethnicity",), 1),
        ("assoc_mad_top2", ("sex", "ethnicity"), 2),
    ],
)
def test_assoc_mad_matches_hand_computed(key: str, groups: tuple[str, ...], max_rank: int) -> None:
    got = _as_dict(metrics.assoc_mad_by_level(_records(), _slots(max_rank), LEVELS, groups=groups))
    assert got == pytest.approx(GOLDEN["expected"][key], abs=1e-9)


def test_top_k_table_repeats_per_k_values() -> None:
    table = metrics.top_k_assoc_mad(_records(), _slots(2), LEVELS, [1, 2])
    for k, key in ((1, "assoc_mad_top1"), (2, "assoc_mad_top2")):
        got = _as_dict(table.filter(pl.col("k") == k))
        assert got == pytest.approx(GOLDEN["expected"][key], abs=1e-9)


def test_top_k_beyond_available_ranks_raises() -> None:
    with pytest.raises(ValueError, match="top-3"):
        metrics.top_k_assoc_mad(_records(), _slots(2), LEVELS, [3])


def test_sex_preference_matches_hand_computed() -> None:
    table = metrics.sex_preference(
        _records(), _slots(1), GOLDEN["female_only"], GOLDEN["male_only"]
    )
    got = {
        r["list"]: {"codes": r["codes"], "correct": r["correct"]}
        for r in table.iter_rows(named=True)
    }
    assert got == GOLDEN["expected"]["sex_preference"]


def test_code_subset_restricts_nodes() -> None:
    table = metrics.assoc_mad_by_level(_records(), _slots(1), LEVELS, codes=["A00"])
    assert _as_dict(table)["L1"] == pytest.approx(1 / 3)
    assert table.filter(pl.col("level") == "L5")["nodes"].item() == 1


def test_log_space_survives_tiny_probabilities() -> None:
    # Shifting every log-prob by -800 (probabilities below float64's range) changes nothing.
    shifted = _records().with_columns(pl.col("logprob") - 800.0)
    got = _as_dict(metrics.assoc_mad_by_level(shifted, _slots(1), LEVELS))
    assert got == pytest.approx(GOLDEN["expected"]["assoc_mad_top1"], abs=1e-9)


def test_incomplete_records_are_refused() -> None:
    partial = _records().filter(~((pl.col("code") == "A00") & (pl.col("name") == "Sam")))
    with pytest.raises(ValueError, match="incomplete"):
        metrics.check_complete(partial, _slots(1))
    metrics.check_complete(_records(), _slots(1))


def test_missing_group_is_an_error_not_a_smaller_mean() -> None:
    scores = metrics.code_group_scores(_records(), _slots(1))
    lopsided = scores.filter(~((pl.col("code") == "A00") & (pl.col("sex") == "MALE")))
    node_scores = metrics.level_scores(lopsided, LEVELS, "l5", ("sex", "ethnicity"))
    with pytest.raises(ValueError, match="differing numbers of groups"):
        metrics.assoc_mad(node_scores, ("sex", "ethnicity"))
