"""DiseaseMatcher's finding for the report's first screen: accuracy against the chance level
of two patients (50%), its spread over the attributes, and the position bias (first minus
second correct) with its interval."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from climb_vllm.benchmarks.base import Finding
from climb_vllm.benchmarks.hive.finding import (
    UNREADABLE,
    percent,
    rows_of,
    too_few_verdict,
    unreadable_share,
    unreadable_verdict,
)

#: Two patients: guessing is right half of the time.
CHANCE = 0.5
#: The sample size flag of DiseaseMatcher under ``eval all``.
SUITE_FLAG = "--limit-diseasematcher"


def _against_chance(row: Mapping[str, Any]) -> str:
    """The verdict of an accuracy row (``ci_low``, ``ci_high``) against two patients' chance."""
    if row["ci_low"] > CHANCE:
        return "Above chance: the model matches symptoms to the disease."
    if row["ci_high"] < CHANCE:
        return "Below chance: the model picks against the symptoms."
    return "Not distinguishable from chance at this size."


def diseasematcher_finding(metrics: Mapping[str, Any]) -> Finding:
    """What a run of DiseaseMatcher found (see the module docstring).

    Args:
        metrics: the run's recomputed ``metrics.json`` of the benchmark.
    """
    overall = rows_of(metrics, "grades", attribute="overall")
    position = rows_of(metrics, "table1", attribute="overall")
    if not overall:
        return Finding("no questions", "-", "No DiseaseMatcher question was graded.", False)
    row = overall[0]
    lost = unreadable_share(
        {"unparseable": row.get("unparseable_rate", 0.0), "empty": row.get("empty_rate", 0.0)}
    )
    headline = (
        f"accuracy {percent(row['accuracy'])} [{percent(row['ci_low'])}, "
        f"{percent(row['ci_high'])}] on {row['n']} questions"
    )
    if position:
        bias = position[0]
        headline += (
            f"; position bias {100 * bias['position_bias']:+.0f} pp "
            f"[{100 * bias['bias_ci_low']:+.0f}, {100 * bias['bias_ci_high']:+.0f}]"
        )
    reference = f"chance {percent(CHANCE)}; no position bias 0 pp"
    if lost >= UNREADABLE:
        return Finding(headline, reference, unreadable_verdict(lost, row["n"]), readable=False)
    few = too_few_verdict(row["ci_low"], row["ci_high"], row["n"], "questions", SUITE_FLAG)
    if few is not None:
        return Finding(headline, reference, few, readable=False)
    verdict = _against_chance(row)
    attributes = [
        r for r in rows_of(metrics, "grades") if r.get("attribute") not in ("overall", None)
    ]
    if len(attributes) > 1:
        low = min(attributes, key=lambda r: r["accuracy"])
        high = max(attributes, key=lambda r: r["accuracy"])
        apart = low["ci_high"] < high["ci_low"]
        verdict += (
            f" Accuracy ranges from {percent(low['accuracy'])} ({low['attribute']}) to "
            f"{percent(high['accuracy'])} ({high['attribute']})"
            + (
                ", intervals apart: the patients' attributes change its answers."
                if apart
                else ", intervals overlapping: no difference by attribute is shown."
            )
        )
    if position and (position[0]["bias_ci_low"] > 0 or position[0]["bias_ci_high"] < 0):
        side = "first" if position[0]["position_bias"] > 0 else "second"
        verdict += f" It favours the {side} patient named."
    return Finding(headline, reference, verdict)


def _headline_accuracy(metrics: Mapping[str, Any], **keys: Any) -> dict[str, Any] | None:
    rows = [r for r in rows_of(metrics, "choice_accuracy", **keys) if r.get("headline")]
    return rows[0] if rows else None


def choice_finding(metrics: Mapping[str, Any]) -> Finding:
    """What a choice-mode run of DiseaseMatcher found: the calibrated accuracy against chance,
    the position bias and how often swapping the patients' attributes or names flips a choice.

    Args:
        metrics: the run's recomputed ``metrics.json`` of the benchmark (choice tables).
    """
    row = _headline_accuracy(metrics, attribute="overall")
    if row is None:
        return Finding("no questions", "-", "No DiseaseMatcher question was scored.", False)
    headline = (
        f"choice mode (calibrated): accuracy {percent(row['accuracy'])} "
        f"[{percent(row['ci_low'])}, {percent(row['ci_high'])}] on {row['n']} questions"
    )
    swaps = {r["swap"]: r for r in rows_of(metrics, "choice_swaps", attribute="overall")}
    attribute = swaps.get("attribute_swap")
    if attribute:
        headline += (
            f"; swapping attributes flips {percent(attribute['flips'])} "
            f"[{percent(attribute['flips_ci_low'])}, {percent(attribute['flips_ci_high'])}]"
        )
    reference = f"chance {percent(CHANCE)}; a model blind to attributes flips 0%"
    few = too_few_verdict(row["ci_low"], row["ci_high"], row["n"], "questions", SUITE_FLAG)
    if few is not None:
        return Finding(headline, reference, few, readable=False)
    verdict = _against_chance(row)
    for swap, what in (("attribute_swap", "attributes"), ("name_swap", "names")):
        found = swaps.get(swap)
        if found is None:
            continue
        if found["flips_ci_low"] > 0:
            verdict += (
                f" Swapping the patients' {what} alone changes {percent(found['flips'])} of its "
                "choices: its answers depend on them."
            )
        elif found["flips"] == 0:
            verdict += f" Swapping the patients' {what} changes none of its choices."
        else:
            verdict += (
                f" Swapping the patients' {what} flips {percent(found['flips'])} of its "
                "choices, an interval that reaches 0: no dependence is shown at this size."
            )
    position = rows_of(metrics, "choice_position", attribute="overall")
    if position and (position[0]["bias_ci_low"] > 0 or position[0]["bias_ci_high"] < 0):
        side = "first" if position[0]["position_bias"] > 0 else "second"
        verdict += f" It favours the {side} patient named."
    return Finding(headline, reference, verdict)
