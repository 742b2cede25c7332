"""Paper-format tables (Markdown and CSV) from computed metrics, and what changed on rescoring."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl

from climb_vllm.store import RunStore

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


def interval_text(
    low: float | None, high: float | None, scale: float = 1.0, digits: int = 4
) -> str:
    """An interval as "[low, high]" (n/a when missing)."""
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return "n/a"
    return f"[{low * scale:.{digits}f}, {high * scale:.{digits}f}]"


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


def to_markdown(frame: pl.DataFrame) -> str:
    """A GitHub-style Markdown table."""

    def cell(value: Any) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "n/a"
        return f"{value:.4f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * frame.width]
    for row in frame.iter_rows():
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines)


def metrics_json(tables: dict[str, pl.DataFrame]) -> dict[str, list[dict[str, Any]]]:
    """Long-form metrics, the form stored in results and compared by rescore."""
    return {key: frame.to_dicts() for key, frame in tables.items()}


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


def diff_metrics(
    old: dict[str, list[dict[str, Any]]],
    new: dict[str, list[dict[str, Any]]],
    tolerance: float = 0.0,
) -> list[str]:
    """Human-readable lines for every metric value that differs between two metrics.json."""
    changes: list[str] = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key, []), new.get(key, [])
        if len(before) != len(after):
            changes.append(f"{key}: {len(before)} rows -> {len(after)} rows")
            continue
        for row_old, row_new in zip(before, after):
            for field in sorted(set(row_old) | set(row_new)):
                a, b = row_old.get(field), row_new.get(field)
                same = a == b or (
                    isinstance(a, float) and isinstance(b, float) and abs(a - b) <= tolerance
                )
                if not same:
                    label = ", ".join(
                        f"{k}={v}" for k, v in row_new.items() if isinstance(v, str) or k == "k"
                    )
                    changes.append(f"{key} [{label}] {field}: {a} -> {b}")
    return changes
