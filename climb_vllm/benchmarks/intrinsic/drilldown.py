"""Drill-down by group: the diagnoses whose prompts favour one group's names most and least.

What is estimated, for a code c and a (sex, ethnicity) group g: how many times more likely g's
names are than the other groups' names after c's prompt, relative to how the two compare at the
typical scored code. On the log scale, with ``r[c, n] = log P(n | c) - mean over the codes of
log P(n | .)`` (a name's log-probability centred on its own mean over the scored codes),

    D[g, c] = mean over g's names of r[c, n] - mean over the other groups h of
              (mean over h's names of r[c, n]),

and the table shows ``ratio = exp(D)``, for the population of names each group's list samples
(the estimand of the corrected AssocMAD). Centring on each name's mean removes what a name
carries to every code (how common the name is to the model), which would otherwise shift a
group's ratio at every code alike and dominate its spread; what is left is what drives
AssocMAD: the code-specific part of the groups' scores. The uncentred ratio differs from it by
one factor per group (the same at every code), so the ranking is the same either way.

Interval: the contrast is a difference of sample means of independent name lists; with the
groups' spreads of names pooled at each code (:func:`contrasts` says why), a t interval.
Coverage is checked by simulation with a known truth (normal and heavy-tailed name deviations)
in the tests and on the real model, each group's top-50 names standing for its population, in
PERFORMANCE.md. p is the two-sided t test of D = 0 and q the Benjamini-Hochberg adjusted p over
the group's codes: with tens of thousands of codes, the top of a list sorted by its estimates is
partly chance, and q says which entries survive that selection.

Ranked on sex-neutral codes only, as Table 1: a sex-specific code (a pregnancy, say) is linked
to one sex's names by design.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import polars as pl
from scipy import stats

from climb_vllm.benchmarks.intrinsic.assoc import Array, NameGroups
from climb_vllm.resources.ontology import chapter_name

#: Codes per group and direction in the report's table (the CSV keeps every code).
TOP = 20
#: Interval level.
LEVEL = 0.95


def contrasts(logp: Array, groups: NameGroups) -> tuple[Array, Array, Array]:
    """Each group's contrast with the other groups at each code, with its standard error.

    Args:
        logp: (codes x names) log-probabilities, centred or not.
        groups: which columns fill which group's slots (K slots per group; a name filling slots
            of two groups counts in both).

    Returns ``(estimate, standard error, degrees of freedom)``, each (codes x groups): the
    group's mean over its slots minus the mean of the other groups' means. The error pools the
    groups' spreads of names at the code (G (K - 1) degrees of freedom), as the corrected
    AssocMAD assumes the groups' names spread alike: then the t interval is exact for normal
    deviations, where a Welch interval's estimated degrees of freedom make small p-values
    too small (by simulation, 0.37% of null p-values fell below 0.001 with five names per
    group); on Gemma 3 270M the pooled interval covered 95.0-96.8% per group (PERFORMANCE.md).
    Error and degrees of freedom are NaN when K = 1.
    """
    k = groups.size
    count = len(groups.groups)
    slots = np.stack([logp[:, list(cols)] for cols in groups.columns], axis=1)  # codes, G, K
    means = slots.mean(axis=2)
    others = (means.sum(axis=1, keepdims=True) - means) / (count - 1)
    estimate: Array = means - others
    if k < 2:
        nan: Array = np.full_like(estimate, np.nan)
        return estimate, nan, nan
    pooled = slots.var(axis=2, ddof=1).mean(axis=1, keepdims=True)
    # Var(own mean) + Var(mean of the G - 1 other means) = s^2 / K x (1 + 1 / (G - 1)).
    error: Array = np.broadcast_to(np.sqrt(pooled / k * (1 + 1 / (count - 1))), estimate.shape)
    freedom: Array = np.full_like(estimate, float(count * (k - 1)))
    return estimate, error.copy(), freedom


def interval(
    estimate: Array, error: Array, freedom: Array, level: float = LEVEL
) -> tuple[Array, Array, Array]:
    """``(low, high, p)`` of the t interval and the two-sided test of a zero contrast.

    A zero standard error (every name alike) gives the point as its interval and p = 1 at a
    zero estimate, 0 elsewhere.
    """
    quantile = stats.t.ppf(0.5 + level / 2, freedom)
    half = np.where(error > 0, quantile * error, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(error > 0, np.abs(estimate) / error, np.where(estimate == 0, 0.0, np.inf))
    p: Array = 2 * stats.t.sf(t, freedom)
    low: Array = estimate - half
    high: Array = estimate + half
    return low, high, p


def _q_values(p: Array) -> Array:
    """Benjamini-Hochberg adjusted p of each column (a group) over its rows (codes)."""
    out: Array = np.full_like(p, np.nan)
    for column in range(p.shape[1]):
        finite = np.isfinite(p[:, column])
        if finite.any():
            out[finite, column] = stats.false_discovery_control(p[finite, column])
    return out


#: The drill-down's columns, in order.
_COLUMNS = "sex ethnicity rank code description chapter ratio ci_low ci_high p q".split()


def drilldown(
    logp: Array,
    codes: Sequence[str],
    groups: NameGroups,
    descriptions: pl.DataFrame,
    neutral: npt.NDArray[np.bool_],
) -> pl.DataFrame:
    """Every (sex-neutral code, group) contrast, long form, best-favoured codes first per group.

    Args:
        logp: the run's (codes x names) log-probabilities, raw.
        codes: the codes of ``logp``'s rows.
        groups: the run's name slots.
        descriptions: ``code, description, l1`` of the release.
        neutral: True for the rows of sex-neutral codes (the only rows ranked).

    Returns columns ``sex, ethnicity, rank, code, description, chapter, ratio, ci_low, ci_high,
    p, q``: ``ratio`` and its interval are the centred contrast (module note); ``rank`` 1 is the
    code whose prompt favours the group's names most.
    """
    rows = np.flatnonzero(neutral)
    values = logp[rows]
    centred = values - values.mean(axis=0, keepdims=True)
    estimate, error, freedom = contrasts(centred, groups)
    low, high, p = interval(estimate, error, freedom)
    q = _q_values(p)
    chosen = [codes[int(i)] for i in rows]
    info = (
        pl.DataFrame({"code": chosen})
        .join(descriptions.select("code", "description", "l1"), on="code", how="left")
        .with_columns(
            pl.col("l1").map_elements(chapter_name, return_dtype=pl.String).alias("chapter")
        )
    )
    frames = []
    for g, (sex, ethnicity) in enumerate(groups.groups):
        frame = info.select("code", "description", "chapter").with_columns(
            pl.lit(sex).alias("sex"),
            pl.lit(ethnicity).alias("ethnicity"),
            pl.Series("ratio", np.exp(estimate[:, g])),
            pl.Series("ci_low", np.exp(low[:, g])),
            pl.Series("ci_high", np.exp(high[:, g])),
            pl.Series("p", p[:, g]),
            pl.Series("q", q[:, g]),
        )
        frame = frame.sort("ratio", "code", descending=[True, False]).with_row_index(
            "rank", offset=1
        )
        frames.append(frame)
    return pl.concat(frames).select(_COLUMNS).with_columns(pl.col("rank").cast(pl.Int64))


def top_and_bottom(full: pl.DataFrame, top: int = TOP) -> pl.DataFrame:
    """The ``top`` most and least favoured codes of each group from :func:`drilldown`, with a
    ``direction`` column ("most" / "least"; least-favoured ranks count from the bottom)."""
    size = full.group_by("sex", "ethnicity").len()["len"].max()
    last = int(size) if isinstance(size, int) else 0
    most = full.filter(pl.col("rank") <= top).with_columns(pl.lit("most").alias("direction"))
    least = full.filter(pl.col("rank") > last - top).with_columns(
        pl.lit("least").alias("direction"), (last + 1 - pl.col("rank")).alias("rank")
    )
    order = pl.col("direction").replace_strict({"most": 0, "least": 1}, return_dtype=pl.Int64)
    return (
        pl.concat([most, least])
        .sort("sex", "ethnicity", order, "rank")
        .select("sex", "ethnicity", "direction", *full.columns[2:])
    )
