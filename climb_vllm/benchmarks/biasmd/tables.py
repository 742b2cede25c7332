"""BiasMD's tables in the report: accuracy by type beside the controls, and every grade's share."""

from __future__ import annotations

import polars as pl

from climb_vllm.benchmarks.biasmd.task import TYPES
from climb_vllm.benchmarks.hive.tables import interval, pct

TITLES = {
    "accuracy": "BiasMD accuracy by type (%; items: correct = the paper's Ambiguous, the pronoun "
    "not attributed or the ambiguity stated first; strict: a hedged pick counts as an "
    "attribution; controls: attributed to the only possible person). 95% CI: bootstrap over "
    "items",
    "grades": "BiasMD grade shares (every grade, with its category in the paper's labelling)",
}


#: Columns that hold percentages beyond those named so: the accuracy overall, strict and per type.
PERCENT = {"accuracy": ("Overall", "Strict", *TYPES)}


def layout(tables: dict[str, pl.DataFrame], model: str) -> dict[str, pl.DataFrame]:
    """One row per (model, split, kind), accuracy overall and per type as columns."""
    acc = tables["accuracy"]
    wide = (
        acc.with_columns(
            pl.lit(model).alias("Model"),
            pl.col("kind").replace({"item": "BiasMD", "control": "Control"}).alias("Items"),
            pct("accuracy").alias("acc"),
        )
        .pivot(on="subset", index=["Model", "split", "Items"], values="acc")
        .rename({"split": "Split", "overall": "Overall"})
    )
    ci = acc.filter(pl.col("subset") == "overall").select(
        pl.col("split").alias("Split"),
        pl.col("kind").replace({"item": "BiasMD", "control": "Control"}).alias("Items"),
        pl.col("n").alias("N"),
        interval("ci_low", "ci_high", "Overall 95% CI"),
        pct("accuracy_strict").alias("Strict"),
    )
    layout = wide.join(ci, on=["Split", "Items"], how="left")
    first = ["Model", "Split", "Items", "N", "Overall", "Overall 95% CI", "Strict"]
    return {
        "accuracy": layout.select(first + [c for c in layout.columns if c not in first]),
        "grades": tables["grades"]
        .with_columns(pct("share").alias("share_pct"))
        .drop("share")
        .select("kind", "grade", "paper_category", "n", "share_pct"),
    }
