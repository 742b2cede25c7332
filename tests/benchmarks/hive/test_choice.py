"""Choice mode's scoring: option log-probs equal an independent raw-text computation on the
real model, a choice does not depend on where an option sits in a batch, each score picks as
defined, and a run killed between chunks resumes without losing or repeating a record."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from climb_vllm.benchmarks.biasmd import choice as biasmd_choice
from climb_vllm.benchmarks.biasmd.task import items_frame as biasmd_items
from climb_vllm.benchmarks.diseasematcher import choice as dm_choice
from climb_vllm.benchmarks.diseasematcher.task import items_frame as dm_items
from climb_vllm.benchmarks.hive.choice import (
    ChoicePrompt,
    TokenCounts,
    choices_frame,
    run_choice,
    score_prompts,
)
from climb_vllm.core.store import RunStore
from climb_vllm.engines.base import ScoreRequest, ScoreResult
from tests.helpers import raw_text_logprob


def _prompts() -> list[ChoicePrompt]:
    """Prompts of both benchmarks: DiseaseMatcher questions with every swap, BiasMD statements
    (as written and swapped) and controls."""
    return (
        dm_choice.prompts(dm_items("eval", 8, 0))[:9]
        + biasmd_choice.prompts(biasmd_items("eval", 5, 0))[:7]
    )


def test_option_log_probs_equal_raw_text_on_the_real_model(real_engine: Any) -> None:
    prompts = _prompts()
    frame = score_prompts(real_engine, prompts)
    assert frame.height == sum(len(p.options) for p in prompts)
    worst = 0.0
    rows = frame.iter_rows(named=True)
    for prompt in prompts:
        for option in prompt.options:
            row = next(rows)
            assert row["text"] == option
            model, tokenizer = real_engine.model, real_engine.tokenizer
            reference = raw_text_logprob(model, tokenizer, prompt.text, option)
            free = [raw_text_logprob(model, tokenizer, t, option) for t in prompt.content_free]
            base = math.log(sum(math.exp(v) for v in free) / len(free))
            worst = max(worst, abs(row["logprob"] - reference), abs(row["calibration"] - base))
    assert worst < 1e-4, worst


def _by_option(frame: pl.DataFrame) -> dict[tuple[str, str, str], tuple[float, float]]:
    return {
        (r["id"], r["variant"], r["text"]): (r["logprob"], r["calibration"])
        for r in frame.iter_rows(named=True)
    }


def test_scores_do_not_depend_on_batch_or_option_order(engine: Any) -> None:
    prompts = _prompts()
    alone = _by_option(score_prompts(engine, prompts))
    # Reversed prompts, reversed options, and each prompt in a batch of different neighbours.
    shuffled = [
        ChoicePrompt(p.id, p.variant, p.text, p.content_free, p.options[::-1])
        for p in prompts[::-1]
    ]
    mixed = _by_option(score_prompts(engine, shuffled))
    assert alone.keys() == mixed.keys()
    for key, (logprob, calibration) in alone.items():
        assert abs(mixed[key][0] - logprob) < 1e-5, key
        assert abs(mixed[key][1] - calibration) < 1e-5, key


def test_each_score_picks_its_own_best_option() -> None:
    records = pl.DataFrame(
        {
            "id": ["q"] * 3,
            "variant": ["original"] * 3,
            "option": [0, 1, 2],
            "text": ["Al", "Bartholomew", "cannot be determined"],
            # summed: Al; per byte (3, 12, 21 bytes): the long option; calibrated: Bartholomew.
            "logprob": [-3.0, -4.0, -4.2],
            "calibration": [-1.0, -6.0, -1.0],
            "bytes": [3, 12, 21],
        }
    )
    row = choices_frame(records, "calibrated").row(0, named=True)
    assert (row["choice_sum"], row["choice_per_byte"], row["choice_calibrated"]) == (0, 2, 1)
    assert row["options"] == 3
    assert math.isclose(row["margin"], (-3.0 + 1.0) - (-4.0 + 6.0))


class _Dying:
    """An engine that scores with ``inner`` and fails on call number ``fail_on``."""

    def __init__(self, inner: Any, fail_on: int) -> None:
        self.inner, self.fail_on, self.calls = inner, fail_on, 0
        self.tokenizer, self.stats, self.name = inner.tokenizer, inner.stats, inner.name

    def score(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("killed")
        result: list[ScoreResult] = self.inner.score(requests)
        return result


def test_a_killed_run_resumes_without_lost_or_repeated_records(engine: Any, tmp_path: Path) -> None:
    prompts = dm_choice.prompts(dm_items("eval", 8, 0))
    store = RunStore(tmp_path / "run")
    store.claim("diseasematcher", {}, "hash")
    with pytest.raises(RuntimeError, match="killed"):
        run_choice("diseasematcher", store, _Dying(engine, 3), prompts, 5, "none")  # type: ignore[arg-type]
    assert store.finished_chunks("diseasematcher") == {0, 1}
    scored = run_choice("diseasematcher", store, engine, prompts, 5, "none")
    assert scored == math.ceil(len(prompts) / 5) - 2
    records = store.read_records("diseasematcher")
    keys = records.select("id", "variant", "option")
    assert keys.height == keys.unique().height == sum(len(p.options) for p in prompts)
    once = _by_option(score_prompts(engine, prompts))
    assert all(np.isclose(once[k][0], v[0], atol=1e-5) for k, v in _by_option(records).items())


def test_options_share_their_prompt(engine: Any) -> None:
    """Forward tokens counted: the prompt once for all its options, against once per option
    (lm-eval's way), from the tokenizer directly."""
    prompts = [
        ChoicePrompt(p.id, p.variant, p.text, (), p.options)
        for p in dm_choice.prompts(dm_items("eval", 4, 0))
    ]
    counts = TokenCounts()
    score_prompts(engine, prompts, counts=counts)
    tokenizer = engine.tokenizer
    separate = sum(len(tokenizer(f"{p.text} {o}")["input_ids"]) for p in prompts for o in p.options)
    prompt_tokens = sum(len(tokenizer(p.text)["input_ids"]) for p in prompts)
    assert counts.separate == separate
    assert counts.shared == separate - prompt_tokens
