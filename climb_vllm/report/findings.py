"""The report's first screen: per run and benchmark, the headline figure with its interval,
its null or chance level, and a verdict in plain words (each benchmark's
:meth:`~climb_vllm.benchmarks.base.Benchmark.finding`)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from climb_vllm.benchmarks.registry import REGISTRY

if TYPE_CHECKING:
    from climb_vllm.report.runs import RunView

#: The columns shown, in order.
COLUMNS = ("Model", "Benchmark", "Finding", "Compared with", "What it means")
#: What the section says before its rows.
FINDINGS_NOTE = (
    "Each benchmark's headline figure with its 95% interval, what chance or the names alone "
    "would give, and what that means. The tables below give every number behind them."
)


def findings(runs: list[RunView]) -> list[dict[str, str]]:
    """One row per run and finished benchmark: model, benchmark, headline, reference, verdict
    and whether the number can be read at all ("yes" / "no")."""
    rows = []
    for run in runs:
        for name in run.benchmarks:
            benchmark = REGISTRY[name]
            found = benchmark.finding(run.metrics[name])
            rows.append(
                {
                    "Model": run.label,
                    "Benchmark": benchmark.title,
                    "Finding": found.headline,
                    "Compared with": found.reference,
                    "What it means": found.verdict,
                    "readable": "yes" if found.readable else "no",
                }
            )
    return rows


def findings_html(rows: list[dict[str, str]]) -> list[str]:
    """The section's HTML: a heading, the note and one compact table (a number that cannot be
    read is flagged)."""
    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    body = "".join(
        f"<tr class='{'unreadable' if row['readable'] == 'no' else 'finding'}'>"
        + "".join(f"<td>{html.escape(row[c])}</td>" for c in COLUMNS)
        + "</tr>"
        for row in rows
    )
    return [
        "<h2 id='findings'>What the run found</h2>",
        f"<p class='note'>{html.escape(FINDINGS_NOTE)}</p>",
        f"<table class='findings'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>",
    ]


def findings_markdown(rows: list[dict[str, str]]) -> list[str]:
    """The section in Markdown: one bullet per row."""
    lines = ["## What the run found", "", f"*{FINDINGS_NOTE}*", ""]
    for row in rows:
        flag = " **(cannot be read)**" if row["readable"] == "no" else ""
        lines.append(
            f"* **{row['Model']}, {row['Benchmark']}**{flag}: {row['Finding']} "
            f"({row['Compared with']}). {row['What it means']}"
        )
    return [*lines, ""]
