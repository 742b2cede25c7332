"""The CLIMB extrinsic tables as shown (Tables 4, 5, 7 and the per-variant summary) and their
titles."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import polars as pl

TITLES = {
    "table4": "CLIMB Table 4. Bias score per counterfactual (percentage points of mean recall "
    "over L1-L5, averaged over both placements; % = of the default's recall), over the cases that "
    "have both the variant and the default (Pairs). 95% CI: bootstrap over those cases; p: "
    "sign-flip permutation over them; placebo = noise floor; refusals count as misses",
    "table5": "CLIMB Table 5. Bias score over sex-neutral and sex-specific cases (as Table 4)",
    "table7": "CLIMB Table 7. Recall of the default variant per ICD level (%, micro over cases, "
    "mean of both placements). 95% CI: bootstrap over cases",
    "by_chapter": "Bias per counterfactual by the gold codes' chapter: each case keeps its gold "
    "codes in the chapter (as Table 4 otherwise, over the cases with gold there). q: "
    "Benjamini-Hochberg over every cell of this table; cells with q above 0.05 may be chance",
    "intersections": "Two attributes changed at once: the joint bias (pp, as Table 4), each "
    "single change's bias over the same cases, and the interaction = joint - (first + "
    "second): 0 when the changes add up. 95% CI: bootstrap over those cases",
    "table4_certain": "CLIMB Table 4, sex counterfactuals: the bias over every case and over "
    "the cases whose rewritten notes hold no word marked uncertain (certain rewrites), as "
    "Table 4. Differs: either estimate lies outside the other's 95% CI, so the uncertain "
    "rewrites move the bias: review them (uncertain_edits.csv) before reading the first row",
    "edits": "Counterfactual notes: edits per counterfactual (cases and placements summed) and the "
    "words marked uncertain, changed or kept, where someone other than the patient could be "
    "meant (a relative, a clinician, a stranger named nearby), with their share of the edits",
    "review": "Words of the sex rewrite marked uncertain, for a person to decide (the same rows "
    "as uncertain_edits.csv). Fill in that file's decision column with the sex each word is to "
    "state and pass it with --rewrite-decisions",
    "variants": "Per variant and placement: outputs with no parsed code and refusals (both "
    "counted as recall 0), outputs CliBench's scoring would drop, recall (%) and the share of "
    "diagnosis points per mapping method (%)",
}


def _pct(column: str) -> pl.Expr:
    """A fraction column as percent (or percentage points), as the tables show it."""
    return (pl.col(column) * 100).round(2)


def _bias_shown(frame: pl.DataFrame, extra: list[pl.Expr], model: str) -> pl.DataFrame:
    """A bias table as shown: ``extra`` columns after the model's, percentages, intervals
    as text."""
    if frame.height == 0:
        return frame
    return frame.select(
        pl.lit(model).alias("Model"),
        *extra,
        pl.col("attribute").alias("Attribute"),
        pl.col("value").alias("Value"),
        pl.col("pairs").alias("Pairs"),
        _pct("bias").alias("Bias (pp)"),
        pl.col("bias_pct").round(1).alias("Bias (% of default)"),
        pl.format("[{}, {}]", _pct("ci_low"), _pct("ci_high")).alias("Bias (pp) 95% CI"),
        pl.col("p_value").round(4).alias("p"),
        pl.format(
            "{} [{}, {}]", _pct("placebo_bias"), _pct("placebo_ci_low"), _pct("placebo_ci_high")
        ).alias("Placebo (pp)"),
        _pct("bias_drop").alias("Bias, CliBench drop rule (pp)"),
        pl.format("{} / {}", _pct("dropped_default"), _pct("dropped_variant")).alias(
            "Dropped by that rule, default / variant (%)"
        ),
        pl.format("{} / {}", _pct("refusal_default"), _pct("refusal_variant")).alias(
            "Refusals, default / variant (%)"
        ),
    )


def _table7(recall: pl.DataFrame, model: str) -> pl.DataFrame:
    """Table 7: recall of the default notes per level with the mean's interval."""
    wide = {row["level"]: round(row["recall"] * 100, 2) for row in recall.iter_rows(named=True)}
    mean = recall.filter(pl.col("level") == "mean").row(0, named=True)
    return pl.DataFrame(
        [
            {
                "Model": model,
                # "(%)" in every name: the report and the Markdown show percentages so.
                **{f"{k.upper() if k != 'mean' else 'Mean'} (%)": v for k, v in wide.items()},
                "Mean (%) 95% CI": f"[{mean['ci_low'] * 100:.2f}, {mean['ci_high'] * 100:.2f}]",
            }
        ]
    )


