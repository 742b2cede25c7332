"""Bootstrap intervals: coverage of the estimate, determinism, the exact 0/1 shortcut."""

from __future__ import annotations

import math

import numpy as np

from climb_vllm.core.resampling import difference_interval, mean_interval, statistic_interval


def test_mean_interval_brackets_the_mean_and_repeats() -> None:
    values = np.random.default_rng(0).normal(5.0, 1.0, 400)
    low, high = mean_interval(values)
    assert low < values.mean() < high
    assert high - low == np.float64(high - low)
    assert 0.1 < high - low < 0.3  # about 2 * 1.96 / sqrt(400)
    assert mean_interval(values) == (low, high)


def test_binary_shortcut_agrees_with_resampling() -> None:
    values = np.r_[np.ones(300), np.zeros(700)]
    low, high = mean_interval(values)
    general = statistic_interval(values.size, lambda idx: float(values[idx].mean()))
    assert abs(low - general[0]) < 0.01 and abs(high - general[1]) < 0.01
    assert low < 0.3 < high


def test_few_values_shortcut_agrees_with_resampling_units() -> None:
    # Paired changes of per-item shares (-1, -0.5, 0, 0.5, 1): resampled by value counts.
    rng = np.random.default_rng(3)
    values = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], 2_000, p=[0.1, 0.1, 0.5, 0.1, 0.2])
    low, high = mean_interval(values)
    general = statistic_interval(values.size, lambda idx: float(values[idx].mean()))
    assert abs(low - general[0]) < 0.01 and abs(high - general[1]) < 0.01
    assert low < values.mean() < high
    spread = np.random.default_rng(4).normal(0, 1, 200)  # many values: resampled by unit
    assert mean_interval(spread)[0] < spread.mean() < mean_interval(spread)[1]


def test_difference_and_empty() -> None:
    low, high = difference_interval(np.ones(100), np.zeros(100))
    assert low == high == 1.0
    assert all(math.isnan(v) for v in mean_interval([]))
    assert all(math.isnan(v) for v in difference_interval([], [1.0]))


def test_sign_flip_p_detects_a_consistent_paired_change() -> None:
    import numpy as np

    from climb_vllm.core.resampling import sign_flip_p

    # 12 units all lose one hit of 10 gold: only the all-negative flip (and its mirror) is as
    # extreme, so p is about 2 / 4096.
    consistent = np.full((12, 1), -1.0)
    assert sign_flip_p(consistent, np.array([10.0])) < 0.002
    # Changes that cancel out: p = 1.
    mixed = np.array([[1.0], [-1.0]] * 6)
    assert sign_flip_p(mixed, np.array([10.0])) == 1.0
    assert np.isnan(sign_flip_p(np.zeros((0, 1)), np.array([1.0])))


def test_resample_weights_draw_each_resample_of_full_size() -> None:
    from climb_vllm.core.resampling import resample_weights

    weights = resample_weights(7, resamples=50, seed=3)
    assert weights.shape == (50, 7)
    assert (weights.sum(axis=1) == 7).all()


# -- coverage by simulation: each interval type against a known population value -----------
#
# Each test draws many data sets from a population whose value is known, computes the 95%
# interval exactly as the benchmarks do, and counts how often it covers that value. 400 seeded
# replications: a true 95% shows 92-98% unless the method is off (the binomial standard error
# of the count is 1.1 points).

REPLICATIONS = 400


def _assert_coverage(covered: int, label: str) -> None:
    share = covered / REPLICATIONS
    assert 0.92 <= share <= 0.98, f"{label}: {share:.3f}"


def test_accuracy_rate_interval_coverage() -> None:
    """BiasMD / DiseaseMatcher accuracy (0/1 per item, 150 items)."""
    rng = np.random.default_rng(11)
    truth = 0.3
    covered = 0
    for k in range(REPLICATIONS):
        values = (rng.random(150) < truth).astype(float)
        low, high = mean_interval(values, seed=k)
        covered += low <= truth <= high
    _assert_coverage(covered, "accuracy")


