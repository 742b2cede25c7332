"""What the shared HIVE library needs of this benchmark: its
:class:`~climb_vllm.benchmarks.hive.kind.Kind`, built when first needed (it imports the grader
and Polars)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from climb_vllm.benchmarks.hive.kind import Kind

if TYPE_CHECKING:
    import polars as pl


NAME = "diseasematcher"
TITLE = "DiseaseMatcher"
#: The prompt is the item's question as it is.
PROMPT = "{question}"


def _items(split: str, limit: int | None, seed: int, controls: bool) -> pl.DataFrame:
    """The questions (DiseaseMatcher has no control items, so ``controls`` changes nothing)."""
    from climb_vllm.benchmarks.diseasematcher.task import items_frame

    return items_frame(split, limit, seed)


@lru_cache(maxsize=1)
def kind() -> Kind:
    """What the shared HIVE library needs of DiseaseMatcher."""
    from climb_vllm.benchmarks.diseasematcher import choice, grading, tables, task
    from climb_vllm.benchmarks.diseasematcher.finding import diseasematcher_finding

    return Kind(
        name=NAME,
        title=TITLE,
        prompt=PROMPT,
        datasets=(NAME,),
        items=_items,
        grade=task.grade_frame,
        tables=task.tables,
        layout=tables.layout,
        titles=tables.TITLES,
        percent=tables.PERCENT,
        grades=grading.LABELS,
        categories=("same", "different", "ambiguous"),
        paper_label=grading.paper_label,
        context="question",
        id_example="dm-00001",
        finding=diseasematcher_finding,
        choice=choice.choice_kind(),
    )
