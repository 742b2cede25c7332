"""DiseaseMatcher's finding: accuracy against chance, by attribute, and position bias."""

from __future__ import annotations

from typing import Any

from climb_vllm.benchmarks.diseasematcher.finding import diseasematcher_finding


def _row(attribute: str, accuracy: float, spread: float = 0.05) -> dict[str, Any]:
    return {
        "split": "eval",
        "attribute": attribute,
        "n": 400,
        "accuracy": accuracy,
        "ci_low": accuracy - spread,
        "ci_high": accuracy + spread,
        "unparseable_rate": 0.0,
        "empty_rate": 0.0,
    }


def test_above_chance_with_attributes_apart_and_a_position_preference() -> None:
    metrics = {
        "grades": [_row("overall", 0.7), _row("race", 0.6), _row("none", 0.8)],
        "table1": [
            {
                "split": "eval",
                "attribute": "overall",
                "n": 400,
                "position_bias": 0.2,
                "bias_ci_low": 0.1,
                "bias_ci_high": 0.3,
            }
        ],
    }
    found = diseasematcher_finding(metrics)
    assert found.readable and "accuracy 70% [65%, 75%] on 400 questions" in found.headline
    assert "position bias +20 pp [+10, +30]" in found.headline
    assert "Above chance" in found.verdict and "intervals apart" in found.verdict
    assert "favours the first patient" in found.verdict


def test_chance_and_unreadable() -> None:
    assert "Not distinguishable from chance" in (
        diseasematcher_finding({"grades": [_row("overall", 0.5)]}).verdict
    )
    lost = _row("overall", 0.1) | {"unparseable_rate": 0.7, "empty_rate": 0.1}
    found = diseasematcher_finding({"grades": [lost]})
    assert not found.readable and "80% of the 400 answers" in found.verdict


def test_too_few_questions_for_an_interval_say_how_many_would_do() -> None:
    """Eight questions give an interval 75 points wide: the finding cannot be read, and says
    how many questions give about +-10 points."""
    few = _row("overall", 0.375) | {"n": 8, "ci_low": 0.0, "ci_high": 0.75}
    found = diseasematcher_finding({"grades": [few]})
    assert not found.readable
    assert "8 questions give an interval 75 points wide" in found.verdict
    assert "--limit-diseasematcher 100" in found.verdict
    assert diseasematcher_finding({"grades": [_row("overall", 0.5, spread=0.24)]}).readable
