"""The extrinsic speed measurements: the index-build bench on a small code set."""

from __future__ import annotations

from climb_vllm.icd_mapping.perf import index_build_bench


def test_index_build_bench_compares_the_three_builds_on_few_codes() -> None:
    # Fewer codes than the realistic texts would sample titles of (40 * 5 < 2,000).
    results = index_build_bench(40)
    assert results["codes"] == 40
    for way in ("float32", "bfloat16", "packaged"):
        assert results[f"first_build_{way}_s"] > 0
    mapped = [key for key in results if key.startswith("map_") and key.endswith("_float32_s")]
    assert mapped == ["map_240_texts_float32_s"]  # 40 paraphrases + 200 realistic texts
    for way in ("bfloat16", "packaged"):
        same, total = (int(x) for x in results[f"identical_answers_{way}"].split(" / "))
        assert same == total == 240
    # The packaged vectors are approximate: some rows were re-checked in float32.
    assert results["packaged_rows_rechecked"] > 0


def test_contextual_texts_give_each_abbreviation_its_own_context() -> None:
    from climb_vllm.icd_mapping.perf import contextual_texts

    texts, contexts = contextual_texts(60)
    assert len(texts) == len(contexts) == 60
    assert len(set(contexts)) == 60  # every text is matched once per context
    assert all(contexts) and "CAP" in texts
