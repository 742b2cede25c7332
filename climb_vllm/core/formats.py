"""One format per quantity, the same in the HTML report, the Markdown files and the terminal.

* percentages and percentage points: one decimal (``12.8``, ``-12.1``);
* p-values and q-values: two significant digits (``0.015``, ``0.43``), ``<0.001`` below that;
* everything else that is a fraction or a score (AssocMAD, recall, ratios, similarities): three
  decimals;
* counts: whole numbers, with thousands separators from 10,000 on;
* an interval: in its estimate's format (``[0.291, 0.699]`` beside ``0.516``).

The CSV files keep every value as computed: only what a reader sees is formatted here. A column
is a percentage when its name says so (``%``, ``(pp)``, ``_pct``), the convention of every
benchmark's tables, or when its table declares it one (``ReportTable.percent``: the HIVE
papers' own column names, such as "Accuracy", keep their wording).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from typing import Any

#: Columns named as percentages or percentage points (one decimal).
_PERCENT = re.compile(r"%|\(pp\)|_pct$")
#: Columns that hold p-values or multiplicity-adjusted p-values.
P_VALUES = ("p", "q", "p_value")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def is_percent(column: str, percent: Collection[str] = ()) -> bool:
    """Whether a column holds percentages: named so, or declared so by its table (``percent``)."""
    return bool(_PERCENT.search(column)) or column in percent


def number(value: float, percent: bool, column: str = "") -> str:
    """One number as shown (module note); ``column`` tells p-values apart."""
    if math.isnan(value):
        return "n/a"
    if percent:
        return f"{value:.1f}"
    if column in P_VALUES:
        if 0 < value < 0.001:
            return "<0.001"
        return f"{float(f'{value:.2g}'):g}"
    return f"{value:.3f}"


def interval(text: str, percent: bool) -> str:
    """An interval string "[low, high]" re-formatted like its estimate."""
    return _NUMBER.sub(lambda m: number(float(m.group()), percent), text)


def owners(columns: list[str]) -> dict[str, str]:
    """Each interval column ("X 95% CI", or a bare "95% CI") mapped to its estimate's column:
    X, or the column before a bare one."""
    out: dict[str, str] = {}
    for i, column in enumerate(columns):
        if column.endswith("95% CI"):
            base = column.removesuffix(" 95% CI").removesuffix("95% CI").strip()
            owner = base if base in columns else (columns[i - 1] if i else None)
            if owner is not None:
                out[column] = owner
    return out


def cell(
    value: Any, column: str, interval_of: str | None = None, percent: Collection[str] = ()
) -> str:
    """A table cell's text: floats by quantity, counts with separators, intervals like their
    estimate (``interval_of``: the estimate's column when ``column`` is its interval), None and
    NaN as n/a, other values as they are; ``percent`` names the table's declared percent
    columns."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return number(value, is_percent(column, percent), column)
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if interval_of is not None and isinstance(value, str):
        return interval(value, is_percent(interval_of, percent))
    return str(value)
