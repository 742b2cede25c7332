"""Two attributes changed at once (``--intersection sex+ethnicity``): is the joint change more
than the sum of the single ones?

For each combined variant (e.g. female and Black), over the cases that have it, both single
variants and the default: the joint bias (Table 4's, percentage points), each single change's
bias, and the interaction, joint - (first + second): 0 when the two changes add up, negative
when together they cost more recall than apart. The interval is a percentile bootstrap over
those cases, the same resamples for all three biases (each case drawn with all its variants).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from climb_vllm.benchmarks.extrinsic.metrics import bias_draws, pair_cases
from climb_vllm.core.resampling import interval

if TYPE_CHECKING:
    import polars as pl


def interaction_table(hits: pl.DataFrame, seed: int = 0) -> pl.DataFrame:
    """One row per combined variant of ``hits`` (:func:`.metrics.output_hits`): ``attribute``
    ("sex+ethnicity"), ``value`` ("female & Black"), ``pairs`` (the cases used), ``joint``,
    ``first``, ``second``, ``interaction``, ``ci_low``, ``ci_high`` (fractions of recall);
    empty when the run changed no two attributes together."""
    import polars as pl

    combined = (
        hits.filter(pl.col("attribute").str.contains("+", literal=True))
        .select("variant", "attribute", "value")
        .unique(maintain_order=True)
        .rows()
    )
    everyone = sorted(set(hits["case"].to_list()))
    rows = []
    for variant, attribute, value in combined:
        names = attribute.split("+")
        singles = [f"{name}={part}" for name, part in zip(names, value.split(" & "))]
        cases = everyone
        for name in (variant, *singles):
            cases = pair_cases(hits, name, cases)
        if not cases:
            continue
        joint, joint_draws = bias_draws(hits, variant, cases, seed)
        first, first_draws = bias_draws(hits, singles[0], cases, seed)
        second, second_draws = bias_draws(hits, singles[1], cases, seed)
        low, high = interval(joint_draws - first_draws - second_draws)
        rows.append(
            {
                "attribute": attribute,
                "value": value,
                "pairs": len(cases),
                "joint": joint,
                "first": first,
                "second": second,
                "interaction": joint - first - second,
                "ci_low": low,
                "ci_high": high,
            }
        )
    return pl.DataFrame(rows)