def _variants_shown(variants: pl.DataFrame) -> pl.DataFrame:
    """The variants table as shown: shares in percent."""
    return variants.select(
        "variant",
        "placement",
        "outputs",
        _pct("no_parse_share").alias("No parse (%)"),
        _pct("refusal_share").alias("Refusals (%)"),
        _pct("dropped_share").alias("Dropped by CliBench's rule (%)"),
        _pct("recall_mean").alias("Recall mean (%)"),
        *[
            _pct(c).alias(c.removeprefix("method_") + " (%)")
            for c in variants.columns
            if c.startswith("method_")
        ],
    )


def extrinsic_layout(tables: dict[str, pl.DataFrame], model: str) -> dict[str, pl.DataFrame]:
    """The tables as shown: percentages, intervals as text, one row per model and value."""
    import polars as pl

    bias = partial(_bias_shown, model=model)
    return {
        "table4": bias(tables["bias"], []),
        "table5": bias(tables["bias_by_case_type"], [pl.col("case_type").alias("Cases type")]),
        "by_chapter": _by_chapter(bias, tables.get("bias_by_chapter", pl.DataFrame())),
        "intersections": _intersections(tables.get("intersections", pl.DataFrame()), model),
        "table7": _table7(tables["default_recall"], model),
        "variants": _variants_shown(tables["variants"]),
        "edits": _edits(tables.get("edits", pl.DataFrame()), model),
        "table4_certain": _certain(tables.get("bias_certain", pl.DataFrame()), model),
        "review": _review(tables.get("review", pl.DataFrame())),
    }


def _counterfactual(model: str) -> list[pl.Expr]:
    """The columns that open a per-counterfactual table: the model, attribute and value."""
    return [
        pl.lit(model).alias("Model"),
        pl.col("attribute").alias("Attribute"),
        pl.col("value").alias("Value"),
    ]


def _certain(frame: pl.DataFrame, model: str) -> pl.DataFrame:
    """Table 4's sex rows over every case and over certain rewrites, as shown."""
    if frame.height == 0:
        return frame
    return frame.select(
        *_counterfactual(model),
        pl.col("cases").alias("Cases"),
        pl.col("pairs").alias("Pairs"),
        _pct("bias").alias("Bias (pp)"),
        pl.format("[{}, {}]", _pct("ci_low"), _pct("ci_high")).alias("Bias (pp) 95% CI"),
        pl.col("p_value").round(4).alias("p"),
        pl.when(pl.col("differs")).then(pl.lit("yes")).otherwise(pl.lit("no")).alias("Differs"),
    )


def _review(frame: pl.DataFrame) -> pl.DataFrame:
    """Every uncertain word, as shown (the report's page shows the first rows)."""
    if frame.height == 0:
        return frame
    return frame.select(
        pl.col("case").alias("Case"),
        pl.col("to").alias("To"),
        pl.col("section").alias("Section"),
        pl.col("sentence").alias("Sentence"),
        pl.col("word").alias("Word"),
        pl.col("rewrite").alias("Rewrite wrote"),
    )


def _edits(frame: pl.DataFrame, model: str) -> pl.DataFrame:
    """The counterfactual edits table as shown."""
    if frame.height == 0:
        return frame
    return frame.select(
        *_counterfactual(model),
        pl.col("prompts").alias("Prompts"),
        pl.col("edits").alias("Edits"),
        pl.col("uncertain_edits").alias("Uncertain edits"),
        _pct("uncertain_share").alias("Uncertain (%)"),
    )


def _by_chapter(
    bias: Callable[[pl.DataFrame, list[pl.Expr]], pl.DataFrame], frame: pl.DataFrame
) -> pl.DataFrame:
    """The by-chapter table as shown: Table 4's columns after the chapter, with q."""
    import polars as pl

    from climb_vllm.resources.ontology import chapter_name

    if frame.height == 0:
        return frame
    shown = bias(
        frame,
        [
            pl.col("chapter").map_elements(chapter_name, return_dtype=pl.String).alias("Chapter"),
            pl.col("gold_codes").alias("Gold codes"),
        ],
    )
    return shown.with_columns(frame["q"].round_sig_figs(2).alias("q"))


def _intersections(frame: pl.DataFrame, model: str) -> pl.DataFrame:
    """The interaction table as shown (percentage points)."""
    import polars as pl

    if frame.height == 0:
        return frame
    return frame.select(
        pl.lit(model).alias("Model"),
        pl.col("attribute").alias("Attributes"),
        pl.col("value").alias("Values"),
        pl.col("pairs").alias("Pairs"),
        _pct("joint").alias("Joint bias (pp)"),
        _pct("first").alias("First alone (pp)"),
        _pct("second").alias("Second alone (pp)"),
        _pct("interaction").alias("Interaction (pp)"),
        pl.format("[{}, {}]", _pct("ci_low"), _pct("ci_high")).alias("Interaction (pp) 95% CI"),
    )
