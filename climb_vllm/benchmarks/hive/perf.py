"""``climb-vllm bench --grading N``: grading throughput on N realistic responses.

The responses follow a fixed set of answer shapes like those of real models' answers (picks,
hedges, refusals, hedge-then-pick, conditionals, suggested rewrites, quoted names, restatements,
another condition, answers cut off mid-sentence), each lengthened with a typical reasoning
paragraph so that their length resembles real model output (about 480 characters on average).
Each is paired with a real DiseaseMatcher or BiasMD item in turn. Baseline: the same grading in
one process.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import polars as pl

from climb_vllm.benchmarks.hive.grading import grade_many
from climb_vllm.core.store import RunStore

_REASONING = (
    " To answer this, consider each patient's symptoms in turn and how well they match the "
    "typical presentation of the condition. Symptoms that are specific to the organ system "
    "involved weigh more than general ones such as fatigue or headache, which occur in many "
    "illnesses. Demographic details given in the question do not by themselves change the "
    "likelihood of the disease and should not drive the answer."
)
_DM_ANSWERS = (
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
_BM_ANSWERS = (
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


def _rows(count: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    from climb_vllm.benchmarks.hive.items import load_biasmd, load_diseasematcher

    matcher = (
        load_diseasematcher().select("patient1", "patient2", "answer", "question", "disease").rows()
    )
    statements = load_biasmd().drop_nulls("person1")
    biasmd = statements.select("person1", "person2", "statement", "pronoun").rows()
    dm_rows: list[tuple[Any, ...]] = []
    bm_rows: list[tuple[Any, ...]] = []
    for i in range(count):
        p1, p2, answer, question, disease = matcher[i % len(matcher)]
        text = _DM_ANSWERS[i % len(_DM_ANSWERS)].format(a=p1, b=p2, d=disease)
        dm_rows.append((_REASONING + " " + text, p1, p2, answer, question, disease))
        b1, b2, statement, pronoun = biasmd[i % len(biasmd)]
        text = _BM_ANSWERS[i % len(_BM_ANSWERS)].format(a=b1, b=b2, p=pronoun.capitalize())
        bm_rows.append((text + _REASONING, (b1, b2), statement, pronoun))
    return dm_rows, bm_rows


def grading_bench(count: int) -> dict[str, Any]:
    """Seconds to grade ``count`` DiseaseMatcher and ``count`` BiasMD responses, both ways."""
    dm_rows, bm_rows = _rows(count)
    results: dict[str, Any] = {
        "responses": count,
        "mean_chars": sum(len(r[0]) for r in dm_rows) / count,
    }
    for kind, rows in (("diseasematcher", dm_rows), ("biasmd", bm_rows)):
        start = time.perf_counter()
        one = grade_many(kind, rows, workers=1)
        single = time.perf_counter() - start
        start = time.perf_counter()
        many = grade_many(kind, rows)
        parallel = time.perf_counter() - start
        if [g.label for g in one] != [g.label for g in many]:
            raise RuntimeError("parallel grading disagreed with one process")
        results[f"{kind}_one_process_seconds"] = single
        results[f"{kind}_seconds"] = parallel
        results[f"{kind}_speedup"] = single / parallel
        results[f"{kind}_per_second"] = count / parallel
    return results


def synthetic_answers(store: RunStore, model: str, benchmark: str, rng: np.random.Generator) -> int:
    """Write one answer per item of ``benchmark`` (every item, controls included) for
    ``model`` into ``store``, in the answer shapes of the grading measurement; returns how
    many."""
    from climb_vllm.benchmarks.hive.config import GenerationConfig
    from climb_vllm.benchmarks.hive.run import items_for

    config = GenerationConfig(model=model, benchmark=benchmark, split="all")  # type: ignore[arg-type]
    store.claim(benchmark, config.hashed_fields(), config.config_hash())
    items = items_for(benchmark, "all", None, config.seed, config.controls)
    shapes = _DM_ANSWERS if benchmark == "diseasematcher" else _BM_ANSWERS
    picks = rng.integers(0, len(shapes), items.height)
    if benchmark == "diseasematcher":
        fields = items.select("patient1", "patient2", "disease").rows()
        responses = [
            shapes[k].format(a=a, b=b, d=d) + _REASONING for k, (a, b, d) in zip(picks, fields)
        ]
    else:
        fields = items.select("person1", "person2", "pronoun").rows()
        responses = [
            shapes[k].format(a=a, b=b, p=(p or "they").capitalize()) + _REASONING
            for k, (a, b, p) in zip(picks, fields)
        ]
    store.write_chunk(
        benchmark,
        0,
        pl.DataFrame(
            {
                "id": items["id"],
                "sample": 0,
                "seed": 0,
                "response": responses,
                "finish_reason": "stop",
                "completion_tokens": 120,
                "prompt_tokens": 90,
            }
        ),
    )
    return int(items.height)
