"""The embedding cache: built once, loaded without the encoder, keyed by the code set."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.icd_mapping.title_index import build_or_load
from climb_vllm.icd_mapping.vector_cache import (
    APPROXIMATION_ERROR,
    PRECISION_VARIABLE,
    VERIFY_SHARE,
)


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
    assert rough.path.name.endswith(".approx.npy")
    check = json.loads(rough.path.with_suffix(".json").read_text())["bfloat16_check"]
    assert 0 < check["max_distance"] <= APPROXIMATION_ERROR * VERIFY_SHARE
    # The vectors really are approximate: they differ from float32 ones by more than rounding.
    exact_vectors = encoder.encode(rough.titles[:50])
    assert np.abs(rough.embeddings[:50] - exact_vectors).max() > 1e-4
    monkeypatch.setenv(PRECISION_VARIABLE, "float32")
    exact = build_or_load(ontology_2021, codes, encoder, cache=tmp_path, display="none", names=True)
    assert exact.approximate is None and exact.path is not None
    assert not exact.path.name.endswith(".approx.npy")
    queries = encoder.encode(
        ["heart attack", "chest pain on exertion", "asthma flare", "CHF", "angina", "copd"]
    )
    for k in (1, 5):
        rough_sims, rough_rows = rough.search(queries, k)
        exact_sims, exact_rows = exact.search(queries, k)
        np.testing.assert_array_equal(rough_rows, exact_rows)
        np.testing.assert_allclose(rough_sims, exact_sims, atol=1e-6)
    assert rough.rescorer.embedded > 0
    assert rough.describe()["vectors"].startswith("approximate")
    # Once a float32 cache exists it is used whatever the setting.
    monkeypatch.setenv(PRECISION_VARIABLE, "bfloat16")
    again = build_or_load(ontology_2021, codes, _NoEncoder(), cache=tmp_path, display="none")  # type: ignore[arg-type]
    assert again.approximate is None
