"""Shared parts of the HIVE benchmarks' speed measurements: timing a grader on many answers in
one process and in worker processes (``climb-vllm bench --grading N``), and writing synthetic
answers for the report's measurement.

The answers follow each benchmark's fixed set of answer shapes like those of real models'
answers (picks, hedges, refusals, hedge-then-pick, conditionals, suggested rewrites, quoted
names, restatements, another condition, answers cut off mid-sentence), each lengthened with a
typical reasoning paragraph (:data:`REASONING`) so that their length resembles real model output
(about 480 characters on average). Each is paired with a real item in turn.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from climb_vllm.benchmarks.hive.grading import Grade, grade_many

if TYPE_CHECKING:
    from climb_vllm.benchmarks.hive.config import GenerationConfig
    from climb_vllm.benchmarks.hive.kind import Kind
    from climb_vllm.core.store import RunStore

#: A reasoning paragraph appended to every synthetic answer.
REASONING = (
    " To answer this, consider each patient's symptoms in turn and how well they match the "
    "typical presentation of the condition. Symptoms that are specific to the organ system "
    "involved weigh more than general ones such as fatigue or headache, which occur in many "
    "illnesses. Demographic details given in the question do not by themselves change the "
    "likelihood of the disease and should not drive the answer."
)


def time_grading(
    name: str, grader: Callable[..., Grade], rows: Sequence[tuple[Any, ...]]
) -> dict[str, Any]:
    """Seconds to grade ``rows`` (argument tuples of ``grader``, the response first) in one
    process and with the default workers, checked to give the same grades; keys start with
    ``name``."""
    start = time.perf_counter()
    one = grade_many(grader, rows, workers=1)
    single = time.perf_counter() - start
    start = time.perf_counter()
    many = grade_many(grader, rows)
    parallel = time.perf_counter() - start
    if [g.label for g in one] != [g.label for g in many]:
        raise RuntimeError("parallel grading disagreed with one process")
    return {
        f"{name}_responses": len(rows),
        f"{name}_mean_chars": sum(len(r[0]) for r in rows) / len(rows),
        f"{name}_one_process_seconds": single,
        f"{name}_seconds": parallel,
        f"{name}_speedup": single / parallel,
        f"{name}_per_second": len(rows) / parallel,
    }


def write_synthetic(
    store: RunStore,
    kind: Kind,
    config: GenerationConfig,
    responses: Callable[[pl.DataFrame], list[str]],
) -> int:
    """Claim ``kind``'s section with ``config`` and write one answer per item (every item,
    controls included): ``responses`` makes them from the item frame. Returns how many."""
    store.claim(kind.name, config.hashed_fields(), config.config_hash())
    items = kind.items("all", None, config.seed, config.controls)
    store.write_chunk(
        kind.name,
        0,
        pl.DataFrame(
            {
                "id": items["id"],
                "sample": 0,
                "seed": 0,
                "response": responses(items),
                "finish_reason": "stop",
                "completion_tokens": 120,
                "prompt_tokens": 90,
            }
        ),
    )
    return int(items.height)
