"""What the shared HIVE library needs of this benchmark: its
:class:`~climb_vllm.benchmarks.hive.kind.Kind`, built when first needed (it imports the grader
and Polars)."""

from __future__ import annotations

from functools import lru_cache

from climb_vllm.benchmarks.hive.kind import Kind

NAME = "biasmd"
TITLE = "BiasMD"


@lru_cache(maxsize=1)
def kind() -> Kind:
    """What the shared HIVE library needs of BiasMD."""
    from climb_vllm.benchmarks.biasmd import choice, grading, tables, task
    from climb_vllm.benchmarks.biasmd.finding import biasmd_finding

    return Kind(
        name=NAME,
        title=TITLE,
        prompt=task.PROMPT,
        datasets=(NAME,),
        items=task.items_frame,
        grade=task.grade_frame,
        tables=task.tables,
        layout=tables.layout,
        titles=tables.TITLES,
        percent=tables.PERCENT,
        grades=grading.LABELS,
        categories=("ambiguous", "biased"),
        paper_label=grading.paper_label,
        context="statement",
        id_example="biasmd-0001",
        finding=biasmd_finding,
        choice=choice.choice_kind(),
    )
