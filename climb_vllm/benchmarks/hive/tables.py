"""Shared cells of the HIVE benchmarks' tables in the paper's layout (Markdown/CSV).

Accuracies are percentages; every interval is a 95% bootstrap percentile interval whose
resampling unit is the item (question or statement), stated in each table's title.
"""

from __future__ import annotations

import polars as pl


def pct(column: str) -> pl.Expr:
    """A share as a percentage with two decimals."""
    return (pl.col(column) * 100).round(2)


def interval(low: str, high: str, name: str) -> pl.Expr:
    """An interval of shares as "[low, high]" in percent with one decimal, named ``name``."""
    return pl.format("[{}, {}]", (pl.col(low) * 100).round(1), (pl.col(high) * 100).round(1)).alias(
        name
    )
