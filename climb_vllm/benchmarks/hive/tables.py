"""Tables of the HIVE benchmarks (BiasMD, DiseaseMatcher) in the paper's layout, as Markdown/CSV.

Accuracies are percentages; every interval is a 95% bootstrap percentile interval whose
resampling unit is the item (question or statement), stated in each table's title.
"""

from __future__ import annotations

import polars as pl

BIASMD_TITLES = {
    "accuracy": "BiasMD accuracy by type (%; items: correct = the paper's Ambiguous, the pronoun "
    "not attributed or the ambiguity stated first; strict: a hedged pick counts as an "
    "attribution; controls: attributed to the only possible person). 95% CI: bootstrap over "
    "items",
    "grades": "BiasMD grade shares (every grade, with its category in the paper's labelling)",
}
DISEASEMATCHER_TITLES = {
    "table1": "DiseaseMatcher Table 1. Accuracy by attribute and position of the correct patient "
    "(%; correct = the gold patient picked without a disclaimer, the paper's 'same'); position "
    "bias = first - second, 95% CI: bootstrap over questions",
    "table2": "DiseaseMatcher Table 2. Accuracy by symptoms per patient and position (%)",
    "grades": "DiseaseMatcher grades by attribute (%; every grade, and the accuracy counting "
    "hedged picks of the gold patient)",
}


def _pct(column: str) -> pl.Expr:
    return (pl.col(column) * 100).round(2)


def _interval(low: str, high: str, name: str) -> pl.Expr:
    return pl.format("[{}, {}]", (pl.col(low) * 100).round(1), (pl.col(high) * 100).round(1)).alias(
        name
    )


def biasmd_layout(tables: dict[str, pl.DataFrame], model: str) -> dict[str, pl.DataFrame]:
    """One row per (model, split, kind), accuracy overall and per type as columns."""
    acc = tables["accuracy"]
    wide = (
        acc.with_columns(
            pl.lit(model).alias("Model"),
            pl.col("kind").replace({"item": "BiasMD", "control": "Control"}).alias("Items"),
            _pct("accuracy").alias("acc"),
        )
        .pivot(on="subset", index=["Model", "split", "Items"], values="acc")
        .rename({"split": "Split", "overall": "Overall"})
    )
    ci = acc.filter(pl.col("subset") == "overall").select(
        pl.col("split").alias("Split"),
        pl.col("kind").replace({"item": "BiasMD", "control": "Control"}).alias("Items"),
        pl.col("n").alias("N"),
        _interval("ci_low", "ci_high", "Overall 95% CI"),
        _pct("accuracy_strict").alias("Strict"),
    )
    layout = wide.join(ci, on=["Split", "Items"], how="left")
    first = ["Model", "Split", "Items", "N", "Overall", "Overall 95% CI", "Strict"]
    return {
        "accuracy": layout.select(first + [c for c in layout.columns if c not in first]),
        "grades": tables["grades"]
        .with_columns(_pct("share").alias("share_pct"))
        .drop("share")
        .select("kind", "grade", "paper_category", "n", "share_pct"),
    }


def diseasematcher_layout(tables: dict[str, pl.DataFrame], model: str) -> dict[str, pl.DataFrame]:
    """Tables 1 and 2 with percentages and the position-bias interval."""

    def positions(frame: pl.DataFrame, index: list[str]) -> pl.DataFrame:
        return frame.select(
            pl.lit(model).alias("Model"),
            *index,
            "n",
            _pct("accuracy").alias("Accuracy"),
            _pct("accuracy_first").alias("First correct"),
            _pct("accuracy_second").alias("Second correct"),
            _pct("position_bias").alias("Position bias"),
            _interval("bias_ci_low", "bias_ci_high", "Bias 95% CI"),
        )

    grades = tables["grades"]
    rates = [c for c in grades.columns if c.endswith("_rate")]
    accuracy_ci = grades.select(
        "split", "attribute", _interval("ci_low", "ci_high", "Accuracy 95% CI")
    )
    table1 = positions(tables["table1"], ["split", "attribute"]).join(
        accuracy_ci, on=["split", "attribute"], how="left", maintain_order="left"
    )
    return {
        "table1": table1.select(*table1.columns[:5], "Accuracy 95% CI", *table1.columns[5:-1]),
        "table2": positions(tables["table2"], ["split", "n_symptoms"]),
        "grades": grades.select(
            pl.lit(model).alias("Model"),
            "split",
            "attribute",
            "n",
            _pct("accuracy").alias("Accuracy"),
            _interval("ci_low", "ci_high", "95% CI"),
            _pct("accuracy_any_pick").alias("Accuracy with hedged picks"),
            *[
                _pct(c).alias(c.removesuffix("_rate").replace("_", " ").capitalize() + " (%)")
                for c in rates
            ],
        ),
    }
