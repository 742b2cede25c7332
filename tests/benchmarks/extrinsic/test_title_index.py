"""The embedding cache: built once, loaded without the encoder, keyed by the code set."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from climb_vllm.benchmarks.extrinsic import title_index
from climb_vllm.benchmarks.extrinsic.title_index import (
    APPROXIMATION_ERROR,
    PRECISION_VARIABLE,
    VERIFY_SHARE,
    build_or_load,
)
from climb_vllm.core.errors import UserError


class _NoEncoder:
    """Stands in for the encoder where the cache must be hit: any use fails the test."""

    def encode(self, texts, batch_size=128, bfloat16=False):  # type: ignore[no-untyped-def]
        raise AssertionError("the cache should have been used")


def test_cache_is_reused_and_matches_fresh_embeddings(  # type: ignore[no-untyped-def]
    ontology_2021, encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PRECISION_VARIABLE, "float32")
    codes = ["I10", "E11.9", "J18.9", "N17.9"]
    built = build_or_load(ontology_2021, codes, encoder, cache=tmp_path, display="none")
    assert built.path is not None and built.path.exists()
    loaded = build_or_load(ontology_2021, codes, _NoEncoder(), cache=tmp_path, display="none")  # type: ignore[arg-type]
    np.testing.assert_array_equal(built.embeddings, loaded.embeddings)
    fresh = encoder.encode(["Essential (primary) hypertension"])
    np.testing.assert_allclose(loaded.embeddings[0], fresh[0], atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(loaded.embeddings, axis=1), 1.0, atol=1e-5)
    sims, rows = loaded.search(fresh, k=2)
    assert rows[0, 0] == 0 and sims[0, 0] == pytest.approx(1.0, abs=1e-5)


def test_another_code_set_is_another_cache_entry(  # type: ignore[no-untyped-def]
    ontology_2021, encoder, tmp_path: Path
) -> None:
    a = build_or_load(ontology_2021, ["I10", "E11.9"], encoder, cache=tmp_path, display="none")
    b = build_or_load(ontology_2021, ["E11.9", "I10"], encoder, cache=tmp_path, display="none")
    assert a.key != b.key
    assert b.codes == ["E11.9", "I10"]
    np.testing.assert_allclose(a.embeddings[::-1], b.embeddings, atol=1e-5)


def test_unknown_codes_and_unwritable_cache_are_clear_errors(  # type: ignore[no-untyped-def]
    ontology_2021, encoder, tmp_path: Path
) -> None:
    with pytest.raises(UserError, match="not in ICD-10-CM 2021"):
        build_or_load(ontology_2021, ["I10", "XYZ.1"], encoder, cache=tmp_path, display="none")
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(UserError, match="CLIMB_VLLM_CACHE"):
        build_or_load(ontology_2021, ["I10"], encoder, cache=blocker / "sub", display="none")


def test_bfloat16_cache_answers_as_float32_and_float32_cache_wins(  # type: ignore[no-untyped-def]
    ontology_2021, encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codes = [c for c in ontology_2021.codes if c.startswith(("I2", "I5", "J4"))][:600]
    monkeypatch.setenv(PRECISION_VARIABLE, "bfloat16")
    rough = build_or_load(ontology_2021, codes, encoder, cache=tmp_path, display="none", names=True)
    assert rough.approximate is not None and rough.path is not None
    assert rough.path.name.endswith(".bf16.npy")
    check = json.loads(rough.path.with_suffix(".json").read_text())["bfloat16_check"]
    assert 0 < check["max_distance"] <= APPROXIMATION_ERROR * VERIFY_SHARE
    # The vectors really are approximate: they differ from float32 ones by more than rounding.
    exact_vectors = encoder.encode(rough.titles[:50])
    assert np.abs(rough.embeddings[:50] - exact_vectors).max() > 1e-4
    monkeypatch.setenv(PRECISION_VARIABLE, "float32")
    exact = build_or_load(ontology_2021, codes, encoder, cache=tmp_path, display="none", names=True)
    assert exact.approximate is None and exact.path is not None
    assert not exact.path.name.endswith(".bf16.npy")
    queries = encoder.encode(
        ["heart attack", "chest pain on exertion", "asthma flare", "CHF", "angina", "copd"]
    )
    for k in (1, 5):
        rough_sims, rough_rows = rough.search(queries, k)
        exact_sims, exact_rows = exact.search(queries, k)
        np.testing.assert_array_equal(rough_rows, exact_rows)
        np.testing.assert_allclose(rough_sims, exact_sims, atol=1e-6)
    assert rough.rescorer.embedded > 0
    assert rough.describe()["vectors"].startswith("bfloat16")
    # Once a float32 cache exists it is used whatever the setting.
    monkeypatch.setenv(PRECISION_VARIABLE, "bfloat16")
    again = build_or_load(ontology_2021, codes, _NoEncoder(), cache=tmp_path, display="none")  # type: ignore[arg-type]
    assert again.approximate is None


def test_a_failed_bfloat16_check_falls_back_to_float32(  # type: ignore[no-untyped-def]
    ontology_2021, encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PRECISION_VARIABLE, "bfloat16")
    monkeypatch.setattr(title_index, "APPROXIMATION_ERROR", 1e-9)
    built = build_or_load(ontology_2021, ["I10", "E11.9"], encoder, cache=tmp_path, display="none")
    assert built.approximate is None and built.path is not None and built.path.exists()
    meta = json.loads(built.path.with_suffix(".json").read_text())
    assert meta["bfloat16_check"]["max_distance"] > 1e-9


@pytest.mark.parametrize("value", ["fp8", "half"])
def test_an_unknown_precision_is_one_error_naming_the_choices(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PRECISION_VARIABLE, value)
    with pytest.raises(UserError, match="auto, float32 or bfloat16"):
        title_index.index_precision()


def test_bfloat16_weights_cast_once_give_the_autocast_vectors_bit_for_bit(encoder) -> None:  # type: ignore[no-untyped-def]
    import torch

    texts = ["Essential (primary) hypertension", "Type 2 diabetes mellitus without complications"]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = encoder.model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    expected = expected / np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_array_equal(encoder.encode(texts, bfloat16=True), expected)
    # The float32 model is untouched: float32 vectors are not bfloat16 ones.
    assert encoder.model[0].auto_model.encoder.layer[0].output.dense.weight.dtype == torch.float32
    assert not np.array_equal(encoder.encode(texts), expected)
