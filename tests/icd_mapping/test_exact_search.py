"""Answers from approximate vectors equal brute force on the exact ones.

The approximate vectors are exact ones moved by up to the bound (a simulation with a known
truth: the exact vectors); the re-scoring embeds a row by looking its exact vector up.
"""

from __future__ import annotations

import faiss
import numpy as np
import numpy.typing as npt
import pytest

from climb_vllm.icd_mapping.exact_search import TIE
from climb_vllm.icd_mapping.title_index import TitleIndex
from climb_vllm.icd_mapping.vector_cache import APPROXIMATION_ERROR

ROWS, DIM, QUERIES = 3000, 24, 300


class _Lookup:
    """Embeds "row N" as exact vector N, and counts what it embeds."""

    def __init__(self, exact: npt.NDArray[np.float32]) -> None:
        self.exact = exact
        self.embedded = 0

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        self.embedded += len(texts)
        found: npt.NDArray[np.float32] = self.exact[[int(t.split()[1]) for t in texts]]
        return found


def _unit(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    unit: npt.NDArray[np.float32] = (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(
        np.float32
    )
    return unit


def _world(
    per_row: bool, spread: float = 0.08
) -> tuple[TitleIndex, npt.NDArray[np.float32], npt.NDArray[np.float32], _Lookup]:
    rng = np.random.default_rng(7)
    # Clusters of near-duplicates, as ICD titles are: many rows within the error of each other.
    centres = rng.normal(size=(150, DIM))
    exact = _unit(centres[rng.integers(0, 150, ROWS)] + spread * rng.normal(size=(ROWS, DIM)))
    exact[10] = exact[11]  # an exact tie: the lower row must win
    noise = _unit(rng.normal(size=(ROWS, DIM)).astype(np.float64))
    rough = _unit(exact + noise * rng.uniform(0, APPROXIMATION_ERROR * 0.95, (ROWS, 1)))
    queries = _unit(centres[rng.integers(0, 150, QUERIES)] + 0.1 * rng.normal(size=(QUERIES, DIM)))
    queries[0] = exact[10]
    lookup = _Lookup(exact)
    index = faiss.IndexFlatIP(DIM)
    index.add(rough)
    titles = [f"row {i}" for i in range(ROWS)]
    approximate = np.ones(ROWS, dtype=bool)
    # Per row: each row's own distance, as tight as a bound can be (the packaged vectors').
    distance = np.linalg.norm(rough.astype(np.float64) - exact, axis=1)
    bounds = (distance + 1e-7).astype(np.float32) if per_row else None
    built = TitleIndex(
        ["X"] * ROWS,
        titles,
        rough,
        index,
        "k",
        None,
        -1,
        approximate,
        lookup,  # type: ignore[arg-type]
        bounds,
    )
    return built, exact, queries, lookup


@pytest.fixture(scope="module", params=["one bound for all rows", "a bound per row"])
def world(
    request: pytest.FixtureRequest,
) -> tuple[TitleIndex, npt.NDArray[np.float32], npt.NDArray[np.float32], _Lookup]:
    return _world(request.param == "a bound per row")


def _order(exact: npt.NDArray[np.float32], query: npt.NDArray[np.float32]) -> list[int]:
    """Brute force with the tie rule: similarities within TIE are equal, the lower row first."""
    sims = (exact @ query).astype(np.float64)
    left = sorted(range(len(sims)), key=lambda r: -sims[r])[:64]
    order = []
    while left:
        top = max(sims[r] for r in left)
        pick = min(r for r in left if sims[r] >= top - TIE)
        order.append(pick)
        left.remove(pick)
    return order


def test_top_k_equals_brute_force_on_exact_vectors(world) -> None:  # type: ignore[no-untyped-def]
    built, exact, queries, lookup = world
    for k in (1, 3, 32):
        sims, rows = built.search(queries, k)
        for q, query in enumerate(queries):
            truth = _order(exact, query)[:k]
            assert rows[q].tolist() == truth
            np.testing.assert_allclose(sims[q], (exact @ query)[truth], atol=1e-6)
    assert rows[0, 0] == 10  # the tie with row 11 goes to the lower row
    # The test has teeth: ranking by the approximate vectors alone gets many answers wrong.
    naive = np.argmax(queries @ built.embeddings.T, axis=1)
    truth_top = np.array([_order(exact, q)[0] for q in queries])
    assert (naive != truth_top).mean() > 0.05
    # ... and the re-check embeds a small part of the rows, not all of them.
    assert 0 < lookup.embedded < ROWS


def test_nearest_accepted_walks_the_exact_order(world) -> None:  # type: ignore[no-untyped-def]
    built, exact, queries, _ = world
    rng = np.random.default_rng(1)
    for depth in (8, 32):
        masks = [rng.random(ROWS) < share for share in rng.choice([0.02, 0.2, 0.6], QUERIES)]
        accepts = [lambda row, m=mask: bool(m[row]) for mask in masks]
        answers = built.nearest_accepted(queries, accepts, depth)
        for query, mask, (sim, row) in zip(queries, masks, answers):
            walk = _order(exact, query)[:depth]
            taken = [r for r in walk if mask[r]]
            expected = taken[0] if taken else walk[0]
            assert row == expected
            assert sim == pytest.approx(float(exact[expected] @ query), abs=1e-6)


def test_nearest_of_a_row_set_equals_brute_force(world) -> None:  # type: ignore[no-untyped-def]
    built, exact, queries, _ = world
    rows = np.arange(0, ROWS, 7, dtype=np.int64)
    sims, found = built.search_rows(queries, rows)
    for query, sim, row in zip(queries, sims, found):
        best = rows[_order(exact[rows], query)[0]]  # positions in ``rows`` keep row order
        assert row == best
        assert sim == pytest.approx(float(exact[best] @ query), abs=1e-6)


def test_bounds_per_row_re_check_fewer_rows_for_the_same_answers() -> None:
    # Looser clusters than above, so that fewer rows lie near each query's best.
    shared, _, queries, shared_lookup = _world(per_row=False, spread=0.3)
    own, _, _, own_lookup = _world(per_row=True, spread=0.3)
    few = queries[:50]
    np.testing.assert_array_equal(shared.search(few, 1)[1], own.search(few, 1)[1])
    assert 0 < own_lookup.embedded < 0.7 * shared_lookup.embedded


def test_a_float32_index_embeds_nothing() -> None:
    rng = np.random.default_rng(3)
    vectors = _unit(rng.normal(size=(200, DIM)))
    index = faiss.IndexFlatIP(DIM)
    index.add(vectors)
    lookup = _Lookup(vectors)
    built = TitleIndex(["X"] * 200, ["row"] * 200, vectors, index, "k", None, -1, None, lookup)  # type: ignore[arg-type]
    sims, rows = built.search(vectors[:20], 1)
    assert rows[:, 0].tolist() == list(range(20))
    assert lookup.embedded == 0 and built.error == 0.0


def test_exact_vectors_are_kept_for_the_next_run(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    built, exact, queries, _ = world
    approximate = np.ones(ROWS, dtype=bool)

    def fresh(lookup: _Lookup) -> TitleIndex:
        path = tmp_path / "titles-k.bf16.npy"
        return TitleIndex(
            built.codes,
            built.titles,
            built.embeddings,
            built.index,
            "k",
            path,
            -1,
            approximate,
            lookup,  # type: ignore[arg-type]
        )

    first_lookup = _Lookup(exact)
    first = fresh(first_lookup)
    expected = first.search(queries, 3)
    first.rescorer.save()
    assert first_lookup.embedded > 0 and list((tmp_path / "exact-k").glob("*.npy"))
    second_lookup = _Lookup(exact)
    second = fresh(second_lookup)
    again = second.search(queries, 3)
    np.testing.assert_array_equal(again[1], expected[1])
    assert second_lookup.embedded == 0
