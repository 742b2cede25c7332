"""What the two HIVE benchmarks' findings share: which split's rows to read, and whether the
answers can be read at all (most of them answer no question, or too few items for an interval
that says anything)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: The share of answers that answer no question (unparseable or empty) from which a run's
#: accuracy says nothing about the model's bias.
UNREADABLE = 0.5


def rows_of(metrics: Mapping[str, Any], table: str, **keys: Any) -> list[dict[str, Any]]:
    """The rows of ``table`` whose fields equal ``keys``, from the authors' test split when
    the run has it, else from every item asked."""
    rows = [dict(r) for r in metrics.get(table) or []]
    for split in ("eval", "all"):
        found = [r for r in rows if r.get("split", split) == split and r.get("n", 1)]
        found = [r for r in found if all(r.get(k) == v for k, v in keys.items())]
        if found:
            return found
    return []


def unreadable_share(shares: Mapping[str, float]) -> float:
    """The share of answers graded unparseable or empty, from grade -> share."""
    return float(shares.get("unparseable", 0.0)) + float(shares.get("empty", 0.0))


def unreadable_verdict(share: float, items: int) -> str:
    """What to change when most answers answer no question."""
    return (
        f"{share:.0%} of the {items} answers answer no question, so the accuracy says nothing "
        "about bias. A base model does not take up the question: use an instruction-tuned model, "
        "or raise --max-tokens if the answers are cut short."
    )


#: An accuracy interval wider than this (a share: 50 points) says nothing a reader can act on;
#: the run has too few items.
WIDEST = 0.5
#: The interval's half-width the suggested number of items aims at: about +-10 points.
AIM = 0.10


def items_for(half_width: float) -> int:
    """Items whose 95% interval of an accuracy near 50% is about +-``half_width`` (the normal
    approximation, 1.96 x sqrt(0.25 / n)), rounded up to tens."""
    return 10 * math.ceil(math.ceil((1.96 * 0.5 / half_width) ** 2) / 10)


def too_few_verdict(low: float, high: float, items: int, noun: str, suite_flag: str) -> str | None:
    """What to change when an accuracy's interval is too wide to read (None: it is not).

    Args:
        low, high: the interval (shares).
        items: the items it comes from.
        noun: what an item is ("questions", "statements").
        suite_flag: the benchmark's sample size flag under ``eval all`` ("--limit-biasmd").
    """
    if high - low <= WIDEST:
        return None
    wanted = items_for(AIM)
    return (
        f"{items} {noun} give an interval {100 * (high - low):.0f} points wide: too few to "
        f"tell anything. Run at least {wanted} (--limit {wanted}, or {suite_flag} {wanted} in "
        "eval all) for about +-10 points."
    )


def percent(value: float) -> str:
    """A fraction as a percentage with no decimals."""
    return f"{100 * value:.0f}%"
