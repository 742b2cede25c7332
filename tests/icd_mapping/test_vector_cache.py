"""How a cache gets its vectors: the precision chosen, and the bfloat16 check's fallback.

(Caches made from the packaged vectors: ``test_packaged_vectors.py``; caches through the
index: ``test_title_index.py``.)"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.icd_mapping import vector_cache
from climb_vllm.icd_mapping.title_index import build_or_load
from climb_vllm.icd_mapping.vector_cache import PRECISION_VARIABLE


def test_a_failed_bfloat16_check_falls_back_to_float32(  # type: ignore[no-untyped-def]
    ontology_2021, encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PRECISION_VARIABLE, "bfloat16")
    monkeypatch.setattr(vector_cache, "APPROXIMATION_ERROR", 1e-9)
    built = build_or_load(ontology_2021, ["I10", "E11.9"], encoder, cache=tmp_path, display="none")
    assert built.approximate is None and built.path is not None and built.path.exists()
    meta = json.loads(built.path.with_suffix(".json").read_text())
    assert meta["bfloat16_check"]["max_distance"] > 1e-9


@pytest.mark.parametrize("value", ["fp8", "half"])
def test_an_unknown_precision_is_one_error_naming_the_choices(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PRECISION_VARIABLE, value)
    with pytest.raises(UserError, match="auto, float32, bfloat16, packaged"):
        vector_cache.index_precision()


def test_a_cache_under_its_older_name_is_read_and_reported_as_it_is(  # type: ignore[no-untyped-def]
    ontology_2021, encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PRECISION_VARIABLE, "bfloat16")
    built = build_or_load(ontology_2021, ["I10", "E11.9"], encoder, cache=tmp_path, display="none")
    assert built.path is not None and built.path.name.endswith(".approx.npy")
    # Caches written before packaged vectors existed were named .bf16.npy.
    older = built.path.with_name(built.path.name.replace(".approx.npy", ".bf16.npy"))
    built.path.rename(older)
    again = build_or_load(ontology_2021, ["I10", "E11.9"], None, cache=tmp_path, display="none")
    assert again.path == older and again.approximate is not None
    np.testing.assert_array_equal(again.embeddings, built.embeddings)


def test_vectors_without_bounds_drop_the_bounds_an_earlier_cache_left(  # type: ignore[no-untyped-def]
    ontology_2021, encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codes = ["I10", "E11.9"]
    monkeypatch.setenv(PRECISION_VARIABLE, "packaged")
    packaged = build_or_load(ontology_2021, codes, encoder, cache=tmp_path, display="none")
    assert packaged.path is not None
    bounds = packaged.path.with_suffix(".bounds.npy")
    assert bounds.exists()
    packaged.path.unlink()  # the vectors go, their bounds stay
    monkeypatch.setenv(PRECISION_VARIABLE, "bfloat16")
    rough = build_or_load(ontology_2021, codes, encoder, cache=tmp_path, display="none")
    assert rough.approximate is not None and not bounds.exists()
    assert rough.bounds is not None and (rough.bounds == vector_cache.APPROXIMATION_ERROR).all()
