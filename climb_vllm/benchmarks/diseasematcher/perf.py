"""DiseaseMatcher's speed measurements: grading (``climb-vllm bench --grading N``) and synthetic
answers for the report's measurement, in DiseaseMatcher's answer shapes (see
:mod:`climb_vllm.benchmarks.hive.perf`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from climb_vllm.benchmarks.hive.perf import REASONING, time_grading, write_synthetic

if TYPE_CHECKING:
    import numpy as np
    import polars as pl

    from climb_vllm.benchmarks.base import PerfSettings
    from climb_vllm.core.store import RunStore

#: Answer shapes of real models' answers to DiseaseMatcher ({a}, {b}: the patients; {d}: the
#: disease).
ANSWERS = (
    "{a} is more likely to have {d}.",
    "It is difficult to say, but {b} is more likely.",
    "Either {a} or {b} could have {d}; there is not enough information.",
    "As an AI language model, I cannot make assumptions based on race or religion.",
    "{b}.",
    "Both {a} and {b} have symptoms that could fit. Overall, {a} is the better match.",
    "I cannot make a definitive diagnosis without an examination. However, based on the "
    "symptoms provided, {b} is more likely to have {d}.",
    "{a} is more likely to have {d}. {b}, on the other hand, has symptoms more consistent with "
    "a different condition, such as a skin infection.",
    "Based on the symptoms, {a}'s presentation is more indicative of",
)


def grading_bench(count: int, settings: PerfSettings | None = None) -> dict[str, Any]:
    """Seconds to grade ``count`` DiseaseMatcher answers, in one process and with the workers."""
    from climb_vllm.benchmarks.diseasematcher.grading import grade_diseasematcher
    from climb_vllm.benchmarks.diseasematcher.task import load_diseasematcher

    columns = ("patient1", "patient2", "answer", "question", "disease")
    items = load_diseasematcher().select(*columns).rows()
    rows = []
    for i in range(count):
        p1, p2, answer, question, disease = items[i % len(items)]
        text = ANSWERS[i % len(ANSWERS)].format(a=p1, b=p2, d=disease)
        rows.append((REASONING + " " + text, p1, p2, answer, question, disease))
    return time_grading("diseasematcher", grade_diseasematcher, rows)


def choice_speed(count: int | None, settings: PerfSettings) -> dict[str, Any]:
    """Choice mode's speed on ``count`` items (:mod:`climb_vllm.benchmarks.hive.choice_perf`)."""
    from climb_vllm.benchmarks.diseasematcher.kind import kind
    from climb_vllm.benchmarks.hive.choice_perf import choice_bench

    return choice_bench(kind(), count or 64, settings)


def synthetic_answers(store: RunStore, model: str, rng: np.random.Generator) -> int:
    """One DiseaseMatcher answer per question for ``model``; returns how many."""
    from climb_vllm.benchmarks.diseasematcher.config import DiseaseMatcherConfig
    from climb_vllm.benchmarks.diseasematcher.kind import kind

    def responses(items: pl.DataFrame) -> list[str]:
        picks = rng.integers(0, len(ANSWERS), items.height)
        fields = items.select("patient1", "patient2", "disease").rows()
        return [ANSWERS[k].format(a=a, b=b, d=d) + REASONING for k, (a, b, d) in zip(picks, fields)]

    config = DiseaseMatcherConfig(model=model, split="all")
    return write_synthetic(store, kind(), config, responses)
