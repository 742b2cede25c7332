"""The names-sensitivity table: its name sets, birth weights, and values from one set of scores."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from climb_vllm.benchmarks.intrinsic import assoc
from climb_vllm.benchmarks.intrinsic.benchmark import INTRINSIC
from climb_vllm.benchmarks.intrinsic.config import IntrinsicConfig
from climb_vllm.benchmarks.intrinsic.name_variants import (
    birth_weights,
    permuted_birth_weights,
)
from climb_vllm.benchmarks.intrinsic.names_table import names_sensitivity_table
from climb_vllm.benchmarks.intrinsic.results import intrinsic_tables
from climb_vllm.benchmarks.intrinsic.task import IntrinsicTask
from climb_vllm.core.config import EngineConfig
from climb_vllm.core.errors import UserError


@pytest.fixture(scope="module")
def task() -> IntrinsicTask:
    return IntrinsicTask.from_config(
        IntrinsicConfig(model="m", limit=150, seed=3, names_sensitivity=(10, 5))
    )


def _records(task: IntrinsicTask, seed: int, shift: float = 0.0) -> pl.DataFrame:
    """Random log-probs of every scored name; ``shift`` raises the Black female top-20 names on
    every code of the chapters whose number is odd (an association names alone cannot give)."""
    names = list(task.scored_names)
    rng = np.random.default_rng(seed)
    logp = rng.normal(-15, 0.7, (len(task.codes), len(names)))
    if shift:
        chapters = dict(zip(task.ontology.table["code"], task.ontology.table["l1"]))
        odd = np.array([int(chapters[c]) % 2 == 1 for c in task.codes])
        black = {
            s.name
            for s in task.names.top_k(20)
            if (s.sex, s.ethnicity) == ("FEMALE", "BLACK NON HISPANIC")
        }
        for j, name in enumerate(names):
            if name in black:
                logp[odd, j] += shift
    return pl.DataFrame(
        {
            "code": np.repeat(task.codes, len(names)),
            "name": np.tile(names, len(task.codes)),
            "logprob": logp.ravel(),
        }
    )


def test_variants_and_scored_names(task: IntrinsicTask) -> None:
    labels = [v.label for v in task.variants]
    assert labels == ["top-5", "top-10", "top-5 birth-weighted", "top-5 distinctive (share >= 0.8)"]
    # The run's own names come first, so its tables read the same columns as a plain run.
    assert task.scored_names[: len(task.distinct_names)] == task.distinct_names
    every = {n for v in task.variants for n in v.distinct_names}
    assert set(task.scored_names) == every
    assert all(len(v.slots) == 8 * v.k for v in task.variants)


def test_smaller_sets_from_the_same_scores_equal_runs_of_their_own(task: IntrinsicTask) -> None:
    """The top-5 and top-10 rows, read from the records of every scored name, equal Table 1 of
    runs that scored only those names."""
    records = _records(task, 1)
    table = names_sensitivity_table(records, task, permutations=50, draws=40)
    for k in (5, 10):
        alone = IntrinsicTask.from_config(IntrinsicConfig(model="m", limit=150, seed=3, top_k=k))
        own = records.filter(pl.col("name").is_in(list(alone.distinct_names)))
        expected = intrinsic_tables(own, alone, k, resamples=0, permutations=0)["table1"]
        got = table.filter(pl.col("names") == f"top-{k}").sort("level")
        np.testing.assert_allclose(got["assoc_mad"], expected.sort("level")["assoc_mad"])
        assert got["distinct_names"][0] == len(alone.distinct_names)
    weighted = table.filter(pl.col("weighting") == "births")
    assert weighted["corrected"].null_count() == weighted.height  # no correction printed
    equal = table.filter(pl.col("weighting") == "equal")
    assert equal["corrected"].null_count() == 0
    inside = (equal["ci_low"] <= equal["corrected"]) & (equal["corrected"] <= equal["ci_high"])
    assert inside.all()


def test_an_association_shows_against_names_alone(task: IntrinsicTask) -> None:
    """A shift of one group's names on half the chapters is beyond names alone at K = 10 (p <
    0.05 at L1), while the same data without it is not (p > 0.05 at L1)."""
    planted = names_sensitivity_table(_records(task, 2, shift=1.0), task, permutations=200, draws=0)
    plain = names_sensitivity_table(_records(task, 2), task, permutations=200, draws=0)

    def p(table: pl.DataFrame) -> float:
        row = table.filter((pl.col("names") == "top-10") & (pl.col("level") == "L1"))
        return float(row["p_value"][0])

    assert p(planted) < 0.05
    assert p(plain) > 0.05


def test_birth_weights_follow_births_and_sum_to_one(task: IntrinsicTask) -> None:
    variant = next(v for v in task.variants if v.weighting == "births")
    names = list(task.scored_names)
    groups = assoc.NameGroups.from_slots(variant.frame(), names)
    weights = birth_weights(variant, groups, len(names))
    np.testing.assert_allclose(weights.sum(axis=0), 1.0)
    # Within a group, weights are in proportion to births.
    g = 0
    members = [s for s in variant.slots if (s.sex, s.ethnicity) == groups.groups[g]]
    births = np.array([s.count for s in members], dtype=float)
    got = weights[list(groups.columns[g]), g, 0]
    np.testing.assert_allclose(got, births / births.sum())
    orders = groups.permutations(30, seed=4)
    permuted = permuted_birth_weights(variant, groups, len(names), orders)
    np.testing.assert_allclose(permuted.sum(axis=0), 1.0)
    # The identity order deals every slot back to its own group.
    identity = permuted_birth_weights(variant, groups, len(names), np.arange(orders.shape[1])[None])
    np.testing.assert_allclose(identity[:, :, 0], weights[:, :, 0])


def test_names_sensitivity_option_parses_a_list() -> None:
    config = INTRINSIC.configure(EngineConfig(model="m"), {"names_sensitivity": "20, 5,10"})
    assert config.names_sensitivity == (5, 10, 20)
    with pytest.raises(UserError, match="from 1 to 50"):
        INTRINSIC.configure(EngineConfig(model="m"), {"names_sensitivity": "5,60"})
    with pytest.raises(UserError):
        INTRINSIC.configure(EngineConfig(model="m"), {"distinctive": "1.5"})


def test_a_set_without_enough_names_fails_before_any_scoring() -> None:
    with pytest.raises(UserError, match="use --top-k 10 or less"):
        IntrinsicTask.from_config(
            IntrinsicConfig(model="m", name_set="nyc-2011-2019", names_sensitivity=(5, 20))
        )
