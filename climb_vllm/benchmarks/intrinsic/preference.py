"""A name-sampling-corrected sex-preference share (Table 3) and its interval.

What is estimated: the share of a sex-specific list's codes at which the own sex's population
score (every name that each group's list samples) is higher than the other sex's. The paper's
share of K names per group is a poor estimate of it: each code's comparison carries the noise of
K names per group, so codes whose two sexes score alike flip at random, and the names' shared
effects (a name likely after every description) move every code's comparison at once.

Model, on the log scale. For code c, ``d[c]`` is the log ratio of the own sex's pooled score to
the other's, the pooled score being the mean over the sex's groups of each group's
geometric-mean name probability. Across the list's codes, ``d = a + e + spread``: ``a`` the
population's mean log ratio, ``e`` one shift common to every code (the names' shared effects),
and per-code noise of variance ``s2``. The name bootstrap (names resampled within each group)
measures both: the spread of the resamples' mean over codes gives ``e``'s standard deviation,
and each code's spread around it gives ``s2``; with replacement from K names the bootstrap
understates variances by (K - 1) / K, which is undone. Taking the population's log ratios to be
``a + lam * (d - mean d)`` with ``lam = sqrt(1 - s2 / var d)`` (the observed spread minus the
noise's, a method-of-moments deconvolution), the share is ``theta(a) = mean(a + lam (d -
mean d) > 0)``, non-decreasing in ``a``. The estimate is ``theta(mean d)``; the interval is
``theta`` at ``mean d -/+ Z sd(e)``, so it always contains the estimate.

Calibration. ``Z`` is the normal quantile of a nominal 97.5% interval: it does not count the
uncertainty of ``lam``, and by simulation with a known truth (:mod:`.coverage`) nominal 95%
covered 91-94% on the five scenarios with a sex effect. With Z = 2.24 they covered 94-98%
(PERFORMANCE.md "Coverage of the intervals"). The five were all seen while Z was chosen, so none
of them is a clean held-out check for this interval.

Assumption: the two sexes' names spread alike on the log scale (then arithmetic-mean and
geometric-mean scores order the sexes alike), and the codes' population log ratios are
roughly normal within a list.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from climb_vllm.benchmarks.intrinsic.assoc import Array, NameGroups

#: Normal quantile of the interval's shared shift (module note: nominal 97.5% gives 95%).
Z = 2.24


def corrected_preference(
    logp: Array, groups: NameGroups, weights: Array, own: str
) -> tuple[float, float, float]:
    """The corrected share of one sex-specific list, with its interval.

    Args:
        logp: (codes x names) log-probabilities of the list's codes.
        groups: the (sex, ethnicity) groups, sex-major (female groups first).
        weights: name weights (names, groups, 1 + resamples) of the name bootstrap
            (:meth:`NameGroups.weights`); entry 0 is the point estimate.
        own: "FEMALE" for the female-only list, "MALE" for the male-only list.

    Returns:
        (estimate, low, high); NaN when the list is empty, there are no resamples, or K < 2.
    """
    k = groups.size
    if len(logp) == 0 or weights.shape[2] < 2 or k < 2:
        return float("nan"), float("nan"), float("nan")
    half = len(groups.groups) // 2
    means = np.einsum("cn,ngb->cgb", logp, weights)  # each group's mean log-probability
    ratio = logsumexp(means[:, :half], axis=1) - logsumexp(means[:, half:], axis=1)
    if own != "FEMALE":
        ratio = -ratio
    point, resampled = ratio[:, 0], ratio[:, 1:]
    inflate = k / (k - 1)
    shared = resampled.mean(axis=0)
    noise = float((resampled - shared).var(axis=1).mean()) * inflate
    spread = float(point.var())
    lam = np.sqrt(max(0.0, 1.0 - noise / spread)) if spread > 0 else 0.0
    centred = lam * (point - point.mean())
    shift = Z * float(shared.std()) * np.sqrt(inflate)
    centre = float(point.mean())
    estimate, low, high = (
        float(np.mean(a + centred > 0)) for a in (centre, centre - shift, centre + shift)
    )
    return estimate, low, high
