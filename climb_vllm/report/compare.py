"""Models side by side: every pair of runs compared on what both answered, per benchmark.

Each benchmark declares its paired comparison (:class:`~climb_vllm.benchmarks.base.Paired`):
what it needs of a run, and the differences (second run - first) of its measures with 95%
intervals on the shared codes, names, cases or items. This module runs it over every pair of
runs (in the order given: with ``eval all --adapter``, the base model first), says each
difference in a sentence, and ranks the models on each benchmark's headline measure: models in
order of their estimates, each beside the next with the paired difference and whether its
interval excludes 0 (the order resolved) or not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from typing import Any

import polars as pl

from climb_vllm.benchmarks.registry import REGISTRY
from climb_vllm.core import formats
from climb_vllm.report.runs import RunView

#: Columns of every comparison table before the benchmark's own (:data:`COMPARISON_COLUMNS`).
PAIR_COLUMNS = ("first run", "second run")


@dataclass(frozen=True)
class Compared:
    """One benchmark's comparisons over the runs.

    Attributes:
        title: the benchmark's heading.
        note: how its differences and intervals are made.
        table: one row per pair of runs and measure (:data:`PAIR_COLUMNS`, the benchmark's
            comparison columns, and ``reading``, the difference in words).
        ranking: the models ordered on the headline measure (see the module note).
        skipped: the pairs not compared and why.
    """

    title: str
    note: str
    table: pl.DataFrame
    ranking: pl.DataFrame
    skipped: list[str]


def _unit(measure: str) -> tuple[bool, str]:
    """(percent format, the unit a difference is said in) of a measure's name."""
    if measure.endswith("(%)"):
        return True, " points"
    if measure.endswith("(pp)"):
        return True, " pp"
    return False, ""


def reading(row: dict[str, Any]) -> str:
    """One comparison row as a sentence, e.g. "B's AssocMAD L5 is lower than A's by 0.040
    [0.020, 0.060] (better)"."""
    measure = str(row["measure"])
    percent, unit = _unit(measure)
    name = measure.removesuffix(" (%)").removesuffix(" (pp)")
    first, second = row["first run"], row["second run"]
    d, low, high = (
        float("nan") if row[k] is None else float(row[k])
        for k in ("difference", "ci_low", "ci_high")
    )

    show = partial(_show, percent=percent, missing="n/a")
    if math.isnan(d):
        return f"{name}: no difference can be stated between {second} and {first}."
    if math.isnan(low) or math.isnan(high):
        return (
            f"{second}'s {name} differs from {first}'s by {show(d)}{unit}; no interval "
            "(an estimate lies beyond every hypothesis the correction tries)."
        )
    span = f"[{show(low)}, {show(high)}]"
    if low <= 0 <= high:
        return (
            f"{name}: {second} and {first} are not told apart: the difference is "
            f"{show(d)}{unit} {span}, an interval that holds 0."
        )
    direction = "higher" if d > 0 else "lower"
    judged = ""
    if row["better"] in ("lower", "higher"):
        judged = " (better)" if direction == row["better"] else " (worse)"
    return (
        f"{second}'s {name} is {direction} than {first}'s by {show(abs(d))}{unit} {span}{judged}."
    )


def _ranking(table: pl.DataFrame, labels: list[str]) -> pl.DataFrame:
    """Models ordered on the headline measure, best first, each beside the next in order."""
    head = table.filter(pl.col("headline"))
    if head.height == 0:
        return pl.DataFrame()
    values: dict[str, float] = {}
    for row in head.iter_rows(named=True):
        values.setdefault(row["first run"], row["first"])
        values.setdefault(row["second run"], row["second"])
    better = str(head["better"][0])
    order = sorted(
        values, key=lambda m: (-values[m] if better == "higher" else values[m], labels.index(m))
    )
    rows = []
    for rank, model in enumerate(order, 1):
        after = order[rank] if rank < len(order) else None
        gap = low = high = None
        resolved: bool | None = None
        if after is not None:
            pair = head.filter(
                pl.col("first run").is_in([model, after])
                & pl.col("second run").is_in([model, after])
            ).row(0, named=True)
            sign = 1.0 if pair["first run"] == after else -1.0  # model - after
            gap = sign * pair["difference"]
            ends = sorted(sign * x for x in (pair["ci_low"], pair["ci_high"]))
            low, high = ends
            resolved = not (low <= 0 <= high) if not math.isnan(low + high) else False
        rows.append(
            {
                "rank": rank,
                "model": model,
                "measure": str(head["measure"][0]),
                "better": better,
                "value": values[model],
                "next": after,
                "difference to next": gap,
                "ci_low": low,
                "ci_high": high,
                "ahead of next": resolved,
            }
        )
    return pl.DataFrame(rows)


