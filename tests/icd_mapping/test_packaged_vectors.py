"""The packaged 8-bit vectors: storage, lookup, the file shipped, and caches built from it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from climb_vllm.icd_mapping import packaged_vectors, vector_cache
from climb_vllm.icd_mapping.packaged_vectors import (
    dequantize,
    digests,
    load,
    quantize,
    write,
)
from climb_vllm.icd_mapping.title_index import build_or_load, other_names
from climb_vllm.icd_mapping.vector_cache import (
    APPROXIMATION_ERROR,
    PRECISION_VARIABLE,
    VERIFY_SHARE,
)
from climb_vllm.resources.encoder import encoder_fingerprint

LIMIT = APPROXIMATION_ERROR * VERIFY_SHARE


def _units(rows: int, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(rows, 384)).astype(np.float32)
    return np.asarray(vectors / np.linalg.norm(vectors, axis=1, keepdims=True), np.float32)


def test_eight_bits_keep_unit_vectors_close_and_zero_rows_zero() -> None:
    vectors = _units(500)
    codes, scales = quantize(vectors)
    assert codes.dtype == np.int8 and np.abs(codes).max() == 127
    back = dequantize(codes, scales)
    np.testing.assert_allclose(np.linalg.norm(back, axis=1), 1.0, atol=1e-5)
    distance = np.linalg.norm(back - vectors, axis=1)
    assert 0 < distance.max() < LIMIT
    zero = np.zeros((1, 384), np.float32)
    assert not dequantize(*quantize(zero)).any()


def test_written_rows_are_found_by_text_once_each(tmp_path: Path) -> None:
    texts = ["Essential (primary) hypertension", "Asthma", "Asthma", "Gout"]
    vectors = _units(4)
    vectors[2] = vectors[1]  # a repeated text has one vector
    facts = write(texts, vectors, {"encoder": "e:1"}, tmp_path, LIMIT)
    assert facts["rows"] == 3 and 0 < facts["max_distance"] <= LIMIT
    stored = load("e:1", tmp_path)
    assert stored is not None and stored.facts["encoder"] == "e:1"
    found_vectors, found, distances = stored.lookup(
        ["Gout", "gout", "Asthma", "Essential (primary) hypertension"]
    )
    assert found.tolist() == [True, False, True, True]  # the digest is of the exact text
    assert not found_vectors[1].any() and distances[1] == 0
    for row, text in ((0, "Gout"), (2, "Asthma"), (3, "Essential (primary) hypertension")):
        distance = np.linalg.norm(found_vectors[row] - vectors[texts.index(text)])
        # The stored distance is the row's own, never below it (its bound in the searches).
        assert distance <= distances[row] <= distance + 1e-6
    assert distances.max() == pytest.approx(facts["max_distance"], abs=1e-6)
    assert load("another encoder:2", tmp_path) is None
    assert load("e:1", tmp_path / "absent") is None


def test_a_row_farther_than_the_limit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="limit"):
        write(["a", "b"], _units(2), {"encoder": "e"}, tmp_path, 1e-6)
    assert not (tmp_path / packaged_vectors.VECTORS).exists()


def test_digests_are_stable_and_distinct() -> None:
    keys = digests(["I10", "I10", "i10", ""])
    assert keys.dtype == np.uint64
    assert keys[0] == keys[1] and len(set(keys.tolist())) == 3
    # Stable across runs and machines: a fixed value, not Python's salted hash().
    expected = hashlib.blake2b(b"Asthma", digest_size=8).digest()
    assert int(digests(["Asthma"])[0]) == int.from_bytes(expected, "little")


def test_the_shipped_file_holds_the_2021_names_within_the_bound(  # type: ignore[no-untyped-def]
    ontology_2021, encoder
) -> None:
    stored = load(encoder_fingerprint())
    assert stored is not None, "the packaged vectors are missing or from another encoder"
    assert stored.facts["release_sha256"] == ontology_2021.sha256
    assert 0 < stored.facts["max_distance"] <= LIMIT
    titles = ontology_2021.table["description"].to_list()
    _, names = other_names(ontology_2021, ontology_2021.codes)
    every = titles + names
    assert stored.facts["rows"] == len(stored.keys)
    # Every title; names added after the file was written are embedded when a cache is built,
    # so a few may be missing, but a file that lacks many no longer saves a first run's time.
    assert stored.lookup(titles)[1].all()
    assert stored.lookup(names)[1].mean() >= 0.95
    # Checked here, on this machine's encoder: a sample of rows of both kinds.
    rng = np.random.default_rng(1)
    sample = [every[i] for i in rng.choice(len(every), 200, replace=False)]
    vectors, _, distances = stored.lookup(sample)
    distance = np.linalg.norm(vectors - encoder.encode(sample), axis=1)
    assert distance.max() <= LIMIT
    # Each row within its own bound on this machine too, with room to spare.
    assert (distance <= distances + packaged_vectors.DRIFT / 2).all()


def _titles(ontology, codes: list[str]) -> list[str]:  # type: ignore[no-untyped-def]
    title = dict(zip(ontology.table["code"].to_list(), ontology.table["description"].to_list()))
    return [title[c] for c in codes]


def _package_of(texts: list[str], encoder, folder: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A package holding only ``texts``, put where build_or_load looks."""
    write(texts, encoder.encode(texts), {"encoder": encoder_fingerprint()}, folder, LIMIT)
    real = packaged_vectors.load
    monkeypatch.setattr(packaged_vectors, "load", lambda fingerprint: real(fingerprint, folder))


