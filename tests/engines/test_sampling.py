"""Batched sampling: the same tokens as one request at a time, a request's samples fixed by its
own seed whatever shares its batch, and the filters (temperature, top-k, top-p) exact."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from climb_vllm.engines.base import GenerateRequest
from climb_vllm.engines.sampling import Row, Settings, _choose, plan_batches

PROMPTS = (
    "Cholera is related to",
    "A 54-year-old man with fever, cough and shortness of breath for three days",
    "Diagnosis:",
)


def test_batched_greedy_equals_one_request_at_a_time(engine: Any) -> None:
    requests = [GenerateRequest(prompt=p, temperature=0.0, max_tokens=10) for p in PROMPTS]
    together = engine.generate(requests)
    alone = [engine.generate([r])[0] for r in requests]
    assert together == alone


def test_a_request_samples_the_same_whatever_shares_its_batch(engine: Any) -> None:
    target = GenerateRequest(prompt=PROMPTS[1], n=3, seed=11, temperature=0.9, max_tokens=12)
    others = [
        GenerateRequest(prompt=p, n=2, seed=5, temperature=1.3, max_tokens=7) for p in PROMPTS
    ]
    alone = engine.generate([target])[0]
    mixed = engine.generate([others[0], target, *others[1:]])[1]
    assert alone == mixed
    assert len(set(alone.texts)) > 1  # three different samples of one seed


def _draw(probs: list[float], settings: Settings, draws: int, seed: int = 0) -> np.ndarray:
    import torch

    logits = torch.log(torch.tensor([probs] * draws, dtype=torch.float32))
    rows = [Row((1,), settings, k, 1) for k in range(draws)]
    streams = [torch.Generator().manual_seed(seed + k) for k in range(draws)]
    return np.bincount(_choose(logits, rows, streams).numpy(), minlength=len(probs))


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (Settings(greedy=False), [0.5, 0.3, 0.15, 0.05]),
        (Settings(greedy=False, top_p=0.7), [0.5 / 0.8, 0.3 / 0.8, 0.0, 0.0]),
        (Settings(greedy=False, top_k=3), [0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0.0]),
        (Settings(greedy=False, top_p=0.1), [1.0, 0.0, 0.0, 0.0]),
        (Settings(greedy=True), [1.0, 0.0, 0.0, 0.0]),
    ],
)
def test_filters_sample_the_stated_distribution(settings: Settings, expected: list[float]) -> None:
    counts = _draw([0.5, 0.3, 0.15, 0.05], settings, 4000)
    shares = counts / counts.sum()
    # 4,000 draws: a share's standard error is at most 0.008; 0.03 is about 4 of them.
    assert np.abs(shares - np.array(expected)).max() < 0.03, shares


def test_temperature_sharpens() -> None:
    hot = _draw([0.5, 0.3, 0.15, 0.05], Settings(greedy=False, temperature=2.0), 4000)
    cold = _draw([0.5, 0.3, 0.15, 0.05], Settings(greedy=False, temperature=0.5), 4000)
    # p^(1/T) renormalised: T=0.5 gives 0.25/0.365 = 0.685 to the first token.
    assert abs(cold[0] / 4000 - 0.25 / 0.365) < 0.03
    assert hot[0] < cold[0]


def test_batches_respect_the_position_budget() -> None:
    rows = [Row(tuple(range(n)), Settings(greedy=True), 0, 10) for n in (5, 50, 20, 8, 90)]
    batches = plan_batches(rows, batch_tokens=200)
    assert sorted(i for b in batches for i in b) == list(range(5))
    for batch in batches:
        longest = max(len(rows[i].prompt) + 10 for i in batch)
        assert len(batch) == 1 or len(batch) * longest <= 200
