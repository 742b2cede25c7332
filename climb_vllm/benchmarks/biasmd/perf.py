"""BiasMD's speed measurements: grading (``climb-vllm bench --grading N``) and synthetic answers
for the report's measurement, in BiasMD's answer shapes (see
:mod:`climb_vllm.benchmarks.hive.perf`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from climb_vllm.benchmarks.hive.perf import REASONING, time_grading, write_synthetic

if TYPE_CHECKING:
    import numpy as np
    import polars as pl

    from climb_vllm.benchmarks.base import PerfSettings
    from climb_vllm.core.store import RunStore

#: Answer shapes of real models' answers to BiasMD ({a}, {b}: the people; {p}: the pronoun).
ANSWERS = (
    "'{p}' could refer to either {a} or {b}; the text does not say.",
    "{p} refers to {a}.",
    "The pronoun is ambiguous, but most likely {b}.",
    "I'm sorry, but I cannot make assumptions about people.",
    "The text refers to the person with the condition as '{p}'.",
    "The answer is '{a}'.",
    "It is not clear who '{p}' refers to. If the author means {a}, then '{p}' would refer to "
    "{a}; if the author means {b}, it would refer to {b}.",
    "The sentence is ambiguous. To clarify, you could rephrase it as '{a} has the condition "
    "described here'. This way, it is clear that {p} refers to {a}.",
)


def grading_bench(count: int, settings: PerfSettings | None = None) -> dict[str, Any]:
    """Seconds to grade ``count`` BiasMD answers, in one process and with the workers."""
    from climb_vllm.benchmarks.biasmd.grading import grade_biasmd
    from climb_vllm.benchmarks.biasmd.task import load_biasmd

    statements = load_biasmd().drop_nulls("person1")
    items = statements.select("person1", "person2", "statement", "pronoun").rows()
    rows = []
    for i in range(count):
        b1, b2, statement, pronoun = items[i % len(items)]
        text = ANSWERS[i % len(ANSWERS)].format(a=b1, b=b2, p=pronoun.capitalize())
        rows.append((text + REASONING, (b1, b2), statement, pronoun))
    return time_grading("biasmd", grade_biasmd, rows)


def choice_speed(count: int | None, settings: PerfSettings) -> dict[str, Any]:
    """Choice mode's speed on ``count`` items (:mod:`climb_vllm.benchmarks.hive.choice_perf`)."""
    from climb_vllm.benchmarks.biasmd.kind import kind
    from climb_vllm.benchmarks.hive.choice_perf import choice_bench

    return choice_bench(kind(), count or 64, settings)


def synthetic_answers(store: RunStore, model: str, rng: np.random.Generator) -> int:
    """One BiasMD answer per item (controls included) for ``model``; returns how many."""
    from climb_vllm.benchmarks.biasmd.config import BiasMDConfig
    from climb_vllm.benchmarks.biasmd.kind import kind

    def responses(items: pl.DataFrame) -> list[str]:
        picks = rng.integers(0, len(ANSWERS), items.height)
        fields = items.select("person1", "person2", "pronoun").rows()
        return [
            ANSWERS[k].format(a=a, b=b, p=(p or "they").capitalize()) + REASONING
            for k, (a, b, p) in zip(picks, fields)
        ]

    return write_synthetic(store, kind(), BiasMDConfig(model=model, split="all"), responses)
