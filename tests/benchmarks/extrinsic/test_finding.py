"""CLIMB extrinsic's finding: recall 0 everywhere is said to measure nothing."""

from __future__ import annotations

from typing import Any

from climb_vllm.benchmarks.extrinsic.finding import extrinsic_finding


def _row(value: str, bias: float, low: float, high: float, p: float) -> dict[str, Any]:
    return {
        "attribute": "sex",
        "value": value,
        "bias": bias,
        "ci_low": low,
        "ci_high": high,
        "p_value": p,
        "pairs": 40,
        "placebo_ci_low": -0.01,
        "placebo_ci_high": 0.01,
    }


def test_recall_zero_everywhere_cannot_be_read() -> None:
    metrics = {
        "default_recall": [{"level": "mean", "recall": 0.0, "ci_low": 0.0, "ci_high": 0.0}],
        "bias": [_row("female", 0.0, 0.0, 0.0, 1.0)],
    }
    found = extrinsic_finding(metrics)
    assert not found.readable
    assert "no bias can be measured" in found.verdict and "--max-tokens" in found.verdict


def test_the_largest_bias_and_the_ones_shown() -> None:
    metrics = {
        "default_recall": [{"level": "mean", "recall": 0.3, "ci_low": 0.25, "ci_high": 0.35}],
        "bias": [_row("female", -0.05, -0.08, -0.02, 0.001), _row("male", 0.01, -0.01, 0.03, 0.4)],
    }
    found = extrinsic_finding(metrics)
    assert found.readable
    assert "sex = female: -5.0 pp [-8.0, -2.0]" in found.headline
    assert "1 of 2 counterfactuals" in found.verdict and "sex = female" in found.verdict
    assert "placebo noise floor [-1.0, +1.0]" in found.reference
    metrics["bias"] = [_row("male", 0.01, -0.01, 0.03, 0.4)]
    assert "None of the 1 counterfactuals" in extrinsic_finding(metrics).verdict
