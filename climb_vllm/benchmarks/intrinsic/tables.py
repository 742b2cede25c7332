"""The CLIMB intrinsic tables in the paper's layout (one row per model and score variant), their
titles, and the writer of ``results/intrinsic/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from climb_vllm.core.results import interval_text, metrics_json, to_markdown
from climb_vllm.core.store import RunStore

UNIT_NOTE = "95% CI: bootstrap over names resampled within each sex x ethnicity group"
TABLE_TITLES = {
    "table1": "CLIMB Table 1. AssocMAD by ICD level, sex-neutral codes, 8 groups (lower is less "
    f"biased); paper = raw name probabilities, calibrated = divided by content-free base rates. "
    f"{UNIT_NOTE}",
    "table1_all_codes": "Table 1 (all scored codes, raw). AssocMAD by ICD level (point estimates)",
    "table2": "CLIMB Table 2. Single-demographic AssocMAD (names pooled by sex or by ethnicity). "
    f"{UNIT_NOTE}",
    "table3": "CLIMB Table 3. Correctness of sex preference on sex-specific codes (%). "
    f"{UNIT_NOTE}",
    "table8": "CLIMB Table 8. AssocMAD with the top-K names per group (raw; point estimates)",
    "sensitivity": "Template sensitivity: AssocMAD by level (sex-neutral codes of a stratified "
    "sample, 8 groups) and sex-preference correctness (%) under each prompt template (point "
    "estimates)",
}
LEVEL_COLUMNS = ("L1", "L2", "L3", "L4", "L5", "Mean")
VARIANTS = (("", "paper"), ("calibrated_", "calibrated"))


def _levels_row(frame: pl.DataFrame) -> dict[str, Any]:
    """One row: each level's value and, where the frame has them, its interval."""
    row: dict[str, Any] = {}
    for record in frame.iter_rows(named=True):
        label = "Mean" if record["level"] == "mean" else record["level"]
        row[label] = round(record["assoc_mad"], 4)
        if "ci_low" in record:
            row[f"{label} 95% CI"] = interval_text(record["ci_low"], record["ci_high"])
    return row


def paper_layout(tables: dict[str, pl.DataFrame], model: str) -> dict[str, pl.DataFrame]:
    """One row per model and score variant (and attribute or K), levels as columns, as the
    paper prints them, each value followed by its interval."""
    variants = [(prefix, label) for prefix, label in VARIANTS if f"{prefix}table1" in tables]
    out: dict[str, pl.DataFrame] = {
        "table1": pl.DataFrame(
            [{"Model": model, "Scores": label} | _levels_row(tables[f"{prefix}table1"])
             for prefix, label in variants]
        ),
        "table1_all_codes": pl.DataFrame([{"Model": model} | _levels_row(
            tables["table1_all_codes"])]),
        "table2": pl.DataFrame(
            [
                {"Model": model, "Scores": label, "Attribute": attribute.capitalize()}
                | _levels_row(
                    tables[f"{prefix}table2"].filter(pl.col("attribute") == attribute)
                )
                for prefix, label in variants
                for attribute in ("sex", "ethnicity")
            ]
        ),
    }  # fmt: skip
    rows = []
    for prefix, label in variants:
        row: dict[str, Any] = {"Model": model, "Scores": label}
        for record in tables[f"{prefix}table3"].iter_rows(named=True):
            side = record["list"].split("-")[0].capitalize()
            share = record["share"]
            row[f"{side}-only correct (%)"] = None if share is None else round(100 * share, 2)
            row[f"{side} 95% CI"] = interval_text(record["ci_low"], record["ci_high"], 100, 1)
            row[f"{side}-only codes"] = record["codes"]
        rows.append(row)
    out["table3"] = pl.DataFrame(rows)
    out["table8"] = pl.DataFrame(
        [
            {"Model": model, "K": k} | _levels_row(part)
            for (k,), part in tables["table8"].group_by("k", maintain_order=True)
        ]
    )
    if "sensitivity" in tables and tables["sensitivity"].height:
        sens = tables["sensitivity"]
        pct = [c for c in sens.columns if c.endswith(" correct")]
        out["sensitivity"] = sens.select(
            pl.lit(model).alias("Model"),
            pl.col("template").alias("Template"),
            pl.when(pl.col("paper")).then(pl.lit("yes")).otherwise(pl.lit("")).alias("Paper's"),
            pl.col("variant").replace({"raw": "paper"}).alias("Scores"),
            pl.col("codes").alias("Codes"),
            *[pl.col(level if level != "Mean" else "mean").round(4).alias(level)
              for level in LEVEL_COLUMNS],
            *[(pl.col(c) * 100).round(2).alias(f"{c.capitalize()} (%)") for c in pct],
        )  # fmt: skip
    return out


def write_intrinsic_report(store: RunStore, tables: dict[str, pl.DataFrame], model: str) -> Path:
    """Write ``results/intrinsic/``: tables.md, a CSV per table, metrics.json; returns tables.md."""
    layout = paper_layout(tables, model)
    parts = [f"# CLIMB intrinsic — {model}", ""]
    for key, frame in layout.items():
        parts += [f"## {TABLE_TITLES[key]}", "", to_markdown(frame), ""]
        store.write_text(f"results/intrinsic/{key}.csv", frame.write_csv())
    store.write_text(
        "results/intrinsic/metrics.json", json.dumps(metrics_json(tables), indent=2, sort_keys=True)
    )
    return store.write_text("results/intrinsic/tables.md", "\n".join(parts))
