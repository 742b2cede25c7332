"""What more names per group would buy: the corrected AssocMAD's interval at K = 10, 20 and 50,
projected from a run's own scores.

What is estimated, for each K: the median width of the corrected AssocMAD's 95% interval
(:mod:`.correction`, the mean of L1-L5 and L1 alone) that a run of the same codes with K names
per group would print. It is read off runs simulated from the population the run itself fitted
(the correction's model): each group's log-scores are ``centre + lam x deviation``, with ``lam``
the corrected estimate's shrinkage of the observed group effects, and each of a group's K names
is a random Gaussian mix of the run's pooled residual names (a whole name across
every code, so that name effects shared across codes and their correlations are kept, and no two
groups share a name). Each simulated run is then corrected exactly as a real run is. The run's
own K is projected too: beside the width the run printed, it shows how far the projection is
from a width that was observed.

What it assumes: the run's G x K residual names stand for the population's spread of names (with
K = 5, forty names), and the population's group effects are the fitted ones. No power is
projected: power at an estimate is the estimate restated (a run of pure name noise has a
positive estimate, and its projected power at K = 50 was 100%).

Cost: the projection inverts on at most :data:`CODES` codes (a seeded subset stratified by
chapter, as the correction's own test subset is) with :data:`DRAWS` draws per hypothesis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from climb_vllm.benchmarks.intrinsic import correction
from climb_vllm.benchmarks.intrinsic.assoc import Array, NameGroups

#: Names per group projected, beside the run's own.
SIZES = (5, 10, 20, 50)
#: Simulated runs per K.
REPLICATIONS = 24
#: Draws per hypothesis inside each simulated run's correction.
DRAWS = 100
#: The most codes a projection uses (a seeded subset stratified by chapter beyond).
CODES = 1_000
#: Wall time of scoring relative to K = 5, measured on Gemma 3 270M on 2 cores over 2,000 codes
#: (PERFORMANCE.md "Names per group"); other models and engines differ.
MEASURED_COST = {5: 1.00, 10: 1.22, 20: 1.78, 50: 6.31}
#: A K is recommended when its projected width is at most this share of the run's own.
NARROWER = 0.5


def _lam_of(
    estimate: float,
    centre: Array,
    deviation: Array,
    level_ids: Mapping[str, npt.ArrayLike],
) -> float:
    """The shrinkage ``lam`` whose population AssocMAD (mean of the levels) is ``estimate``:
    AssocMAD of ``exp(centre + lam x deviation)`` grows with ``lam``, so a bisection finds it."""
    if not np.isfinite(estimate) or estimate <= 0:
        return 0.0
    levels = correction._Levels(level_ids)

    def theta(lam: float) -> float:
        values = levels.mads(np.exp(centre + lam * deviation)[:, :, None])["both"]
        return float(correction.with_mean(values)[-1, 0])

    low, high = 0.0, 1.0
    while theta(high) < estimate and high < correction.MAX_LAM * 4:
        low, high = high, high * 2
    for _ in range(30):
        middle = (low + high) / 2
        low, high = (middle, high) if theta(middle) < estimate else (low, middle)
    return (low + high) / 2


def _groups_of(groups: NameGroups, size: int) -> NameGroups:
    """``groups``' (sex, ethnicity) groups with ``size`` fresh columns each, in order."""
    columns = tuple(tuple(range(g * size, (g + 1) * size)) for g in range(len(groups.groups)))
    return NameGroups(groups.groups, columns)


def _widths(
    population: Array,
    residuals: Array,
    drawn: NameGroups,
    levels: Mapping[str, npt.ArrayLike],
    draws: int,
    seed: int,
    rng: np.random.Generator,
) -> Array:
    """One simulated run's corrected interval widths (mean of L1-L5, then L1) with the names
    of ``drawn``.

    Args:
        population: (codes x groups) the fitted population's group log-scores.
        residuals: (codes x names) the run's residual names.
        drawn: the simulated groups (their names are new columns).
        levels: per level, each code's node.
        draws: draws per hypothesis of the correction.
        seed: the correction's seed.
        rng: draws the new names.
    """
    size, width = drawn.size, len(drawn.groups) * drawn.size
    # Each new name a random Gaussian mix of the run's residual names: its covariance across
    # codes is theirs, and no two groups share a name (drawing the names themselves would let
    # 8 x 50 slots share 40 names and cancel their noise).
    mixing = rng.normal(0, 1 / np.sqrt(residuals.shape[1]), (residuals.shape[1], width))
    names = np.repeat(population, size, axis=1) + residuals @ mixing
    table = correction.corrected_assoc_mad(names, drawn, levels, draws, seed)["both"]
    return np.asarray(table[[-1, 0], 3] - table[[-1, 0], 2])


