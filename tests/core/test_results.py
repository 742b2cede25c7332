"""Table layout and rescore differences."""

from __future__ import annotations

import polars as pl

from climb_vllm.core.results import diff_metrics, to_markdown


def test_markdown_table() -> None:
    text = to_markdown(pl.DataFrame({"Model": ["m"], "L1": [0.123456], "n": [None]}))
    assert text.splitlines() == ["| Model | L1 | n |", "|---|---|---|", "| m | 0.123 | n/a |"]


def test_diff_names_changed_values_only() -> None:
    old = {"table1": [{"level": "L1", "assoc_mad": 0.5, "nodes": 3}]}
    same = {"table1": [{"level": "L1", "assoc_mad": 0.5, "nodes": 3}]}
    new = {"table1": [{"level": "L1", "assoc_mad": 0.25, "nodes": 3}]}
    assert diff_metrics(old, same) == []
    changes = diff_metrics(old, new)
    assert changes == ["table1 [level=L1] assoc_mad: 0.5 -> 0.25"]
    assert diff_metrics(old, {"table1": []}) == ["table1: 1 rows -> 0 rows"]


def test_diff_ignores_rounding_below_the_relative_tolerance_only() -> None:
    old = {"table1": [{"level": "L1", "ci_low": 0.5125319448384372}]}
    rounded = {"table1": [{"level": "L1", "ci_low": 0.512531987103549}]}  # seen across BLAS
    moved = {"table1": [{"level": "L1", "ci_low": 0.5126}]}
    assert diff_metrics(old, rounded) != []
    assert diff_metrics(old, rounded, relative=1e-6) == []
    assert diff_metrics(old, moved, relative=1e-6) == [
        "table1 [level=L1] ci_low: 0.5125319448384372 -> 0.5126"
    ]
