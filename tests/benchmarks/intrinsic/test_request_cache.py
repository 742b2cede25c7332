"""The disk cache of planned requests: same plans back, keyed by everything that decides them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from climb_vllm.benchmarks.intrinsic.request_cache import RequestCache
from climb_vllm.benchmarks.intrinsic.request_perf import request_building_bench
from climb_vllm.engines.boundary import BoundaryEncoder

TEXTS = ["Cholera is related to the name:", "Tuberculosis of prostate is related to the name:"]
NAMES = ["Esther", "Aaliyah", "Muhammad"]


def test_a_stored_plan_reads_back_identical(engine: Any, tmp_path: Path) -> None:
    cache = RequestCache(engine.tokenizer, tmp_path)
    planned = BoundaryEncoder(engine.tokenizer, tails=False).plan(TEXTS, NAMES)
    assert cache.load(TEXTS, NAMES) is None
    cache.save(TEXTS, NAMES, planned)
    assert cache.load(TEXTS, NAMES) == planned
    assert (cache.hits, cache.misses) == (1, 1)
    # Other names, texts or tokenizers are other keys.
    assert cache.load(TEXTS, NAMES[:2]) is None
    assert cache.load(TEXTS[:1], NAMES) is None


def test_another_tokenizer_does_not_read_the_plan(
    engine: Any, real_model: Path, tmp_path: Path
) -> None:
    from transformers import AutoTokenizer

    RequestCache(engine.tokenizer, tmp_path).save(TEXTS, NAMES, [])
    gemma = RequestCache(AutoTokenizer.from_pretrained(str(real_model)), tmp_path)
    assert gemma.load(TEXTS, NAMES) is None


def test_a_damaged_file_counts_as_missing(engine: Any, tmp_path: Path) -> None:
    cache = RequestCache(engine.tokenizer, tmp_path)
    cache.save(TEXTS, NAMES, BoundaryEncoder(engine.tokenizer).plan(TEXTS, NAMES))
    (stored,) = tmp_path.rglob("*.json.gz")
    stored.write_bytes(stored.read_bytes()[:20])
    assert cache.load(TEXTS, NAMES) is None


def test_the_request_bench_compares_identical_plans(tiny_model: Path) -> None:
    results = request_building_bench(tiny_model, 600, 256)
    assert results["plans_identical"] is True
    assert results["pairs"] == 600 * 30 and results["tree_nodes"] > 0
    assert results["speedup_tails_vs_full"] > 1


def test_chunks_are_stored_only_when_the_full_path_ran(engine: Any, tmp_path: Path) -> None:
    from climb_vllm.benchmarks.intrinsic.task import plan_chunk

    descriptions = {"A00": "Cholera", "A15.0": "Tuberculosis of lung"}
    template = "{description} is related to the name:"
    tails_cache = RequestCache(engine.tokenizer, tmp_path / "tails")
    plan_chunk(
        BoundaryEncoder(engine.tokenizer),
        ["A00", "A15.0"],
        descriptions,
        NAMES,
        template,
        tails_cache,
    )
    assert not list((tmp_path / "tails").rglob("*.json.gz"))  # tails: faster than reading
    full_cache = RequestCache(engine.tokenizer, tmp_path / "full")
    full = BoundaryEncoder(engine.tokenizer, tails=False)
    first = plan_chunk(full, ["A00", "A15.0"], descriptions, NAMES, template, full_cache)
    again = plan_chunk(full, ["A00", "A15.0"], descriptions, NAMES, template, full_cache)
    assert first == again and full_cache.hits == 1 and full.counts.full_texts == 2
