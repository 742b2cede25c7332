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
