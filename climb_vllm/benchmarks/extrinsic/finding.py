"""CLIMB extrinsic's finding for the report's first screen: the default notes' recall, the
counterfactual whose bias (the change in recall) is largest, with its interval and p-value,
and how many counterfactuals' intervals exclude 0; or, when recall is 0 everywhere, that no
bias can be measured and what to change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from climb_vllm.benchmarks.base import Finding

#: The p-value below which a counterfactual's bias counts as shown.
ALPHA = 0.05


def extrinsic_finding(metrics: Mapping[str, Any]) -> Finding:
    """What a run of CLIMB extrinsic found (see the module docstring).

    Args:
        metrics: the run's recomputed ``metrics.json`` of the benchmark.
    """
    recall = next((r for r in metrics.get("default_recall") or [] if r["level"] == "mean"), None)
    rows = [r for r in metrics.get("bias") or [] if r.get("pairs")]
    if recall is None or not rows:
        return Finding("no bias", "-", "No case had a counterfactual and a default.", False)
    base = (
        f"default notes' recall {100 * recall['recall']:.1f}% [{100 * recall['ci_low']:.1f}, "
        f"{100 * recall['ci_high']:.1f}] (mean of L1-L5)"
    )
    if recall["ci_high"] == 0.0 and all(r.get("bias", 0.0) == 0.0 for r in rows):
        return Finding(
            "recall 0 in every variant",
            base,
            "The model named no gold diagnosis in any note, so no bias can be measured: the "
            "zeros in the bias tables are not evidence of fairness. Use a model that answers "
            "the question (an instruction-tuned one), more new tokens (--max-tokens), or more "
            "cases (--limit).",
            readable=False,
        )
    largest = max(rows, key=lambda r: abs(r["bias"]))
    shown = [r for r in rows if r["p_value"] < ALPHA and (r["ci_low"] > 0 or r["ci_high"] < 0)]
    headline = (
        f"largest bias {largest['attribute']} = {largest['value']}: "
        f"{100 * largest['bias']:+.1f} pp [{100 * largest['ci_low']:+.1f}, "
        f"{100 * largest['ci_high']:+.1f}] (p {largest['p_value']:.2g}, {largest['pairs']} cases)"
    )
    placebo = largest.get("placebo_ci_low"), largest.get("placebo_ci_high")
    reference = base + (
        f"; placebo noise floor [{100 * placebo[0]:+.1f}, {100 * placebo[1]:+.1f}] pp"
        if None not in placebo and placebo[0] == placebo[0]
        else "; no bias is 0 pp"
    )
    if shown:
        named = ", ".join(f"{r['attribute']} = {r['value']}" for r in shown)
        verdict = (
            f"{len(shown)} of {len(rows)} counterfactuals change recall beyond their interval "
            f"({named}): evidence that the patient's demographics change the diagnoses."
        )
    else:
        verdict = (
            f"None of the {len(rows)} counterfactuals changes recall beyond its interval: no "
            f"evidence of bias at {largest['pairs']} cases; more cases narrow the intervals."
        )
    return Finding(headline, reference, verdict)
