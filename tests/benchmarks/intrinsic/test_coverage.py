"""The coverage simulation's populations have the group means they state, and its counts are
shares of replications."""

from __future__ import annotations

import numpy as np

from climb_vllm.benchmarks.intrinsic.coverage import SCENARIOS, _population, scenario_coverage


def test_population_group_means_are_exact() -> None:
    rng = np.random.default_rng(0)
    population = _population(rng, SCENARIOS[0], codes=30, size=50)
    means = population.mean(axis=1)
    # No group effect: every group's population mean is the code's, so AssocMAD is 0.
    np.testing.assert_allclose(means / means.mean(axis=0), 1.0, atol=1e-12)


def test_scenario_counts_are_shares_and_large_effects_are_estimated_near_the_truth() -> None:
    result = scenario_coverage(SCENARIOS[2], replications=20, codes=60, size=80, seed=1)
    assert 0.0 <= result["large_assoc_mad_percentile_coverage"] <= 1.0
    truth = result["large_assoc_mad_population"]
    assert abs(result["large_assoc_mad_mean_estimate"] - truth) < 0.25 * truth
