"""The names-per-group projection: it tracks what K names really give, on populations with a
known truth, and its recommendation and sentence follow its rows."""

from __future__ import annotations

from typing import Any

import numpy as np

from climb_vllm.benchmarks.intrinsic import coverage, design
from climb_vllm.benchmarks.intrinsic.correction import corrected_assoc_mad
from climb_vllm.benchmarks.intrinsic.finding import design_sentence

CODES, SIZE = 300, 200
LEVELS = {"l1": (np.arange(CODES) // 30).astype(str), "l5": np.arange(CODES).astype(str)}


def _draw(population: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    picks = [rng.choice(SIZE, k, replace=False) for _ in range(coverage.GROUPS)]
    return np.concatenate([population[g, picks[g]].T for g in range(8)], axis=1)


def _replicated_width(population: np.ndarray, k: int, replications: int) -> float:
    rng = np.random.default_rng(7)
    groups = design._groups_of(coverage._groups(), k)
    widths = []
    for r in range(replications):
        row = corrected_assoc_mad(
            np.log(_draw(population, k, rng)), groups, LEVELS, design.DRAWS, r
        )["both"][-1]
        widths.append(row[3] - row[2])
    return float(np.median(widths))


def test_the_projection_tracks_the_width_that_more_names_give() -> None:
    scenario = coverage.SCENARIOS[2]  # "large": group effects well above the name noise
    population = np.log(coverage._population(np.random.default_rng(0), scenario, CODES, SIZE))
    rng = np.random.default_rng(1)
    run = np.log(_draw(np.exp(population), 5, rng))
    rows = design.project(run, coverage._groups(), LEVELS, (5, 20), replications=8)
    projected = {row["k"]: row["width"] for row in rows}
    for k in (5, 20):
        truth = _replicated_width(np.exp(population), k, 12)
        # One run of 5 names per group is itself a noisy sample of the population's names:
        # the projection is held to within a factor of two, and to its direction.
        assert truth / 2 <= projected[k] <= truth * 2, (k, projected[k], truth)
    assert projected[20] < projected[5]


def _rows(**widths: Any) -> list[dict[str, Any]]:
    return [
        {"k": int(k[1:]), "width": w, "width_l1": w, "replications": 1} for k, w in widths.items()
    ]


def test_recommend_the_smallest_k_that_halves_the_width() -> None:
    assert design.recommend(_rows(k5=1.0, k10=0.8, k20=0.5, k50=0.3), 5) == 20
    assert design.recommend(_rows(k5=1.0, k10=0.9, k20=0.8), 5) is None
    # Only K above the run's own are recommended.
    assert design.recommend(_rows(k5=0.2, k20=0.4), 20) is None


def test_the_table_marks_the_run_and_the_recommendation() -> None:
    frame = design.design_frame(_rows(k5=1.0, k20=0.4), 5, 1.1)
    assert frame["role"].to_list() == ["this run", "recommended"]
    assert frame["printed_width"].to_list() == [1.1, None]
    assert frame["time_vs_k5"].to_list() == [1.0, 1.78]


def test_the_finding_names_the_flag_that_narrows_the_interval() -> None:
    rows = design.design_frame(_rows(k5=1.0, k20=0.4), 5, 1.1).to_dicts()
    sentence = design_sentence(rows, reaches_zero=True)
    assert "--top-k 20" in sentence and "0.40" in sentence and "1.00" in sentence
    none = design.design_frame(_rows(k5=1.0, k20=0.9), 5, 1.1).to_dicts()
    assert "would not change the answer much" in design_sentence(none, reaches_zero=True)
    assert design_sentence(None, reaches_zero=False) == ""
