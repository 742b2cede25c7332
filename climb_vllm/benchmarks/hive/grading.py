"""The grade of an answer and grading many answers at once, for the HIVE benchmarks.

An answer is read by :func:`climb_vllm.benchmarks.hive.reading.read` (whom it picks, whether it
hedges, or why it picks no one) and given one grade of its benchmark's vocabulary by the
benchmark's grader (BiasMD: :mod:`climb_vllm.benchmarks.biasmd.grading`; DiseaseMatcher:
:mod:`climb_vllm.benchmarks.diseasematcher.grading`, each with its vocabulary and the mapping
onto the paper's categories). :func:`grade_many` runs a grader over many answers, in worker
processes for large inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Grade:
    """The grade of one response.

    Attributes:
        label: one grade of the benchmark's vocabulary.
        rule: which step of the procedure decided it (for audits and the agreement report).
    """

    label: str
    rule: str


#: Below this many responses, grading stays in this process (starting workers costs more).
PARALLEL_FROM = 20_000
#: Worker processes of :func:`grade_many` (None: :func:`~climb_vllm.core.processes.process_budget`).
WORKERS: int | None = None


def _grade_batch(
    grader: Callable[..., Grade], rows: list[tuple[Any, ...]]
) -> list[tuple[str, str]]:
    return [(g.label, g.rule) for g in (grader(*row) for row in rows)]


def grade_many(
    grader: Callable[..., Grade], rows: Sequence[tuple[Any, ...]], workers: int | None = None
) -> list[Grade]:
    """Grade many responses, in parallel worker processes for large inputs.

    Args:
        grader: a module-level grading function (worker processes import it by name).
        rows: one argument tuple per response.
        workers: processes (default: the CPUs this process may use).
    """
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from climb_vllm.core.processes import process_budget

    count = workers or WORKERS or process_budget()
    if count <= 1 or len(rows) < PARALLEL_FROM:
        return [Grade(*pair) for pair in _grade_batch(grader, list(rows))]
    # Four parts per worker: a worker slowed by the machine leaves parts to the others.
    size = -(-len(rows) // (4 * count))
    parts = [list(rows[i : i + size]) for i in range(0, len(rows), size)]
    # spawn, not fork: the parent may hold Polars' thread pool, which fork would copy mid-use.
    with ProcessPoolExecutor(count, mp_context=get_context("spawn")) as pool:
        results = pool.map(_grade_batch, [grader] * len(parts), parts)
        return [Grade(*pair) for part in results for pair in part]
