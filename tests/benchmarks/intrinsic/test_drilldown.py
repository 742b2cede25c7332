"""The drill-down by group: contrasts against a plain-Python computation, the interval's
coverage by simulation with a known truth, and the ranked tables on a planted association."""

from __future__ import annotations

import math
import statistics

import numpy as np
import polars as pl
import pytest
from scipy import stats

from climb_vllm.benchmarks.intrinsic import drilldown
from climb_vllm.benchmarks.intrinsic.assoc import NameGroups

GROUPS = 8


def _groups(k: int) -> NameGroups:
    labels = tuple((sex, eth) for sex in ("FEMALE", "MALE") for eth in ("A", "B", "C", "D"))
    return NameGroups(labels, tuple(tuple(range(g * k, (g + 1) * k)) for g in range(GROUPS)))


def test_contrasts_match_a_plain_computation() -> None:
    rng = np.random.default_rng(3)
    k = 4
    logp = rng.normal(-8, 2, (6, GROUPS * k))
    estimate, error, freedom = drilldown.contrasts(logp, _groups(k))
    low, high, p = drilldown.interval(estimate, error, freedom)
    for c in range(6):
        for g in range(GROUPS):
            lists = [list(logp[c, h * k : (h + 1) * k]) for h in range(GROUPS)]
            means = [statistics.fmean(x) for x in lists]
            others = [means[h] for h in range(GROUPS) if h != g]
            assert estimate[c, g] == pytest.approx(means[g] - statistics.fmean(others))
            pooled = statistics.fmean(statistics.variance(x) for x in lists)
            se = math.sqrt(pooled / k + pooled / k / (GROUPS - 1))
            df = GROUPS * (k - 1)
            assert error[c, g] == pytest.approx(se)
            assert freedom[c, g] == df
            half = stats.t.ppf(0.975, df) * se
            assert (low[c, g], high[c, g]) == pytest.approx(
                (estimate[c, g] - half, estimate[c, g] + half)
            )
            t = abs(estimate[c, g]) / se
            assert p[c, g] == pytest.approx(2 * stats.t.sf(t, df))


def test_null_p_values_are_uniform_in_the_tails() -> None:
    """With no association, p falls below 0.05, 0.01 and 0.001 at those rates (normal names):
    what q-values over tens of thousands of codes rely on."""
    rng = np.random.default_rng(2)
    logp = rng.normal(0, 1, (20_000, GROUPS * 5))
    _, _, p = drilldown.interval(*drilldown.contrasts(logp, _groups(5)))
    for level in (0.05, 0.01, 0.001):
        assert abs((p < level).mean() - level) < 0.2 * level + 1e-4


def test_one_name_per_group_has_no_interval() -> None:
    logp = np.random.default_rng(0).normal(size=(3, GROUPS))
    estimate, error, freedom = drilldown.contrasts(logp, _groups(1))
    assert np.isfinite(estimate).all() and np.isnan(error).all() and np.isnan(freedom).all()


def _coverage(deviations: str, effect: float, rng: np.random.Generator) -> float:
    """Share of 95% intervals covering the population's centred contrast: populations of 300
    names per group, five drawn without replacement per group, 100 replications x 400 codes."""
    k, population, codes, replications = 5, 300, 400, 100
    mu = rng.normal(0, effect, (codes, GROUPS))
    shared = rng.normal(0, 1.5, (GROUPS, population))  # what a name brings to every code
    if deviations == "normal":
        noise = rng.normal(0, 0.5, (codes, GROUPS, population))
    else:
        noise = rng.standard_t(3, (codes, GROUPS, population)) * 0.4
    names = mu[:, :, None] + shared[None] + noise
    centred = names - names.mean(axis=0, keepdims=True)
    means = centred.mean(axis=2)
    truth = means - (means.sum(axis=1, keepdims=True) - means) / (GROUPS - 1)
    groups = _groups(k)
    covered = []
    for _ in range(replications):
        pick = np.argsort(rng.random((GROUPS, population)), axis=1)[:, :k]
        sample = np.concatenate([names[:, g, pick[g]] for g in range(GROUPS)], axis=1)
        sample = sample - sample.mean(axis=0, keepdims=True)
        low, high, _ = drilldown.interval(*drilldown.contrasts(sample, groups))
        covered.append(((low <= truth) & (truth <= high)).mean())
    return float(np.mean(covered))


@pytest.mark.parametrize("deviations", ["normal", "t3"])
@pytest.mark.parametrize("effect", [0.0, 0.3, 1.0])
def test_drilldown_interval_coverage(deviations: str, effect: float) -> None:
    coverage = _coverage(deviations, effect, np.random.default_rng(11))
    assert 0.92 <= coverage <= 0.98


def test_drilldown_ranks_a_planted_association_first() -> None:
    rng = np.random.default_rng(5)
    k, codes = 5, 200
    logp = rng.normal(-9, 0.3, (codes, GROUPS * k)) + rng.normal(0, 2, GROUPS * k)
    logp[7, 2 * k : 3 * k] += 3.0  # code 7 favours group 2's names (FEMALE / C)
    neutral = np.ones(codes, dtype=bool)
    neutral[0] = False  # a sex-specific code is not ranked
    labels = [f"X{i:03d}" for i in range(codes)]
    descriptions = pl.DataFrame(
        {"code": labels, "description": [f"disease {i}" for i in range(codes)], "l1": ["9"] * codes}
    )
    full = drilldown.drilldown(logp, labels, _groups(k), descriptions, neutral)
    assert full.height == GROUPS * (codes - 1) and "X000" not in full["code"].to_list()
    first = full.filter((pl.col("sex") == "FEMALE") & (pl.col("ethnicity") == "C")).row(
        0, named=True
    )
    assert first["code"] == "X007" and first["rank"] == 1 and first["q"] < 0.01
    assert first["ci_low"] <= first["ratio"] <= first["ci_high"] and first["ratio"] > 10
    assert first["description"] == "disease 7" and first["chapter"].startswith("9")
    # Every interval holds its estimate; q is never below p.
    assert full.filter(~pl.col("ratio").is_between("ci_low", "ci_high")).height == 0
    assert (full["q"] >= full["p"] - 1e-12).all()
    # Other codes are no association (q near 1 for most of them).
    assert full.filter(pl.col("q") < 0.05)["code"].unique().to_list() == ["X007"]
    top = drilldown.top_and_bottom(full, top=3)
    assert top.height == GROUPS * 6
    group = top.filter((pl.col("sex") == "FEMALE") & (pl.col("ethnicity") == "C"))
    assert group["direction"].to_list() == ["most"] * 3 + ["least"] * 3
    assert group["rank"].to_list() == [1, 2, 3, 1, 2, 3]
    least = group.filter(pl.col("direction") == "least")["ratio"].to_list()
    assert (
        least[0]
        == full.filter((pl.col("sex") == "FEMALE") & (pl.col("ethnicity") == "C"))["ratio"].min()
    )
