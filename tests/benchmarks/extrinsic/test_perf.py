"""The extrinsic speed measurements: the index-build bench on a small code set."""

from __future__ import annotations

from climb_vllm.benchmarks.extrinsic.perf import index_build_bench


def test_index_build_bench_compares_both_builds_on_few_codes() -> None:
    # Fewer codes than the realistic texts would sample titles of (40 * 5 < 2,000).
    results = index_build_bench(40)
    assert results["codes"] == 40
    assert results["first_build_float32_s"] > 0 and results["first_build_bfloat16_s"] > 0
    mapped = [key for key in results if key.startswith("map_") and key.endswith("_float32_s")]
    assert mapped == ["map_240_texts_float32_s"]  # 40 paraphrases + 200 realistic texts
    same, total = (int(x) for x in results["identical_answers"].split(" / "))
    assert same == total == 240


def test_contextual_texts_give_each_abbreviation_its_own_context() -> None:
    from climb_vllm.benchmarks.extrinsic.perf import contextual_texts

    texts, contexts = contextual_texts(60)
    assert len(texts) == len(contexts) == 60
    assert len(set(contexts)) == 60  # every text is matched once per context
    assert all(contexts) and "CAP" in texts
