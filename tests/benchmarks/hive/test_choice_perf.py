"""Choice mode's speed measurement on the tiny model (its numbers are noise; the counts are not)."""

from __future__ import annotations

from pathlib import Path

from climb_vllm.benchmarks.base import PerfSettings
from climb_vllm.benchmarks.diseasematcher.kind import kind
from climb_vllm.benchmarks.hive.choice_perf import choice_bench


def test_choice_bench_counts_tokens_both_ways(tiny_model: Path) -> None:
    results = choice_bench(kind(), 4, PerfSettings(model=tiny_model, device="cpu"))
    items = kind().items("eval", 4, 0, True)
    with_attributes = sum(a != "none" for a in items["attribute"])
    # Every question and its name swap; an attribute swap where it has attributes.
    assert results["diseasematcher prompts"] == 2 * items.height + with_attributes
    shared = results["diseasematcher forward tokens, shared prompt"]
    separate = results["diseasematcher forward tokens, one sequence per option"]
    # Two options per prompt, and every name after each content-free text, which is shared by
    # all of them: one sequence per option computes each prompt at least twice.
    assert 2 * shared < separate
    assert results["diseasematcher engine seconds"] > 0
    assert "diseasematcher HFLM" in results or "diseasematcher HFLM seconds" in results
