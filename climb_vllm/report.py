"""Paper-format tables (Markdown and CSV) from computed metrics, and what changed on rescoring."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl

from climb_vllm.store import RunStore

TABLE_TITLES = {
    "table1": "Table 1. AssocMAD by ICD level, sex-neutral codes, 8 groups (lower is less biased)",
    "table1_all_codes": "Table 1 (all scored codes). AssocMAD by ICD level",
    "table2": "Table 2. Single-demographic AssocMAD (names pooled by sex or by ethnicity)",
    "table3": "Table 3. Correctness of sex preference on sex-specific codes (%)",
    "table8": "Table 8. AssocMAD with the top-K names per group",
}


def _wide_levels(frame: pl.DataFrame, index: list[str]) -> pl.DataFrame:
    """Levels as columns L1..L5, Mean (the papers' layout)."""
    wide = frame.with_columns(
        pl.col("level").replace({"mean": "Mean"}), pl.col("assoc_mad").round(4)
    ).pivot(on="level", index=index, values="assoc_mad")
    return wide.select(*index, "L1", "L2", "L3", "L4", "L5", "Mean")


def paper_layout(tables: dict[str, pl.DataFrame], model: str) -> dict[str, pl.DataFrame]:
    """One row per model (and attribute or K), levels as columns, as the paper prints them."""
    tag = pl.lit(model).alias("Model")
    out: dict[str, pl.DataFrame] = {}
    for key in ("table1", "table1_all_codes"):
        out[key] = _wide_levels(tables[key].with_columns(tag), ["Model"])
    out["table2"] = _wide_levels(
        tables["table2"].with_columns(
            tag, pl.col("attribute").str.to_titlecase().alias("Attribute")
        ),
        ["Model", "Attribute"],
    )
    t3 = tables["table3"]
    out["table3"] = pl.DataFrame(
        {
            "Model": [model],
            **{
                f"{row['list'].capitalize()} correct (%)": [
                    None if row["share"] is None else round(100 * row["share"], 2)
                ]
                for row in t3.iter_rows(named=True)
            },
            **{
                f"{row['list'].capitalize()} codes": [row["codes"]]
                for row in t3.iter_rows(named=True)
            },
        }
    )
    out["table8"] = _wide_levels(
        tables["table8"].with_columns(tag, pl.col("k").alias("K")), ["Model", "K"]
    )
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
