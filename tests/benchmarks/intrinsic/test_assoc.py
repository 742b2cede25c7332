"""The matrix implementation of the intrinsic metrics against the reference (metrics.py)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from climb_vllm.benchmarks.intrinsic import assoc, metrics
from climb_vllm.resources.names import load_names
from climb_vllm.resources.ontology import load_ontology


@pytest.fixture(scope="module")
def setup() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, list[str], list[str]]:
    """Random records for 600 stratified codes and the 5-per-group name slots."""
    ontology = load_ontology()
    codes = ontology.stratified_subset(600, seed=3)
    slots = pl.DataFrame(
        [
            {"name": s.name, "sex": s.sex, "ethnicity": s.ethnicity, "rank": s.rank}
            for s in load_names().top_k(5)
        ]
    )
    names = slots["name"].unique(maintain_order=True).to_list()
    rng = np.random.default_rng(7)
    # Wide spread (sd 6 nats) so that chapters hold codes hundreds of nats apart in probability.
    records = pl.DataFrame(
        {
            "code": np.repeat(codes, len(names)),
            "name": np.tile(names, len(codes)),
            "logprob": rng.normal(-20, 6, len(codes) * len(names)),
        }
    )
    levels = ontology.table.select("code", *metrics.LEVELS)
    return records, slots, levels, codes, names


def _matrix_tables(
    records: pl.DataFrame,
    slots: pl.DataFrame,
    levels: pl.DataFrame,
    codes: list[str],
    names: list[str],
    resamples: int = 0,
) -> tuple[dict[str, np.ndarray], assoc.NameGroups, np.ndarray]:
    logp = assoc.log_matrix(records, codes, names)
    table = pl.DataFrame({"code": codes}).join(levels, on="code", how="left")
    probabilities = assoc.chapter_probabilities(logp, table["l1"].to_numpy())
    sums = assoc.level_sums(probabilities, {lv: table[lv].to_numpy() for lv in assoc.LEVELS})
    groups = assoc.NameGroups.from_slots(slots, names)
    weights = groups.weights(len(names), resamples, seed=0)
    return assoc.assoc_mad_resamples(sums, weights), groups, probabilities


def test_point_estimates_equal_the_reference(setup) -> None:  # type: ignore[no-untyped-def]
    records, slots, levels, codes, names = setup
    values, _, _ = _matrix_tables(records, slots, levels, codes, names)
    for attribute, groups in (
        ("both", ("sex", "ethnicity")),
        ("sex", ("sex",)),
        ("ethnicity", ("ethnicity",)),
    ):
        reference = metrics.assoc_mad_by_level(records, slots, levels, groups=groups)
        expected = reference["assoc_mad"].to_numpy()[:5]
        np.testing.assert_allclose(values[attribute][:, 0], expected, rtol=1e-9)


def test_sex_preference_equals_the_reference(setup) -> None:  # type: ignore[no-untyped-def]
    records, slots, levels, codes, names = setup
    ontology = load_ontology()
    _, groups, probabilities = _matrix_tables(records, slots, levels, codes, names)
    weights = groups.weights(len(names), 0, 0)
    reference = metrics.sex_preference(
        records, slots, sorted(ontology.female_only), sorted(ontology.male_only)
    )
    for row, own, listed in (
        (0, "FEMALE", ontology.female_only),
        (1, "MALE", ontology.male_only),
    ):
        rows = [i for i, c in enumerate(codes) if c in listed]
        share = assoc.sex_preference_resamples(probabilities, rows, own, weights)[0]
        assert share == pytest.approx(reference["share"][row], abs=1e-12)
        assert len(rows) == reference["codes"][row] > 0


def test_chapter_shift_changes_nothing(setup) -> None:  # type: ignore[no-untyped-def]
    """Adding a constant to every log-prob of one chapter must not move any AssocMAD."""
    records, slots, levels, codes, names = setup
    chapter_of = dict(zip(levels["code"], levels["l1"]))
    shifted = records.with_columns(
        pl.when(pl.col("code").replace_strict(chapter_of) == "2")
        .then(pl.col("logprob") - 800.0)
        .otherwise(pl.col("logprob"))
        .alias("logprob")
    )
    before, _, _ = _matrix_tables(records, slots, levels, codes, names)
    after, _, _ = _matrix_tables(shifted, slots, levels, codes, names)
    np.testing.assert_allclose(after["both"], before["both"], rtol=1e-9)


def test_weights_resample_slots_within_groups() -> None:
    slots = pl.DataFrame(
        {
            "name": ["a", "b", "c", "d", "e", "f", "g", "h"],
            "sex": ["FEMALE"] * 4 + ["MALE"] * 4,
            "ethnicity": ["x", "x", "y", "y"] * 2,
        }
    )
    names = ["a", "b", "c", "d", "e", "f", "g", "h"]
    groups = assoc.NameGroups.from_slots(slots, names)
    weights = groups.weights(len(names), 500, seed=1)
    assert weights.shape == (8, 4, 501)
    np.testing.assert_allclose(weights.sum(axis=0), 1.0)  # every group's weights sum to one
    np.testing.assert_allclose(weights[[0, 1], 0, 0], 0.5)  # resample 0: the point estimate
    # A group's weight stays on its own names, and resamples do differ.
    assert weights[2:, 0, :].sum() == 0
    assert len({tuple(weights[:, 0, b]) for b in range(1, 501)}) == 3  # {aa, ab|ba, bb}


def test_unequal_groups_and_missing_names_are_refused() -> None:
    slots = pl.DataFrame(
        {"name": ["a", "b", "c"], "sex": ["FEMALE", "FEMALE", "MALE"], "ethnicity": ["x"] * 3}
    )
    with pytest.raises(ValueError, match="equal"):
        assoc.NameGroups.from_slots(slots, ["a", "b", "c"])
    with pytest.raises(ValueError, match="no scores"):
        assoc.NameGroups.from_slots(slots, ["a", "b"])


def test_log_matrix_refuses_missing_pairs(setup) -> None:  # type: ignore[no-untyped-def]
    records, _, _, codes, names = setup
    with pytest.raises(ValueError, match="pairs"):
        assoc.log_matrix(records.slice(1), codes, names)


def test_bootstrap_spread_shrinks_with_identical_names() -> None:
    """If every name of a group has the same probabilities, resampling names changes nothing:
    the interval collapses onto the point estimate."""
    rng = np.random.default_rng(0)
    per_group = rng.normal(-10, 1, size=(50, 4))  # 50 codes, 4 groups
    logp = np.repeat(per_group, 2, axis=1)  # each group: two names with identical scores
    slots = pl.DataFrame(
        {
            "name": [f"n{i}" for i in range(8)],
            "sex": ["FEMALE"] * 4 + ["MALE"] * 4,
            "ethnicity": ["x", "x", "y", "y"] * 2,
        }
    )
    groups = assoc.NameGroups.from_slots(slots, [f"n{i}" for i in range(8)])
    probabilities = np.exp(logp)
    sums = assoc.level_sums(probabilities, {"l5": np.arange(50).astype(str)})
    values = assoc.assoc_mad_resamples(sums, groups.weights(8, 200, 0))["both"][0]
    point, low, high = assoc.summarise(values)
    assert low == pytest.approx(point) and high == pytest.approx(point)


def test_pooled_weights_by_slot_and_by_distinct_name() -> None:
    # Two names; groups sex-major: (F, a), (F, b), (M, a), (M, b), one slot each (K = 1).
    # Name 0 fills both female slots, name 1 both male slots.
    weights = np.zeros((3, 4, 1))
    weights[0, 0, 0] = weights[0, 1, 0] = 1.0
    weights[1, 2, 0] = weights[2, 3, 0] = 1.0
    by_slot = assoc.pooled_weights(weights, "ethnicity", "slots")
    by_name = assoc.pooled_weights(weights, "ethnicity", "names")
    np.testing.assert_allclose(by_slot[:, :, 0], [[1.0, 0.0], [0.0, 0.5], [0.0, 0.5]])
    np.testing.assert_allclose(by_name[:, :, 0], [[1.0, 0.0], [0.0, 0.5], [0.0, 0.5]])
    # A name twice in the female pool (slots 2 of 3) weighs 2/3 by slot, 1/2 by name.
    weights = np.zeros((2, 4, 1))
    weights[0, 0, 0] = 0.5
    weights[1, 0, 0] = 0.5
    weights[0, 1, 0] = 1.0
    weights[1, 2, 0] = weights[1, 3, 0] = 1.0
    np.testing.assert_allclose(assoc.pooled_weights(weights, "ethnicity")[:, 0, 0], [0.75, 0.25])
    np.testing.assert_allclose(
        assoc.pooled_weights(weights, "ethnicity", "names")[:, 0, 0], [0.5, 0.5]
    )
    for pooling in assoc.POOLINGS:
        for over in ("ethnicity", "sex"):
            np.testing.assert_allclose(assoc.pooled_weights(weights, over, pooling).sum(0), 1.0)
    with pytest.raises(ValueError, match="pooling"):
        assoc.pooled_weights(weights, "sex", "people")


def _eight_groups(k: int) -> tuple[assoc.NameGroups, list[str]]:
    names = [f"n{i}" for i in range(8 * k)]
    slots = pl.DataFrame(
        {
            "name": names,
            "sex": ["FEMALE"] * (4 * k) + ["MALE"] * (4 * k),
            "ethnicity": [e for e in "abcd" for _ in range(k)] * 2,
        }
    )
    return assoc.NameGroups.from_slots(slots, names), names


def test_permuted_weights_deal_every_slot_once_and_equal_a_brute_force_null() -> None:
    """Each permutation gives every group K slots; AssocMAD under it equals a plain loop that
    deals the names in the same order and averages |s / mu - 1| code by code."""
    groups, names = _eight_groups(3)
    orders = groups.permutations(25, seed=4)
    weights = groups.permuted_weights(len(names), orders)
    np.testing.assert_allclose(weights.sum(axis=0), 1.0)
    np.testing.assert_allclose(weights.sum(axis=(1, 2)), 25.0 / 3)  # each name in one group
    rng = np.random.default_rng(2)
    probabilities = np.exp(rng.normal(-8, 1.5, size=(40, len(names))))
    sums = assoc.level_sums(probabilities, {"l5": np.arange(40).astype(str)})
    fast = assoc.assoc_mad_resamples(sums, weights)["both"][0]
    slot_columns = [c for cols in groups.columns for c in cols]
    for p, order in enumerate(orders):
        dealt = [slot_columns[i] for i in order]
        per_code = []
        for row in probabilities:
            scores = [np.mean([row[c] for c in dealt[g * 3 : g * 3 + 3]]) for g in range(8)]
            mu = np.mean(scores)
            per_code.append(np.mean([abs(s / mu - 1) for s in scores]))
        assert fast[p] == pytest.approx(np.mean(per_code), rel=1e-9)


def test_names_alone_null_is_uniform_without_groups_and_small_with_them() -> None:
    """With exchangeable names the permutation p-value is uniform: over 200 seeded replications
    P(p <= 0.05) stays near 5%; a real group effect gives p at the smallest value possible."""
    from climb_vllm.benchmarks.intrinsic.results import null_frame

    groups, names = _eight_groups(5)
    rng = np.random.default_rng(7)
    orders = groups.permutations(199, seed=1)
    weights = groups.permuted_weights(len(names), orders)
    point = groups.weights(len(names), 0, 0)
    ids = {"l5": np.arange(30).astype(str)}
    rejections = 0
    replications = 200
    for _ in range(replications):
        name_effects = rng.normal(0, 1.0, len(names))
        logp = rng.normal(-8, 0.5, (30, 1)) + name_effects + rng.normal(0, 0.5, (30, len(names)))
        sums = assoc.level_sums(np.exp(logp), ids)
        observed = {"both": np.vstack([assoc.assoc_mad_resamples(sums, point)["both"]] * 6)}
        null = {"both": np.vstack([assoc.assoc_mad_resamples(sums, weights)["both"]] * 6)}
        p_value = null_frame(observed, null)["p_value"][0]
        rejections += p_value <= 0.05
    # Binomial(200, 0.05): mean 10, sd 3.1; the bounds are about 2.5 sd either side.
    assert 2 <= rejections <= 18, rejections
    # Group effects of several nats on every code: every permutation falls below the estimate.
    shift = np.repeat(np.array([4.0, 0, -3, 0, 2, 0, -4, 1]), 5)
    sums = assoc.level_sums(np.exp(logp + shift), ids)
    observed = {"both": np.vstack([assoc.assoc_mad_resamples(sums, point)["both"]] * 6)}
    null = {"both": np.vstack([assoc.assoc_mad_resamples(sums, weights)["both"]] * 6)}
    frame = null_frame(observed, null)
    assert frame["p_value"][0] == pytest.approx(1 / 200)
    assert frame["verdict"][0] == "more than names alone"
