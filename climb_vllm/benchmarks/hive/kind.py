"""What one HIVE benchmark gives the shared library: its items, its grader, its tables and its
labels, so that the library (running, grading other tools' answers, agreement with labels)
never branches on which benchmark it serves."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.benchmarks.base import Finding
    from climb_vllm.benchmarks.hive.choice import ChoiceKind


@dataclass(frozen=True)
class Kind:
    """One HIVE benchmark, as the shared library needs it.

    Attributes:
        name: its registry name (the manifest section, ``records/<name>/``, ``results/<name>/``).
        title: its name for readers ("BiasMD").
        prompt: its prompt template, recorded in the manifest.
        datasets: the packaged HIVE files it reads (``data/hive/<file>.parquet``), hashed into
            the manifest.
        items: ``(split, limit, seed, controls)`` -> the item frame, with ``id`` and ``prompt``.
        grade: ``(records, items)`` -> the records graded (``grade``, ``rule``, ``correct``).
        tables: the graded frame -> its long tables.
        layout: ``(tables, model)`` -> the tables as shown, by key.
        titles: each shown table's title, by key.
        percent: each shown table's percent columns beyond those named so, by key.
        grades: its grade vocabulary, in the order tables show it.
        categories: the authors' label categories (lower case) that agreement compares with.
        paper_label: ``(grade, three_way)`` -> the authors' category of a grade.
        context: what an item's text is called in the disagreement files ("statement").
        id_example: an item id, quoted in errors.
        finding: the run's ``metrics.json`` -> what it found, for the report's first screen.
        choice: its declaration for choice mode (``--answer choice``), or None.
    """

    name: str
    title: str
    prompt: str
    datasets: tuple[str, ...]
    items: Callable[[str, int | None, int, bool], pl.DataFrame]
    grade: Callable[[pl.DataFrame, pl.DataFrame], pl.DataFrame]
    tables: Callable[[pl.DataFrame], dict[str, pl.DataFrame]]
    layout: Callable[[dict[str, pl.DataFrame], str], dict[str, pl.DataFrame]]
    titles: Mapping[str, str]
    percent: Mapping[str, tuple[str, ...]]
    grades: tuple[str, ...]
    categories: tuple[str, ...]
    paper_label: Callable[[str, bool], str]
    context: str
    id_example: str
    finding: Callable[[Mapping[str, Any]], Finding]
    choice: ChoiceKind | None = None
