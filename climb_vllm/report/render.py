"""Tables as a reader of the HTML report sees them: numbers formatted by kind, each estimate with
its interval in one cell, column names in words, long text that wraps or folds away.

The CSV files keep every value as computed; the page and the Markdown files format numbers
alike (:mod:`climb_vllm.core.formats`), and only the page is laid out for reading at a glance
(it must fit 1280 px: the report test checks it in Chromium).
"""

from __future__ import annotations

import html
from collections.abc import Collection
from typing import Any

import polars as pl

from climb_vllm.core import formats

#: Column names shown in words where a layout kept a data name.
COLUMN_WORDS = {
    "split": "Split",
    "attribute": "Attribute",
    "n": "Items",
    "n_symptoms": "Symptoms per patient",
    "share_pct": "Share (%)",
    "kind": "Kind",
    "grade": "Grade",
    "variant": "Variant",
    "placement": "Placement",
    "outputs": "Outputs",
    "benchmark": "Benchmark",
    "model": "Model",
    "revision": "Revision",
    "engine": "Engine",
    "names": "Names",
    "prompt": "Prompt",
    "seeds": "Seeds",
    "packages": "Packages",
    "commit": "Commit",
    "started": "Started",
}


def heading(column: str) -> str:
    """A column's heading: its words, or a benchmark's title where the column is named after a
    registered benchmark (the runs table has one column per benchmark)."""
    from climb_vllm.benchmarks.registry import REGISTRY

    if column in REGISTRY:
        return REGISTRY[column].title
    return COLUMN_WORDS.get(column, column)


#: Text longer than this is folded into a <details> element.
FOLD = 80


def _pairs(columns: list[str]) -> list[tuple[str, str | None]]:
    """(column, its interval column or None) in display order (:func:`formats.owners`)."""
    intervals: dict[str, str] = {}
    for column, owner in formats.owners(columns).items():
        intervals.setdefault(owner, column)
    paired = set(intervals.values())
    return [(c, intervals.get(c)) for c in columns if c not in paired]


def _cell(value: Any, column: str, percent: Collection[str], fold: bool) -> tuple[str, bool]:
    """(HTML of one cell, whether it is numeric)."""
    numeric = value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))
    text = formats.cell(value, column, percent=percent)
    if not numeric and fold and len(text) > FOLD:
        head = html.escape(text[:FOLD].rsplit(" ", 1)[0])
        return f"<details><summary>{head} …</summary>{html.escape(text)}</details>", False
    return html.escape(text), numeric


def html_table(frame: pl.DataFrame, fold: bool = False, percent: Collection[str] = ()) -> str:
    """The page's table: estimates with their intervals below them, numbers by kind.

    Args:
        frame: the table as computed (the CSV's columns).
        fold: fold text longer than :data:`FOLD` characters into a <details> element (for
            provenance values that only some readers need).
        percent: the table's declared percent columns (beyond those named so).
    """
    columns = frame.columns
    pairs = _pairs(columns)
    head = "".join(
        f"<th>{html.escape(heading(c))}" + (" <small>(95% CI)</small>" if ci else "") + "</th>"
        for c, ci in pairs
    )
    rows = []
    for record in frame.iter_rows(named=True):
        cells = []
        for column, ci in pairs:
            text, numeric = _cell(record[column], column, percent, fold)
            if ci and record[ci] not in (None, "n/a"):
                shown = html.escape(formats.cell(str(record[ci]), ci, column, percent))
                text += f"<small class='ci'>{shown}</small>"
            cells.append(f"<td class='{'num' if numeric else 'text'}'>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1200px;color:#222;
padding:0 1rem}
table{border-collapse:collapse;font-size:12px;margin:.5rem 0 .5rem;max-width:100%}
th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top}
th{background:#f2f2f2;text-align:left;font-weight:600}
td.num{text-align:right;white-space:nowrap}td.text{text-align:left;overflow-wrap:anywhere}
small.ci{display:block;color:#666;font-size:10px}
details summary{cursor:pointer}
figure{margin:1rem 0 2rem}figcaption{font-size:13px;color:#444}
img{max-width:min(100%,760px)}
h2{border-bottom:1px solid #ddd;padding-bottom:.2rem}pre{font-size:11px;white-space:pre-wrap}
p.note{font-size:12px;color:#555;margin:.2rem 0 1.5rem}
.missing,.scope-warning{border:1px solid #d9a400;background:#fff8e1;padding:.3rem 1rem;
margin:1rem 0}
nav.toc{font-size:13px;columns:2}
table.findings{font-size:14px}table.findings td{max-width:32rem}
tr.unreadable td{background:#fdecea}
"""
