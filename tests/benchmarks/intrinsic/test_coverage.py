"""The coverage simulation's populations have the group means they state, and its counts are
shares of replications."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from climb_vllm.benchmarks.intrinsic.coverage import (
    SCENARIOS,
    _population,
    run_drilldown_coverage,
    scenario_coverage,
)
from climb_vllm.cli import main
from climb_vllm.core.errors import UserError
from tests.helpers import intrinsic_command


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
    # The drill-down's intervals, per (code, group), hold the population contrast about 95%
    # of the time even in the large-effects scenario.
    assert 0.9 <= result["large_drilldown_coverage"] <= 0.99


def test_drilldown_coverage_on_a_run(tiny_model: Path, tmp_path: Path) -> None:
    """On a run that scored each group's top-10 names, 5 drawn of 10 cover the 10 names'
    contrast (at least nominally: 5 of 10 without replacement halves the variance); a run
    without the asked names gets one error that names the fix."""
    out = tmp_path / "run"
    extra = ("--limit", "24", "--sensitivity-codes", "0", "--names-sensitivity", "5,10")
    assert main(intrinsic_command(tiny_model, out, *extra)) == 0
    result = run_drilldown_coverage(out, population=10, replications=40)
    assert result["names_drawn_per_group"] == 5 and result["codes"] > 10
    assert 0.93 <= result["coverage_lowest_group"] <= result["coverage"] <= 1.0
    with pytest.raises(UserError, match="top-20 names") as error:
        run_drilldown_coverage(out, population=20, replications=1)
    assert "--top-k 50" in error.value.fix
