"""Results of a benchmark as files: Markdown and CSV tables, metrics.json, and what changed on
rescoring. Every benchmark writes ``results/<benchmark>/`` through :func:`write_tables`."""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from climb_vllm.core import formats


def interval_text(
    low: float | None, high: float | None, scale: float = 1.0, digits: int = 4
) -> str:
    """An interval as "[low, high]" (n/a when missing)."""
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return "n/a"
    return f"[{low * scale:.{digits}f}, {high * scale:.{digits}f}]"


def to_markdown(frame: pl.DataFrame, percent: Collection[str] = ()) -> str:
    """A GitHub-style Markdown table, numbers formatted as the report shows them
    (:mod:`climb_vllm.core.formats`; ``percent``: the table's declared percent columns)."""
    columns = frame.columns
    intervals = formats.owners(columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * frame.width]
    for row in frame.iter_rows():
        cells = (formats.cell(v, c, intervals.get(c), percent) for c, v in zip(columns, row))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def long_csv(frame: pl.DataFrame) -> str:
    """A computed table as CSV at full precision, nested values (lists, structs) as JSON text."""
    nested = [c for c, t in frame.schema.items() if t.is_nested()]
    if nested:
        frame = frame.with_columns(
            pl.Series(c, [json.dumps(v) for v in frame[c].to_list()], dtype=pl.String)
            for c in nested
        )
    return frame.write_csv()


def write_long(directory: Path, tables: dict[str, pl.DataFrame]) -> None:
    """Write each computed table, long form at full precision, to ``directory/long/<key>.csv``
    (for Polars or pandas; the CSVs beside tables.md are the tables as shown)."""
    folder = directory / "long"
    folder.mkdir(parents=True, exist_ok=True)
    for key, frame in tables.items():
        (folder / f"{key}.csv").write_text(long_csv(frame))


def metrics_json(tables: dict[str, pl.DataFrame]) -> dict[str, list[dict[str, Any]]]:
    """Long-form metrics, the form stored in results and compared by rescore."""
    return {key: frame.to_dicts() for key, frame in tables.items()}


def diff_metrics(
    old: dict[str, list[dict[str, Any]]],
    new: dict[str, list[dict[str, Any]]],
    tolerance: float = 0.0,
    relative: float = 0.0,
) -> list[str]:
    """Human-readable lines for every metric value that differs between two metrics.json.

    Args:
        old: the metrics as stored before.
        new: the metrics as recomputed.
        tolerance: floats this close (absolute) count as unchanged.
        relative: floats this close relative to their size count as unchanged.
    """
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
                    isinstance(a, float)
                    and isinstance(b, float)
                    and (
                        (math.isnan(a) and math.isnan(b))  # a value that cannot be read, twice
                        or abs(a - b) <= max(tolerance, relative * max(abs(a), abs(b)))
                    )
                )
                if not same:
                    label = ", ".join(
                        f"{k}={v}" for k, v in row_new.items() if isinstance(v, str) or k == "k"
                    )
                    changes.append(f"{key} [{label}] {field}: {a} -> {b}")
    return changes


def write_tables(
    directory: Path,
    heading: str,
    layout: dict[str, pl.DataFrame],
    titles: dict[str, str],
    tables: dict[str, pl.DataFrame],
    extra: dict[str, Any] | None = None,
    percent: Mapping[str, Collection[str]] | None = None,
) -> Path:
    """Write tables.md, one CSV per table and metrics.json into ``directory``; returns tables.md.

    Args:
        directory: the results folder (created).
        heading: the Markdown title.
        layout: the tables as shown (one with no columns is left out, its CSV removed).
        titles: a title per table key.
        tables: the long-form metrics stored in metrics.json (what rescore compares).
        extra: more facts for metrics.json (counts of unknown ids, ...).
        percent: per table key, its declared percent columns (beyond those named so).
    """
    directory.mkdir(parents=True, exist_ok=True)
    parts = [f"# {heading}", ""]
    for key, frame in layout.items():
        path = directory / f"{key}.csv"
        if frame.width == 0:  # a table this run has nothing for (e.g. no combined variants)
            path.unlink(missing_ok=True)
            continue
        parts += [f"## {titles[key]}", "", to_markdown(frame, (percent or {}).get(key, ())), ""]
        path.write_text(frame.write_csv())
    write_long(directory, tables)
    metrics: dict[str, Any] = dict(metrics_json(tables))
    if extra:
        metrics["facts"] = [extra]
    (directory / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True))
    path = directory / "tables.md"
    path.write_text("\n".join(parts))
    return path
