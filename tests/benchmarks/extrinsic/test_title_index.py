"""The embedding cache: built once, loaded without the encoder, keyed by the code set."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from climb_vllm.benchmarks.extrinsic.title_index import build_or_load
from climb_vllm.core.errors import UserError


class _NoEncoder:
    """Stands in for the encoder where the cache must be hit: any use fails the test."""

    def encode(self, texts, batch_size=128):  # type: ignore[no-untyped-def]
        raise AssertionError("the cache should have been used")


def test_cache_is_reused_and_matches_fresh_embeddings(  # type: ignore[no-untyped-def]
    ontology_2021, encoder, tmp_path: Path
) -> None:
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
