"""Choice mode's shared rows: accuracy by each score, the paired effect of a swap, and the
coverage of the swap's intervals by simulation with a known truth."""

from __future__ import annotations

import numpy as np
import polars as pl

from climb_vllm.benchmarks.hive.choice_tables import accuracy_rows, swap_row

REPLICATIONS = 600


def _choices(margins: dict[str, list[float]], choices: dict[str, list[int]]) -> pl.DataFrame:
    rows = []
    for variant, values in margins.items():
        for i, (margin, choice) in enumerate(zip(values, choices[variant])):
            rows.append({"id": f"q{i}", "variant": variant, "margin": margin, "choice": choice})
    return pl.DataFrame(rows)


def test_swap_row_is_the_paired_change_of_the_first_options_log_odds() -> None:
    frame = _choices(
        {"original": [1.0, -2.0, 0.5], "name_swap": [0.0, -2.0, -0.5]},
        {"original": [0, 1, 0], "name_swap": [0, 1, 1]},
    )
    row = swap_row(frame, "name_swap", attribute="overall")
    assert row is not None
    assert row["n"] == 3
    assert np.isclose(row["change"], (-1.0 + 0.0 - 1.0) / 3)
    assert np.isclose(row["abs_change"], 2 / 3)
    assert np.isclose(row["flips"], 1 / 3)
    assert row["ci_low"] <= row["change"] <= row["ci_high"]
    assert swap_row(frame, "attribute_swap") is None


def test_a_model_blind_to_the_swap_changes_nothing() -> None:
    frame = _choices(
        {"original": [1.0, -2.0], "name_swap": [1.0, -2.0]},
        {"original": [0, 1], "name_swap": [0, 1]},
    )
    row = swap_row(frame, "name_swap")
    assert row is not None
    assert row["change"] == row["abs_change"] == row["flips"] == 0.0
    assert row["ci_low"] == row["ci_high"] == 0.0


def test_accuracy_rows_score_each_choice_against_the_answer() -> None:
    frame = pl.DataFrame(
        {
            "answer": [0, 1, 2, 0],
            "choice_sum": [0, 0, 0, 0],
            "choice_per_byte": [0, 1, 0, 0],
            "choice_calibrated": [0, 1, 2, 0],
        }
    )
    rows = {r["score"]: r for r in accuracy_rows(frame, "calibrated", subset="overall")}
    assert rows["sum"]["accuracy"] == 0.5
    assert rows["per_byte"]["accuracy"] == 0.75
    assert rows["calibrated"]["accuracy"] == 1.0
    assert [r["headline"] for r in rows.values()] == [False, False, True]


def _coverage(mean: float, sd: float, items: int, seed: int) -> tuple[float, float]:
    """Shares of replications whose intervals of the mean change and of the mean absolute
    change contain the truth, for per-item changes drawn from Normal(mean, sd)."""
    rng = np.random.default_rng(seed)
    # The mean absolute value of a normal variable (the folded normal's mean), exactly.
    from math import erf, exp, pi, sqrt

    truth_abs = sd * sqrt(2 / pi) * exp(-(mean**2) / (2 * sd**2)) + mean * erf(
        mean / (sd * sqrt(2))
    )
    covered = covered_abs = 0
    for _ in range(REPLICATIONS):
        change = rng.normal(mean, sd, items)
        frame = pl.DataFrame(
            {
                "id": [f"q{i}" for i in range(items)] * 2,
                "variant": ["original"] * items + ["swap"] * items,
                "margin": np.concatenate([np.zeros(items), change]),
                "choice": [0] * (2 * items),
            }
        )
        row = swap_row(frame, "swap")
        assert row is not None
        covered += row["ci_low"] <= mean <= row["ci_high"]
        covered_abs += row["abs_ci_low"] <= truth_abs <= row["abs_ci_high"]
    return covered / REPLICATIONS, covered_abs / REPLICATIONS


def test_swap_intervals_cover_the_truth() -> None:
    """Per-question changes shaped as those of Gemma 3 270M on 64 DiseaseMatcher questions
    (attribute swaps: mean 0.03, sd 0.31 nats, 48 questions; name swaps: mean 0.15, sd 5.1,
    64 questions; both light-tailed, excess kurtosis -0.1 and -0.7)."""
    for mean, sd, items, seed in ((0.03, 0.31, 48, 1), (0.15, 5.1, 64, 2)):
        change, absolute = _coverage(mean, sd, items, seed)
        assert 0.92 <= change <= 0.98, (mean, sd, change)
        assert 0.92 <= absolute <= 0.98, (mean, sd, absolute)


def test_wilson_intervals_of_choice_shares_cover_the_truth() -> None:
    """Accuracies and flips of choice mode are shares of deterministic choices, often 0%: the
    Wilson interval's coverage, computed exactly over every outcome of n items, at the sizes
    and rates seen (a percentile bootstrap would give [0, 0] to every all-zero sample)."""
    from scipy.stats import binom

    from climb_vllm.benchmarks.hive.agreement import wilson

    for n in (32, 48, 100, 400):
        for p in (0.03, 0.1, 0.3, 0.5):
            coverage = sum(
                binom.pmf(k, n, p) for k in range(n + 1) if wilson(k, n)[0] <= p <= wilson(k, n)[1]
            )
            assert 0.92 <= coverage <= 0.98, (n, p, coverage)