def project(
    logp: Array,
    groups: NameGroups,
    level_ids: Mapping[str, npt.ArrayLike],
    sizes: Sequence[int] = SIZES,
    replications: int = REPLICATIONS,
    draws: int = DRAWS,
    seed: int = 0,
    codes: int = CODES,
) -> list[dict[str, Any]]:
    """The projected interval at each K (module note).

    Args:
        logp: (codes x names) log-probabilities of the codes Table 1 covers (sex-neutral).
        groups: the run's groups (K >= 2 names each).
        level_ids: per level L1..L5, each code's node.
        sizes: the names per group to project (the run's own K is added when absent).
        replications: simulated runs per K.
        draws: draws per hypothesis inside each simulated run's correction.
        seed: seed of the code subset, the names drawn and the corrections.
        codes: the most codes used.

    Returns one row per K: ``k``, the fitted ``lam``, the median width of the mean of L1-L5
    (``width``) and of L1 (``width_l1``), and the replications. Widths are inf where most
    simulated intervals are unbounded.
    """
    rng = np.random.default_rng(seed)
    first = np.asarray(next(iter(level_ids.values())))
    rows = correction._subset(rng, first, codes)
    levels = {k: np.asarray(v)[rows] for k, v in level_ids.items()}
    shifted = logp[rows] - correction._chapter_max(logp[rows], levels)
    own = correction.corrected_assoc_mad(shifted, groups, levels, draws, seed)["both"]
    means, residuals = correction._group_logs(shifted, groups)
    centre = means.mean(axis=1, keepdims=True)
    deviation = means - centre
    lam = _lam_of(float(own[-1, 1]), centre, deviation, levels)
    population = centre + lam * deviation  # (codes, G)
    out = []
    for size in sorted({*sizes, groups.size}):
        drawn = _groups_of(groups, size)
        widths = [
            _widths(population, residuals, drawn, levels, draws, seed + 1 + r, rng)
            for r in range(replications)
        ]
        median = np.median(np.asarray(widths), axis=0)
        out.append(
            {
                "k": size,
                "lam": lam,
                "width": float(median[0]),
                "width_l1": float(median[1]),
                "replications": replications,
            }
        )
    return out


def recommend(rows: Sequence[Mapping[str, Any]], own: int) -> int | None:
    """The smallest K above the run's own whose projected width (mean of L1-L5) is at most
    :data:`NARROWER` of the run's own projected width; None when none is."""
    base = next((r["width"] for r in rows if r["k"] == own), float("nan"))
    for row in sorted((r for r in rows if r["k"] > own), key=lambda r: r["k"]):
        if row["width"] <= NARROWER * base:
            return int(row["k"])
    return None


def design_frame(rows: Sequence[Mapping[str, Any]], own: int, printed: float) -> pl.DataFrame:
    """The report's table: one row per K with its projected widths, the measured
    cost relative to K = 5, and which K is the run's own and which is recommended.

    Args:
        rows: :func:`project`'s rows.
        own: the run's names per group.
        printed: the width of the interval the run printed (Table 1's mean row).
    """
    chosen = recommend(rows, own)
    return pl.DataFrame(
        [
            {
                "k": row["k"],
                "projected_width": row["width"],
                "projected_width_l1": row["width_l1"],
                "printed_width": printed if row["k"] == own else None,
                "time_vs_k5": MEASURED_COST.get(int(row["k"])),
                "role": "this run"
                if row["k"] == own
                else "recommended"
                if row["k"] == chosen
                else "",
                "replications": row["replications"],
            }
            for row in rows
        ]
    )


def design_table(
    logp: Array,
    neutral: npt.NDArray[np.bool_],
    groups: NameGroups,
    level_ids: Mapping[str, npt.NDArray[Any]],
    table1: pl.DataFrame,
    seed: int,
) -> pl.DataFrame:
    """The report's "Names per group" table of a run.

    Args:
        logp: (codes x names) the run's log-probabilities.
        neutral: which codes are sex-neutral (the codes Table 1 covers).
        groups: the run's groups.
        level_ids: per level L1..L5, each code's node.
        table1: the run's Table 1 (its mean row's interval is the width the run printed).
        seed: the projection's seed.
    """
    rows = np.flatnonzero(neutral)
    levels = {k: np.asarray(v)[rows] for k, v in level_ids.items()}
    projected = project(logp[rows], groups, levels, seed=seed)
    mean = table1.filter(pl.col("level") == "mean").row(0, named=True)
    return design_frame(projected, groups.size, mean["ci_high"] - mean["ci_low"])
