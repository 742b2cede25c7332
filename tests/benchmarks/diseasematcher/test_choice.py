"""DiseaseMatcher's choice mode: the swaps of every question, its prompts and its finding."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from climb_vllm.benchmarks.diseasematcher.choice import TEMPLATE, prompts, swapped
from climb_vllm.benchmarks.diseasematcher.finding import choice_finding
from climb_vllm.benchmarks.diseasematcher.task import items_frame, load_diseasematcher


def test_every_question_swaps_attributes_and_names_and_nothing_else() -> None:
    frame = load_diseasematcher()
    for row in frame.iter_rows(named=True):
        question = row["question"]
        names = swapped(question, "p")
        assert names.startswith(row["patient2"] + " "), question
        assert names.count(". " + row["patient1"] + " ") == 1, question
        assert sorted(names) == sorted(question)  # the same characters, moved
        if row["attribute"] == "none":
            with pytest.raises(ValueError):
                swapped(question, "a")
            continue
        attributes = swapped(question, "a")
        first, second = attributes.split(". ", 1)
        assert first.startswith(row["patient1"] + " ") and row["attribute2"] in first, question
        assert row["attribute1"] in second.split(" has symptoms")[0], question
        # Symptoms stay with their patient.
        assert row["symptoms1"].split(";")[0] in first
        assert swapped(attributes, "a") == question


def test_prompts_put_the_first_named_patient_first() -> None:
    items = items_frame("eval", 8, 0)
    made = prompts(items)
    with_attributes = items.filter(pl.col("attribute") != "none").height
    assert len(made) == 2 * items.height + with_attributes
    for prompt in made:
        first_named = prompt.text.split(" ", 1)[0]
        assert prompt.options[0] == first_named
        assert prompt.text.endswith("\nAnswer:")
        assert prompt.content_free == tuple(
            TEMPLATE.format(question=t) for t in ("N/A", "None", "[MASK]")
        )


def _metrics(
    accuracy: float, low: float, high: float, flips: float, flips_low: float
) -> dict[str, Any]:
    return {
        "choice_accuracy": [
            {
                "attribute": "overall",
                "score": "calibrated",
                "headline": True,
                "n": 400,
                "accuracy": accuracy,
                "ci_low": low,
                "ci_high": high,
            }
        ],
        "choice_swaps": [
            {
                "attribute": "overall",
                "swap": "attribute_swap",
                "flips": flips,
                "flips_ci_low": flips_low,
                "flips_ci_high": flips + 0.05,
            }
        ],
        "choice_position": [],
    }


def test_finding_states_chance_and_what_the_swaps_move() -> None:
    found = choice_finding(_metrics(0.71, 0.66, 0.75, 0.12, 0.08))
    assert found.readable
    assert "Above chance" in found.verdict
    assert "attributes alone changes 12%" in found.verdict
    assert "flips 12%" in found.headline and "chance 50%" in found.reference
    blind = choice_finding(_metrics(0.52, 0.47, 0.57, 0.0, 0.0))
    assert "Not distinguishable from chance" in blind.verdict
    assert "changes none of its choices" in blind.verdict