def compare_runs(runs: list[RunView]) -> dict[str, Compared]:
    """Every benchmark's comparisons over every pair of ``runs`` that both finished it.

    Args:
        runs: the report's runs (their results recomputed and their comparisons' inputs
            prepared by :func:`~climb_vllm.report.runs.load_runs`), in the order given.
    """
    labels = [run.label for run in runs]
    out: dict[str, Compared] = {}
    if len(runs) < 2:
        return out
    for name, benchmark in REGISTRY.items():
        paired = benchmark.paired
        if paired is None:
            continue
        prepared = [run.prepared.get(name) if name in run.benchmarks else None for run in runs]
        frames = []
        skipped = []
        for i, j in combinations(range(len(runs)), 2):
            if prepared[i] is None or prepared[j] is None:
                continue
            frame = paired.compare(prepared[i], prepared[j])
            if frame is None:
                skipped.append(
                    f"{labels[j]} and {labels[i]}: different codes, names, cases "
                    "or items, so no paired comparison"
                )
                continue
            frames.append(
                frame.select(
                    pl.lit(labels[i]).alias(PAIR_COLUMNS[0]),
                    pl.lit(labels[j]).alias(PAIR_COLUMNS[1]),
                    pl.all(),
                )
            )
        if not frames:
            if skipped:
                out[name] = Compared(
                    paired.title, paired.note, pl.DataFrame(), pl.DataFrame(), skipped
                )
            continue
        table = pl.concat(frames)
        table = table.with_columns(
            pl.Series("reading", [reading(r) for r in table.iter_rows(named=True)])
        )
        out[name] = Compared(paired.title, paired.note, table, _ranking(table, labels), skipped)
    return out


def _show(value: Any, percent: bool, missing: str) -> str:
    """A number in its measure's format, ``missing`` for None (no minus sign on a zero)."""
    if value is None:
        return missing
    text = formats.number(float(value), percent)
    return text.removeprefix("-") if text.startswith("-") and float(text) == 0 else text


def shown(table: pl.DataFrame) -> pl.DataFrame:
    """A comparison table as the report shows it: numbers in their measure's format (percent
    measures with one decimal), the interval beside the difference."""
    rows = []
    for row in table.iter_rows(named=True):
        percent, _ = _unit(str(row["measure"]))
        show = partial(_show, percent=percent, missing="n/a")
        rows.append(
            {
                "Model": row["second run"],
                "Compared with": row["first run"],
                "Measure": row["measure"],
                "Better": row["better"],
                "Shared": f"{row['shared']:,} {row['unit']}",
                "Value": show(row["second"]),
                "Value compared with": show(row["first"]),
                "Difference": show(row["difference"]),
                "Interval (95%)": f"[{show(row['ci_low'])}, {show(row['ci_high'])}]",
            }
        )
    return pl.DataFrame(rows)


def shown_ranking(ranking: pl.DataFrame) -> pl.DataFrame:
    """A ranking as the report shows it (numbers in the measure's format)."""
    rows = []
    for row in ranking.iter_rows(named=True):
        percent, _ = _unit(str(row["measure"]))
        show = partial(_show, percent=percent, missing="")
        ahead = row["ahead of next"]
        rows.append(
            {
                "Rank": row["rank"],
                "Model": row["model"],
                row["measure"]: show(row["value"]),
                "Next": row["next"] or "",
                "Difference to next": show(row["difference to next"]),
                "Interval (95%)": ""
                if row["next"] is None
                else f"[{show(row['ci_low'])}, {show(row['ci_high'])}]",
                "Order resolved": "" if ahead is None else ("yes" if ahead else "no"),
            }
        )
    return pl.DataFrame(rows)
