"""What the two HIVE benchmarks' findings share: which split's rows to read, and whether the
answers can be read at all."""

from __future__ import annotations

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


def percent(value: float) -> str:
    """A fraction as a percentage with no decimals."""
    return f"{100 * value:.0f}%"
