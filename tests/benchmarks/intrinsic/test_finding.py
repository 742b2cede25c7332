"""CLIMB intrinsic's finding: the verdict follows the null and the calibration."""

from __future__ import annotations

from typing import Any

from climb_vllm.benchmarks.intrinsic.finding import intrinsic_finding


def _metrics(p_raw: float, p_calibrated: float | None, low: float) -> dict[str, Any]:
    table1 = [
        {"level": "mean", "assoc_mad": 0.913, "corrected": 0.8, "ci_low": low, "ci_high": 1.3}
    ]
    null = [{"level": "mean", "attribute": "both", "null_mean": 0.62, "p_value": p_raw}]
    metrics: dict[str, Any] = {"table1": table1, "null": null}
    if p_calibrated is not None:
        metrics["calibrated_null"] = [
            {
                "level": "mean",
                "attribute": "both",
                "assoc_mad": 0.527,
                "null_mean": 0.537,
                "p_value": p_calibrated,
            }
        ]
    return metrics


def test_raw_above_names_but_calibrated_not_is_little_evidence() -> None:
    found = intrinsic_finding(_metrics(0.012, 0.58, 0.0))
    assert found.readable
    assert "0.913" in found.headline and "[0.00, 1.30]" in found.headline
    assert "names alone give 0.620 (p 0.012)" in found.reference
    assert "little evidence of demographic association" in found.verdict
    assert "cannot size the association" in found.verdict  # the interval reaches 0


def test_the_verdict_follows_each_case() -> None:
    assert "evidence of demographic association beyond" in (
        intrinsic_finding(_metrics(0.01, 0.01, 0.2)).verdict
    )
    assert "no evidence" in intrinsic_finding(_metrics(0.4, 0.6, 0.2)).verdict
    assert "--sensitivity-codes" in intrinsic_finding(_metrics(0.01, None, 0.2)).verdict
    assert "cannot size" not in intrinsic_finding(_metrics(0.01, 0.01, 0.2)).verdict
    assert not intrinsic_finding({}).readable
