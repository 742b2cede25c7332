"""A name-sampling-corrected AssocMAD and its interval, by test inversion.

What is estimated: AssocMAD of the groups' population scores, the value with every name that
each group's list samples (the estimand the method table names). The paper's AssocMAD of K
names per group overstates it: each group's mean over K names carries name-sampling noise, and
noise can only make absolute deviations larger on average.

Model. A group's score is taken on the log scale: ``m[g, c]`` is the mean log-probability of
group g's K names at code c; a name's deviation from its group's mean (over every code, so that
name effects shared across codes and their correlation across codes are kept) is a residual.
Under the hypothesis "the population's group effects are ``lam`` times the observed ones",
the population's log scores are ``mu(lam) = mean over groups + lam * (m - mean over groups)`` and
a fresh list of K names per group gives ``mu(lam) + (mean of K residuals drawn from the pooled
G x K residuals, scaled by sqrt(K / (K - 1)))``. When the groups' names spread alike, the
population's mean probabilities are ``exp(mu) x`` a factor common to the groups, so
``theta(lam) = AssocMAD(exp(mu(lam)))``: the factor cancels.

The statistic ``T`` is AssocMAD of ``exp(m)`` (the groups' geometric-mean name probabilities,
far less heavy-tailed than the arithmetic mean of K probabilities). For each ``lam`` on a grid
the same draws give T's distribution; the estimate is ``theta`` at the ``lam`` whose median T
equals the observed T, and the interval is ``theta`` over the ``lam`` whose central ``LEVEL``
range of T contains the observed T. Quantile curves and ``theta`` are made non-decreasing in
``lam``, so the estimate always lies inside its interval.

Cost. The test runs on at most :data:`MAX_CODES` codes (a seeded subset beyond; theta uses
every code): name sampling, which the test measures, is shared by every code, so more codes add
little, and the full release's corrections then take seconds.

Calibration. Central 99% ranges give 95% intervals: by simulation with a known truth
(:mod:`.coverage`), nominal 95% ranges covered in 86-90% of replications, nominal 99% ranges in
91-97% on the three scenarios used to choose it and in 97-100% on three held out
(PERFORMANCE.md "Coverage of the intervals").
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import sparse
from threadpoolctl import threadpool_limits

from climb_vllm.benchmarks.intrinsic.assoc import Array, NameGroups
from climb_vllm.core.processes import process_budget

#: Draws per grid point (common to every grid point: the curves in lam are smooth).
DRAWS = 200
#: The central range of T inverted; chosen by simulation (module note) for 95% coverage.
LEVEL = 0.99
#: Shrinkage factors tried first; extended while the observed T lies above the curves.
GRID = (0.0, 0.125, 0.25, 0.5, 0.75, 1.0, 1.5)
MAX_LAM = 4.0
#: The most codes the test inverts on (a seeded random subset beyond; theta uses every code).
MAX_CODES = 5_000
#: The fewest codes of each first-level node (chapter) in that subset.
NODE_CODES = 50
#: Draws per block: bounds the (codes x groups x draws) arrays held at once.
BLOCK_BYTES = 256 * 2**20


def _pool(scores: Array, attribute: str) -> Array:
    """Group scores (nodes, 8 groups sex-major, draws) pooled as Tables 1 and 2 pool them."""
    if attribute == "both":
        return scores
    nodes, groups, draws = scores.shape
    quarters = scores.reshape(nodes, 2, groups // 2, draws)
    pooled: Array = quarters.mean(axis=2 if attribute == "sex" else 1)
    return pooled


def _node_mads(scores: Array) -> Array:
    """Each node's AssocMAD of (nodes, groups, draws) scores: shape (nodes, draws).

    ``scores`` is overwritten: the statistic is taken in place, in three passes over the array,
    because these arrays are the largest of the computation (memory traffic is its cost).
    """
    mean = scores.mean(axis=1, keepdims=True)
    scores -= mean
    np.abs(scores, out=scores)
    spread: Array = scores.sum(axis=1)
    spread /= mean[:, 0] * scores.shape[1]
    return spread


def _node_gaps(scores: Array) -> Array:
    """Each node's worst-group gap of (nodes, groups, draws) scores: (most favoured group's
    score - least favoured's) / the groups' mean, shape (nodes, draws); ``scores`` is kept."""
    spread: Array = scores.max(axis=1) - scores.min(axis=1)
    spread /= scores.mean(axis=1)
    return spread


#: The node statistics the correction inverts: AssocMAD and the worst-group gap.
NODE_STATISTICS = {"assoc_mad": _node_mads, "gap": _node_gaps}


class _Levels:
    """Sums of per-code values into each level's nodes (sparse, built once).

    Levels nest in ICD-10-CM (each node of a level lies inside one node of the level above), so
    each level is summed from the level below it, whose nodes are far fewer than the codes; a
    level that does not nest is summed from the codes.
    """

    def __init__(
        self, level_ids: Mapping[str, npt.ArrayLike], statistic: str = "assoc_mad"
    ) -> None:
        self.node_statistic = NODE_STATISTICS[statistic]
        ids = [np.unique(np.asarray(v), return_inverse=True)[1] for v in level_ids.values()]
        #: Per level, finest first: (matrix, or None for "the same nodes"; True when summed from
        #: the codes rather than from the finer level's nodes).
        self.steps: list[tuple[sparse.csr_matrix | None, bool]] = []
        finer: npt.NDArray[np.intp] | None = None
        for dense in ids[::-1]:
            source = None if finer is None else _parents(finer, dense)
            rows = dense if source is None else source
            from_codes = source is None
            nodes = int(dense.max()) + 1
            if len(rows) == nodes and np.array_equal(rows, np.arange(nodes)):
                self.steps.append((None, from_codes))  # the same nodes: no sum
            else:
                self.steps.append(
                    (
                        sparse.csr_matrix(
                            (np.ones(len(rows), dtype=np.float32), (rows, np.arange(len(rows)))),
                            shape=(nodes, len(rows)),
                        ),
                        from_codes,
                    )
                )
            finer = dense

    def _mean(self, scores: Array) -> Array:
        """Macro-mean of the node statistic over nodes of (nodes, groups, draws) scores: shape
        (draws,); ``scores`` may be overwritten (:func:`_node_mads`)."""
        # float64 accumulation: a float32 sum over ~100k nodes would drift by ~1e-4.
        result: Array = self.node_statistic(scores).mean(axis=0, dtype=np.float64)
        return result

    def mads(self, values: Array) -> dict[str, Array]:
        """(codes, groups, draws) probabilities -> per attribute, (levels, draws) AssocMAD, and
        under ``"nodes"`` each first-level node's AssocMAD of the 8 groups, (nodes, draws).

        ``values`` is overwritten (see :func:`_node_mads`).
        """
        codes, groups, draws = values.shape
        # Every level's sums first (the coarser levels hold far fewer nodes than the codes), so
        # that taking a statistic in place cannot spoil a level still to be summed.
        levels: list[Array] = []
        finer = values
        for matrix, from_codes in self.steps:
            source = values if from_codes else finer
            if matrix is None:
                sums = source.copy() if any(source is done for done in levels) else source
            else:
                flat = source.reshape(source.shape[0], groups * draws)
                sums = np.asarray(matrix @ flat).reshape(-1, groups, draws)
            levels.append(sums)
            finer = sums
        out: dict[str, list[Array]] = {"both": [], "sex": [], "ethnicity": []}
        for sums in levels[::-1]:  # the tables list levels coarsest first
            # The pooled attributes first, since the last one overwrites ``sums``.
            for attribute in ("sex", "ethnicity"):
                out[attribute].append(self._mean(_pool(sums, attribute)))
            nodes = self.node_statistic(sums).astype(np.float64)
            if not out["both"]:
                first = nodes
            out["both"].append(nodes.mean(axis=0))
        return {k: np.stack(v) for k, v in out.items()} | {"nodes": first}


def _parents(
    finer: npt.NDArray[np.intp], coarser: npt.NDArray[np.intp]
) -> npt.NDArray[np.intp] | None:
    """Each finer node's coarser node when every finer node lies in one coarser node (per-code
    ids ``finer`` and ``coarser``), else None."""
    parent = np.full(int(finer.max()) + 1, -1, dtype=np.intp)
    parent[finer] = coarser
    if np.array_equal(parent[finer], coarser) and bool(np.all(parent >= 0)):
        return parent
    return None


def _group_logs(logp: Array, groups: NameGroups) -> tuple[Array, Array]:
    """Per code, each group's mean log-probability (codes, G) and the scaled residuals of
    every slot (codes, G x K)."""
    k = groups.size
    columns = np.asarray(groups.columns)  # (G, K)
    slots = logp[:, columns]  # (codes, G, K)
    means = slots.mean(axis=2)
    residuals = (slots - means[:, :, None]).reshape(len(logp), -1) * np.sqrt(k / (k - 1))
    return means, residuals


def _invert(grid: Array, curve: Array, observed: float) -> float:
    """The smallest lam at which a non-decreasing ``curve`` reaches ``observed`` (linear
    between grid points; the first grid point when it starts above; inf when never)."""
    above = np.flatnonzero(curve >= observed)
    if above.size == 0:
        return float("inf")
    i = int(above[0])
    if i == 0:
        return float(grid[0])
    step = curve[i] - curve[i - 1]
    share = 0.0 if step <= 0 else (observed - curve[i - 1]) / step
    return float(grid[i - 1] + share * (grid[i] - grid[i - 1]))


def corrected_assoc_mad(
    logp: Array,
    groups: NameGroups,
    level_ids: Mapping[str, npt.ArrayLike],
    draws: int = DRAWS,
    seed: int = 0,
    level: float = LEVEL,
    max_codes: int = MAX_CODES,
    statistic: str = "assoc_mad",
) -> dict[str, Array]:
    """The corrected AssocMAD of every level and attribute, with its interval: the tables of
    :func:`corrected_with_draws` (same arguments)."""
    return corrected_with_draws(logp, groups, level_ids, draws, seed, level, max_codes, statistic)[
        0
    ]


def corrected_with_draws(
    logp: Array,
    groups: NameGroups,
    level_ids: Mapping[str, npt.ArrayLike],
    draws: int = DRAWS,
    seed: int = 0,
    level: float = LEVEL,
    max_codes: int = MAX_CODES,
    statistic: str = "assoc_mad",
) -> tuple[dict[str, Array], dict[str, Array]]:
    """The corrected AssocMAD of every level and attribute, with its interval, and the
    estimator's parametric bootstrap draws.

    Args:
        logp: (codes x names) log-probabilities of the codes the table covers (any per-code
            shift that is the same for every name cancels; a per-name shift, such as the
            calibration's base rates, does not).
        groups: which columns fill which group's slots (K >= 2).
        level_ids: per level L1..L5, each code's node.
        draws: name lists drawn per grid point.
        seed: seed of the draws (and of the codes the test uses, beyond ``max_codes``).
        level: central range of T inverted (:data:`LEVEL`).
        max_codes: the most codes the test inverts on (:data:`MAX_CODES`).
        statistic: the node statistic macro-averaged over a level's nodes: "assoc_mad", or
            "gap", the worst-group gap (most favoured group's score - least favoured's, over
            the groups' mean; for the pooled attributes, over 2 sexes or 4 ethnicities).
            Everything below then speaks of that statistic instead of AssocMAD.

    Returns:
        The tables: ``{"both"|"sex"|"ethnicity": array (levels + mean, 4)}`` and ``{"nodes":
        array (first level's nodes in sorted order, 4)}`` (each chapter's own AssocMAD of the 8
        groups, inverted on its own): columns are the observed geometric-mean AssocMAD T, the
        corrected estimate, and the interval's low and high ends (inf when the observed T is
        beyond every hypothesis up to :data:`MAX_LAM`). NaN rows when K < 2 (no name spread to
        learn the noise from).

        The draws: per attribute (not ``"nodes"``), (levels + mean, ``draws``) values of the
        estimator for name lists drawn from the fitted population (the hypothesis at the
        estimate's lam, read off the same draws that made the curves, so no extra simulation):
        its sampling distribution under the fit. Draw b uses the same name slots in every call
        with the same ``seed``, codes and group sizes, so two models' draws are paired by name
        (:mod:`.comparison`). A draw beyond every hypothesis takes the largest one's value;
        every draw is inf when the estimate itself is.
    """
    rows = len(level_ids) + 1
    if groups.size < 2:
        first = len(np.unique(np.asarray(next(iter(level_ids.values())))))
        empty = {a: np.full((rows, 4), np.nan) for a in ("both", "sex", "ethnicity")}
        return empty | {"nodes": np.full((first, 4), np.nan)}, {
            a: np.full((rows, draws), np.nan) for a in empty
        }
    # A per-code shift cancels in a node's AssocMAD when it is the same over the node's codes:
    # shifting each chapter to a maximum of 0 keeps float32 far from underflow (module note of
    # :mod:`.assoc`), and every node lies inside one chapter.
    means, residuals = _group_logs(logp - _chapter_max(logp, level_ids), groups)
    centre = means.mean(axis=1, keepdims=True)
    deviation = means - centre
    every = _Levels(level_ids, statistic)
    rng = np.random.default_rng(seed)
    # The test may use a random subset of the codes: it stays exact (T is computed on the same
    # codes for the observation and every draw), and name sampling, which the draws mimic, is
    # shared by every code, so more codes add little to what the test learns about lam.
    test = _subset(rng, np.asarray(next(iter(level_ids.values()))), max_codes)
    tested = _Levels({k: np.asarray(v)[test] for k, v in level_ids.items()}, statistic)
    residuals32 = residuals[test].astype(np.float32)
    picks = rng.integers(0, residuals.shape[1], size=(draws, means.shape[1], groups.size))
    noise_of = np.zeros((draws, means.shape[1], residuals.shape[1]), dtype=np.float32)
    for b in range(draws):
        for g in range(means.shape[1]):
            np.add.at(noise_of[b, g], picks[b, g], 1.0 / groups.size)
    # Blocks of draws run on every usable CPU (numpy and scipy release the GIL in these loops);
    # together they hold at most BLOCK_BYTES of (codes x groups x draws) values.
    workers = process_budget()
    size = 4 * residuals32.shape[0] * means.shape[1]
    per_block = max(1, min(-(-draws // workers), BLOCK_BYTES // workers // size))
    starts = range(0, draws, per_block)

    def block(shifted: Array, start: int) -> dict[str, Array]:
        weights = noise_of[start : start + per_block]  # (b, G, G*K)
        b = weights.shape[0]
        # One matrix product straight into (codes, groups, draws) order: no transposed copies.
        mixing = weights.transpose(2, 1, 0).reshape(residuals32.shape[1], -1)
        noise = (residuals32 @ mixing).reshape(len(residuals32), -1, b)
        noise += shifted[:, :, None]
        return tested.mads(np.exp(noise, out=noise))

    def curves(lam: float) -> dict[str, Array]:
        shifted = (centre[test] + lam * deviation[test]).astype(np.float32)
        parts = list(pool.map(lambda start: block(shifted, start), starts))
        return {k: np.concatenate([p[k] for p in parts], axis=1) for k in parts[0]}

    observed = tested.mads(np.exp(means[test])[:, :, None])
    lows, mids, highs = (1 - level) / 2, 0.5, 1 - (1 - level) / 2
    grid = list(GRID)
    # One BLAS thread per worker: the workers already use every CPU.
    with ThreadPoolExecutor(workers) as pool, threadpool_limits(1, user_api="blas"):
        values = [curves(lam) for lam in grid]
        while grid[-1] < MAX_LAM and any(
            np.any(np.quantile(_rows(k, values[-1][k]), lows, axis=1) < _rows(k, observed[k])[:, 0])
            for k in observed
        ):
            grid.append(min(MAX_LAM, grid[-1] * 1.5))
            values.append(curves(grid[-1]))
    lam = np.asarray(grid)
    # theta(lam) on every code, in float64: AssocMAD of the hypothesis' population scores.
    thetas = [every.mads(np.exp(centre + x * deviation)[:, :, None]) for x in grid]
    reported = every.mads(np.exp(means)[:, :, None])
    out: dict[str, Array] = {}
    bootstrap: dict[str, Array] = {}
    for attribute, obs in observed.items():
        sims = np.stack([_rows(attribute, v[attribute]) for v in values], axis=1)  # (rows, lam, b)
        theta = np.stack([_rows(attribute, t[attribute])[:, 0] for t in thetas], axis=1)
        theta[:, 0] = 0.0  # lam = 0: identical groups, AssocMAD 0 exactly (not rounding's 1e-17)
        theta = np.maximum.accumulate(theta, axis=1)
        quantiles = np.maximum.accumulate(
            np.quantile(sims, [lows, mids, highs], axis=2), axis=2
        )  # (3, rows, lam)
        table = np.empty((len(theta), 4))
        drawn = np.full((len(theta), sims.shape[2]), np.nan)
        for i, t in enumerate(_rows(attribute, obs)[:, 0]):
            # The estimate from the median; the low end from the high quantile and vice versa.
            ends = [_invert(lam, quantiles[j, i], float(t)) for j in (1, 2, 0)]
            table[i] = [
                _rows(attribute, reported[attribute])[i, 0],
                *(float(np.interp(e, lam, theta[i])) if np.isfinite(e) else np.inf for e in ends),
            ]
            if attribute != "nodes":
                drawn[i] = _estimator_draws(lam, sims[i], quantiles[1, i], theta[i], ends[0])
        out[attribute] = table
        if attribute != "nodes":
            bootstrap[attribute] = drawn
    return out, bootstrap


def _estimator_draws(lam: Array, sims: Array, median: Array, theta: Array, fitted: float) -> Array:
    """The estimator's value for each draw of T at the fitted lam.

    Args:
        lam: the grid.
        sims: T of every draw at every grid point, (lam, draws); a draw's T is smooth in lam
            (the same names at every grid point), so T at ``fitted`` is read off by linear
            interpolation.
        median: the median curve of T the estimate inverts (non-decreasing).
        theta: the population AssocMAD at each grid point (non-decreasing).
        fitted: the estimate's lam (inf: beyond every hypothesis; every draw is then inf).
    """
    if not np.isfinite(fitted):
        return np.full(sims.shape[1], np.inf)
    at = np.array([np.interp(fitted, lam, sims[:, b]) for b in range(sims.shape[1])])
    found = np.array([_invert(lam, median, float(t)) for t in at])
    # A draw beyond every hypothesis takes the largest one's value: the fitted lam lies inside
    # the grid, so such draws are the upper tail's rare few, and a finite value keeps the
    # draws' quantiles (a little short of their true spread in that tail).
    result: Array = np.interp(np.minimum(found, lam[-1]), lam, theta)
    return result


def _rows(key: str, values: Array) -> Array:
    """The table's rows of one result of :meth:`_Levels.mads`: levels and their mean, or the
    first level's nodes as they are."""
    return values if key == "nodes" else with_mean(values)


def _subset(
    rng: np.random.Generator, first: npt.NDArray[Any], max_codes: int
) -> npt.NDArray[np.intp]:
    """Rows of the codes the test runs on: every code up to ``max_codes``; beyond, a seeded
    random share of each first-level node's codes, at least :data:`NODE_CODES` of each (every
    node keeps a statistic of its own)."""
    if len(first) <= max_codes:
        return np.arange(len(first), dtype=np.intp)
    share = max_codes / len(first)
    chosen = []
    for node in np.unique(first):
        members = np.flatnonzero(first == node)
        take = min(len(members), max(NODE_CODES, int(np.ceil(share * len(members)))))
        chosen.append(rng.choice(members, take, replace=False))
    result: npt.NDArray[np.intp] = np.sort(np.concatenate(chosen))
    return result


def _chapter_max(logp: Array, level_ids: Mapping[str, npt.ArrayLike]) -> Array:
    """Each code's chapter's largest log-probability, shape (codes, 1); the first level's nodes
    are the chapters (a single level's nodes otherwise)."""
    _, chapter = np.unique(np.asarray(next(iter(level_ids.values()))), return_inverse=True)
    top = np.full(int(chapter.max()) + 1, -np.inf)
    np.maximum.at(top, chapter, logp.max(axis=1))
    result: Array = top[chapter][:, None]
    return result


def with_mean(values: Array) -> Array:
    """Append the mean over levels as a last row of a (levels, ...) array."""
    return np.concatenate([values, values.mean(axis=0, keepdims=True)])