def test_paired_item_change_interval_coverage() -> None:
    """The report's paired comparison of two runs: per item, the change of its graded share
    (one sample each: -1, 0 or +1), 120 items. (On a skewed continuous mean, a standard
    lognormal with 200 values, the same percentile interval covers only about 90%: it is used
    on bounded per-item values only.)"""
    rng = np.random.default_rng(12)
    truth = 0.2 - 0.1
    covered = 0
    for k in range(REPLICATIONS):
        draws = rng.random(120)
        change = np.where(draws < 0.2, 1.0, np.where(draws < 0.3, -1.0, 0.0))
        low, high = mean_interval(change, seed=k)
        covered += low <= truth <= high
    _assert_coverage(covered, "paired item change")


def test_accuracy_gap_interval_coverage() -> None:
    """DiseaseMatcher's gap between two groups of items (accuracy difference)."""
    rng = np.random.default_rng(13)
    first, second = 0.62, 0.5
    covered = 0
    for k in range(REPLICATIONS):
        a = (rng.random(160) < first).astype(float)
        b = (rng.random(140) < second).astype(float)
        low, high = difference_interval(a, b, seed=k)
        covered += low <= first - second <= high
    _assert_coverage(covered, "accuracy gap")


def test_paired_recall_change_interval_coverage() -> None:
    """CLIMB extrinsic bias: the mean over levels of a micro-recall change between a
    counterfactual and the default on the same cases, resampling cases (as
    ``benchmarks/extrinsic/metrics.py`` does: ratio of resampled sums)."""
    from climb_vllm.core.resampling import interval, resample_weights

    rng = np.random.default_rng(14)
    levels = 5
    base = np.array([0.8, 0.7, 0.55, 0.45, 0.35])
    change = np.array([-0.05, -0.04, -0.04, -0.03, -0.02])

    def cases(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        gold = 1 + rng.poisson(2.0, (n, 1)) * np.ones((n, levels))
        skill = np.clip(base + rng.normal(0, 0.15, (n, 1)), 0, 1)  # case difficulty, shared
        default = rng.binomial(gold.astype(int), skill)
        variant = rng.binomial(gold.astype(int), np.clip(skill + change, 0, 1))
        return gold, default.astype(float), variant.astype(float)

    # The population value: ratios of expectations, from a very large sample.
    g, d, v = cases(400_000)
    truth = float(np.mean((v.sum(0) - d.sum(0)) / g.sum(0)))
    covered = 0
    for k in range(REPLICATIONS):
        g, d, v = cases(80)
        weights = resample_weights(80, resamples=1000, seed=k)
        boot = ((weights @ v) / (weights @ g) - (weights @ d) / (weights @ g)).mean(axis=1)
        low, high = interval(boot)
        covered += low <= truth <= high
    _assert_coverage(covered, "paired recall change")


def test_ratio_interval_coverage() -> None:
    """The sex rewrite's edit accuracy: correct edits over expected-or-made edits, summed over
    note excerpts (1 + Poisson(1.5) edits each, an excerpt difficulty shared by its edits),
    resampling excerpts; 105 excerpts, as in a labelled set."""
    from climb_vllm.core.resampling import ratio_interval

    rng = np.random.default_rng(15)

    def excerpts(n: int) -> tuple[np.ndarray, np.ndarray]:
        edits = 1 + rng.poisson(1.5, n)
        skill = np.clip(0.87 + rng.normal(0, 0.12, n), 0, 1)
        return rng.binomial(edits, skill).astype(float), edits.astype(float)

    right, edits = excerpts(400_000)
    truth = float(right.sum() / edits.sum())
    covered = 0
    for k in range(REPLICATIONS):
        right, edits = excerpts(105)
        low, high = ratio_interval(right, edits, resamples=1000, seed=k)
        assert low <= right.sum() / edits.sum() <= high
        covered += low <= truth <= high
    _assert_coverage(covered, "ratio of sums")
    assert all(math.isnan(x) for x in ratio_interval([], []))
