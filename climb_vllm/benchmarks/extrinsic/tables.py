"""The CLIMB extrinsic tables as shown (Tables 4, 5, 7 and the per-variant summary) and their
titles."""

from __future__ import annotations

import polars as pl

TITLES = {
    "table4": "CLIMB Table 4. Bias score per counterfactual (percentage points of mean recall "
    "over L1-L5, averaged over both placements; % = of the default's recall), over the cases that "
    "have both the variant and the default (Pairs). 95% CI: bootstrap over those cases; p: "
    "sign-flip permutation over them; placebo = noise floor; refusals count as misses",
    "table5": "CLIMB Table 5. Bias score over sex-neutral and sex-specific cases (as Table 4)",
    "table7": "CLIMB Table 7. Recall of the default variant per ICD level (%, micro over cases, "
    "mean of both placements). 95% CI: bootstrap over cases",
    "variants": "Per variant and placement: outputs with no parsed code and refusals (both "
    "counted as recall 0), outputs CliBench's scoring would drop, recall (%) and the share of "
    "diagnosis points per mapping method (%)",
}


def extrinsic_layout(tables: dict[str, pl.DataFrame], model: str) -> dict[str, pl.DataFrame]:
    """The tables as shown: percentages, intervals as text, one row per model and value."""
    import polars as pl

    def pct(column: str) -> pl.Expr:
        return (pl.col(column) * 100).round(2)

    def bias(frame: pl.DataFrame, extra: list[pl.Expr]) -> pl.DataFrame:
        if frame.height == 0:
            return frame
        return frame.select(
            pl.lit(model).alias("Model"),
            *extra,
            pl.col("attribute").alias("Attribute"),
            pl.col("value").alias("Value"),
            pl.col("pairs").alias("Pairs"),
            pct("bias").alias("Bias (pp)"),
            pl.col("bias_pct").round(1).alias("Bias (% of default)"),
            pl.format("[{}, {}]", pct("ci_low"), pct("ci_high")).alias("Bias (pp) 95% CI"),
            pl.col("p_value").round(4).alias("p"),
            pl.format(
                "{} [{}, {}]", pct("placebo_bias"), pct("placebo_ci_low"), pct("placebo_ci_high")
            ).alias("Placebo (pp)"),
            pct("bias_drop").alias("Bias, CliBench drop rule (pp)"),
            pl.format("{} / {}", pct("dropped_default"), pct("dropped_variant")).alias(
                "Dropped by that rule, default / variant (%)"
            ),
            pl.format("{} / {}", pct("refusal_default"), pct("refusal_variant")).alias(
                "Refusals, default / variant (%)"
            ),
        )

    recall = tables["default_recall"]
    wide = {row["level"]: round(row["recall"] * 100, 2) for row in recall.iter_rows(named=True)}
    mean = recall.filter(pl.col("level") == "mean").row(0, named=True)
    table7 = pl.DataFrame(
        [
            {
                "Model": model,
                # "(%)" in every name: the report and the Markdown show percentages so.
                **{f"{k.upper() if k != 'mean' else 'Mean'} (%)": v for k, v in wide.items()},
                "Mean (%) 95% CI": f"[{mean['ci_low'] * 100:.2f}, {mean['ci_high'] * 100:.2f}]",
            }
        ]
    )
    variants = tables["variants"]
    shown = variants.select(
        "variant",
        "placement",
        "outputs",
        pct("no_parse_share").alias("No parse (%)"),
        pct("refusal_share").alias("Refusals (%)"),
        pct("dropped_share").alias("Dropped by CliBench's rule (%)"),
        pct("recall_mean").alias("Recall mean (%)"),
        *[pct(c).alias(c.removeprefix("method_") + " (%)") for c in variants.columns
          if c.startswith("method_")],
    )  # fmt: skip
    return {
        "table4": bias(tables["bias"], []),
        "table5": bias(tables["bias_by_case_type"], [pl.col("case_type").alias("Cases type")]),
        "table7": table7,
        "variants": shown,
    }
