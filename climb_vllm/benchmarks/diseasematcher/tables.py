"""DiseaseMatcher's tables in the paper's layout (its Tables 1 and 2) and every grade by
attribute."""

from __future__ import annotations

import polars as pl

from climb_vllm.benchmarks.hive.tables import interval, pct

TITLES = {
    "table1": "DiseaseMatcher Table 1. Accuracy by attribute and position of the correct patient "
    "(%; correct = the gold patient picked without a disclaimer, the paper's 'same'); position "
    "bias = first - second, 95% CI: bootstrap over questions",
    "table2": "DiseaseMatcher Table 2. Accuracy by symptoms per patient and position (%)",
    "grades": "DiseaseMatcher grades by attribute (%; every grade, and the accuracy counting "
    "hedged picks of the gold patient)",
}


#: Columns that hold percentages beyond those named so: the paper's accuracy columns.
_ACCURACY = ("Accuracy", "First correct", "Second correct", "Position bias")
PERCENT = {"table1": _ACCURACY, "table2": _ACCURACY, "grades": ("Accuracy",)}


def layout(tables: dict[str, pl.DataFrame], model: str) -> dict[str, pl.DataFrame]:
    """Tables 1 and 2 with percentages and the position-bias interval."""

    def positions(frame: pl.DataFrame, index: list[str]) -> pl.DataFrame:
        return frame.select(
            pl.lit(model).alias("Model"),
            *index,
            "n",
            pct("accuracy").alias("Accuracy"),
            pct("accuracy_first").alias("First correct"),
            pct("accuracy_second").alias("Second correct"),
            pct("position_bias").alias("Position bias"),
            interval("bias_ci_low", "bias_ci_high", "Bias 95% CI"),
        )

    grades = tables["grades"]
    rates = [c for c in grades.columns if c.endswith("_rate")]
    accuracy_ci = grades.select(
        "split", "attribute", interval("ci_low", "ci_high", "Accuracy 95% CI")
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
            pct("accuracy").alias("Accuracy"),
            interval("ci_low", "ci_high", "95% CI"),
            pct("accuracy_any_pick").alias("Accuracy with hedged picks"),
            *[
                pct(c).alias(c.removesuffix("_rate").replace("_", " ").capitalize() + " (%)")
                for c in rates
            ],
        ),
    }