def test_a_cache_takes_the_packaged_rows_and_embeds_the_rest(  # type: ignore[no-untyped-def]
    ontology_2021, encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codes = [c for c in ontology_2021.codes if c.startswith(("I2", "I5", "J4"))]
    titles = _titles(ontology_2021, codes)
    _package_of(titles[:150], encoder, tmp_path / "package", monkeypatch)
    monkeypatch.delenv(PRECISION_VARIABLE, raising=False)  # auto: packaged
    monkeypatch.setattr(vector_cache, "native_precision", lambda: "float32")
    built = build_or_load(ontology_2021, codes, encoder, cache=tmp_path / "c", display="none")
    assert built.approximate is not None and built.path is not None
    assert built.path.name.endswith(".approx.npy")
    facts = json.loads(built.path.with_suffix(".json").read_text())["packaged"]
    held = set(titles[:150])
    assert facts["rows"] == sum(t in held for t in titles) >= 150
    assert facts["embedded_here"] > 50
    assert facts["rows"] + facts["embedded_here"] == len(codes)
    assert 0 < facts["check"]["max_distance"] <= LIMIT
    exact = build_or_load(
        ontology_2021, codes, encoder, cache=tmp_path / "f", display="none", precision="float32"
    )
    queries = encoder.encode(["heart attack", "asthma flare", "CHF", "angina", "copd"])
    for k in (1, 5):
        rows, exact_rows = built.search(queries, k)[1], exact.search(queries, k)[1]
        np.testing.assert_array_equal(rows, exact_rows)
    assert built.rescorer.embedded > 0
    # Packaged rows carry their own bounds; rows embedded here in float32 need none.
    assert built.bounds is not None
    packaged_rows = np.array([t in held for t in titles])
    assert (built.bounds[packaged_rows] >= packaged_vectors.DRIFT).all()
    assert (built.bounds[packaged_rows] < LIMIT).all() and built.bounds[packaged_rows].std() > 0
    assert (built.bounds[~packaged_rows] == 0).all()
    # A later run reads the bounds back with the vectors.
    again = build_or_load(ontology_2021, codes, encoder, cache=tmp_path / "c", display="none")
    np.testing.assert_array_equal(again.bounds, built.bounds)


def test_a_package_that_fails_its_check_or_holds_nothing_is_not_used(  # type: ignore[no-untyped-def]
    ontology_2021, encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codes = ["I10", "E11.9", "J18.9"]
    monkeypatch.setattr(vector_cache, "native_precision", lambda: "float32")
    # Rows far from this machine's vectors (as another encoder would give): not used.
    texts = _titles(ontology_2021, codes)
    folder = tmp_path / "package"
    write(texts, _units(3), {"encoder": encoder_fingerprint()}, folder, 2.0)
    real = packaged_vectors.load
    monkeypatch.setattr(packaged_vectors, "load", lambda fingerprint: real(fingerprint, folder))
    built = build_or_load(
        ontology_2021, codes, encoder, cache=tmp_path / "a", display="none", precision="packaged"
    )
    assert built.approximate is None  # embedded here in float32 instead
    np.testing.assert_allclose(built.embeddings, encoder.encode(texts), atol=1e-5)
    # A package holding none of the texts: the same.
    write(
        ["something else"],
        encoder.encode(["something else"]),
        {"encoder": encoder_fingerprint()},
        folder,
        LIMIT,
    )
    built = build_or_load(
        ontology_2021, codes, encoder, cache=tmp_path / "b", display="none", precision="packaged"
    )
    assert built.approximate is None
