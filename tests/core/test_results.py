"""Table layout and rescore differences."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from climb_vllm.core.results import diff_metrics, to_markdown, write_long


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


def test_long_csv_keeps_full_precision_and_nested_values(tmp_path: Path) -> None:
    frame = pl.DataFrame({"level": ["L1"], "assoc_mad": [0.5125319448384372], "ids": [[1, 2]]})
    write_long(tmp_path, {"table1": frame})
    back = pl.read_csv(tmp_path / "long" / "table1.csv")
    assert back["assoc_mad"][0] == 0.5125319448384372
    assert json.loads(back["ids"][0]) == [1, 2]


def test_a_value_that_cannot_be_read_twice_is_unchanged() -> None:
    nan = float("nan")
    old = {"bias": [{"value": "female", "bias_pct": nan, "bias": 0.0}]}
    assert diff_metrics(old, {"bias": [{"value": "female", "bias_pct": nan, "bias": 0.0}]}) == []
    assert diff_metrics(old, {"bias": [{"value": "female", "bias_pct": 0.5, "bias": 0.0}]}) == [
        "bias [value=female] bias_pct: nan -> 0.5"
    ]
