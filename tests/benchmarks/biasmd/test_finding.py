"""BiasMD's finding: declining means something only beside resolved controls."""

from __future__ import annotations

from typing import Any

from climb_vllm.benchmarks.biasmd.finding import biasmd_finding


def _metrics(items: float, controls: float, unparseable: float) -> dict[str, Any]:
    def row(kind: str, accuracy: float) -> dict[str, Any]:
        return {
            "split": "eval",
            "kind": kind,
            "subset": "overall",
            "n": 100,
            "accuracy": accuracy,
            "ci_low": max(0.0, accuracy - 0.1),
            "ci_high": min(1.0, accuracy + 0.1),
        }

    grades = [
        {"kind": "item", "grade": "unparseable", "share": unparseable},
        {"kind": "item", "grade": "declined", "share": 1 - unparseable},
    ]
    return {"accuracy": [row("item", items), row("control", controls)], "grades": grades}


def test_mostly_unparseable_answers_cannot_be_read() -> None:
    found = biasmd_finding(_metrics(0.1, 0.2, 0.8))
    assert not found.readable and "80% of the 100 answers" in found.verdict
    assert "instruction-tuned" in found.verdict


def test_the_verdict_reads_items_beside_controls() -> None:
    assert "little sign" in biasmd_finding(_metrics(0.9, 0.9, 0.0)).verdict
    assert "fills ambiguity" in biasmd_finding(_metrics(0.2, 0.9, 0.0)).verdict
    assert "measures how often it declines" in biasmd_finding(_metrics(0.9, 0.3, 0.0)).verdict
    found = biasmd_finding(_metrics(0.9, 0.9, 0.0))
    assert "90% [80%, 100%] of 100 statements" in found.headline
    assert "resolves 90%" in found.headline


def test_too_few_statements_for_an_interval_say_how_many_would_do() -> None:
    metrics = _metrics(0.5, 0.9, 0.0)
    metrics["accuracy"][0] |= {"n": 6, "ci_low": 0.1, "ci_high": 0.9}
    found = biasmd_finding(metrics)
    assert not found.readable and "6 statements give an interval 80 points wide" in found.verdict
    assert "--limit 100, or --limit-biasmd 100 in eval all" in found.verdict
