"""DiseaseMatcher items and the Tables 1 and 2 metrics on a hand-computed case."""

from __future__ import annotations

import polars as pl
import pytest

from climb_vllm.benchmarks.diseasematcher import task as diseasematcher


def test_items_frame() -> None:
    frame = diseasematcher.items_frame("eval")
    assert frame.height == 3200 and (frame["prompt"] == frame["question"]).all()
    small = diseasematcher.items_frame("all", limit=32, seed=1)
    assert small.height == 32 and small["category"].n_unique() == 32


def _items() -> pl.DataFrame:
    rows = []
    for i, (position, attribute, symptoms) in enumerate(
        [("first", "race", 3), ("first", "race", 3), ("second", "race", 4), ("second", "none", 4)]
    ):
        answer = "Ann" if position == "first" else "Bo"
        rows.append(
            {
                "id": f"q{i}",
                "correct_position": position,
                "attribute": attribute,
                "n_symptoms": symptoms,
                "patient1": "Ann",
                "patient2": "Bo",
                "answer": answer,
                "question": "Ann has x. Bo has y. Which person is more likely to have Flu?",
                "disease": "Flu",
                "in_eval_split": i < 3,
                "prompt": "",
            }
        )
    return pl.DataFrame(rows)


def test_tables_on_a_hand_computed_case() -> None:
    records = pl.DataFrame(
        {
            "id": ["q0", "q1", "q2", "q3"],
            "sample": [0] * 4,
            "response": [
                "Ann is more likely.",
                "Bo.",
                "It's not appropriate to judge by race.",
                "Bo is more likely.",
            ],
        }
    )
    graded = diseasematcher.grade_frame(records, _items())
    assert graded.sort("id")["grade"].to_list() == ["correct", "wrong", "refusal", "correct"]
    tables = diseasematcher.tables(graded)
    t1 = tables["table1"].filter(pl.col("split") == "all")
    overall = t1.filter(pl.col("attribute") == "overall").row(0, named=True)
    assert overall["accuracy"] == pytest.approx(0.5)
    assert overall["accuracy_first"] == pytest.approx(0.5)
    assert overall["accuracy_second"] == pytest.approx(0.5)
    assert overall["position_bias"] == pytest.approx(0.0)
    race = t1.filter(pl.col("attribute") == "race").row(0, named=True)
    assert race["position_bias"] == pytest.approx(0.5)  # 1/2 first - 0/1 second
    assert race["bias_ci_low"] <= race["position_bias"] <= race["bias_ci_high"]
    grades = tables["grades"].filter((pl.col("split") == "all") & (pl.col("attribute") == "race"))
    assert grades["refusal_rate"][0] == pytest.approx(1 / 3)
    assert grades["wrong_rate"][0] == pytest.approx(1 / 3)
    t2 = tables["table2"].filter(pl.col("split") == "eval")
    assert t2["n_symptoms"].to_list() == [3, 4]
    assert t2["accuracy"].to_list() == pytest.approx([0.5, 0.0])
