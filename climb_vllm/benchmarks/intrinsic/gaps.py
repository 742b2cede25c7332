"""Worst-group gaps: how far apart the most and the least favoured group are, per ICD level and
per chapter.

What is estimated: for one node (a chapter, a block, ... a code) with group scores ``s_g`` (each
group's mean name probability summed over the node's codes, as AssocMAD uses them), the gap is
``(max_g s_g - min_g s_g) / mean_g s_g``: how much more likely the most favoured group's names
are than the least favoured's, in units of the groups' mean. A level's gap is its mean over the
level's nodes; 8 groups, or pooled by sex (the two sexes) or by ethnicity (four).

Like AssocMAD, the gap of K names per group is inflated by name sampling (a range grows with
noise even more than a mean deviation does), so each gap is printed beside its name-sampling-
corrected value and interval, the test inversion of :mod:`.correction` with the gap as its
statistic (coverage by simulation: :func:`.coverage.gap_coverage`). The most and least
favoured groups of a chapter are those of its observed scores (K names), named so.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from climb_vllm.benchmarks.intrinsic import assoc, correction
from climb_vllm.benchmarks.intrinsic.assoc import Array, NameGroups
from climb_vllm.resources.names import ETHNICITY_LABELS


def _node_gaps(scores: Array) -> Array:
    """(nodes, groups) scores -> each node's gap (the correction's own statistic)."""
    gaps: Array = correction.NODE_STATISTICS["gap"](scores[:, :, None])[:, 0]
    return gaps


def observed_gaps(sums: dict[str, Array], weights: Array, pooling: str) -> dict[str, Array]:
    """Each level's gap and their mean, from K names' mean probabilities.

    Args:
        sums: :func:`assoc.level_sums` of the codes covered.
        weights: name weights (names, groups, resamples); resample 0 (the names as listed) is
            used.
        pooling: how the pooled groups pool names (:func:`assoc.pooled_weights`).

    Returns:
        ``{"both"|"sex"|"ethnicity": array (levels + mean,)}``.
    """
    point = weights[:, :, :1]
    pooled = {
        "both": point,
        "sex": assoc.pooled_weights(point, "ethnicity", pooling),
        "ethnicity": assoc.pooled_weights(point, "sex", pooling),
    }
    out = {}
    for attribute, w in pooled.items():
        levels = [float(_node_gaps(matrix @ w[:, :, 0]).mean()) for matrix in sums.values()]
        out[attribute] = np.array([*levels, float(np.mean(levels))])
    return out


def _chapter_rows(
    sums: Mapping[str, Array],
    level_ids: Mapping[str, Array],
    chapters: list[str],
    groups: NameGroups,
    weights: Array,
    fixed: Mapping[str, Array],
) -> list[dict[str, object]]:
    """``chapter_gap``'s rows (:func:`worst_gap_tables`), ordered by chapter; ``sums``: per
    level, the nodes' summed probabilities; ``fixed``: the correction's intervals (empty for
    none)."""
    first = next(iter(level_ids))
    present, counts = np.unique(level_ids[first], return_counts=True)
    scores = sums[first] @ weights[:, :, 0]
    names = [f"{ETHNICITY_LABELS.get(e, e)} {s.lower()}" for s, e in groups.groups]
    chapter_rows = []
    for i, (node, count) in enumerate(zip(present, counts)):
        row = {
            "chapter": chapters[int(node)],
            "codes": int(count),
            "gap": float(_node_gaps(scores[i : i + 1])[0]),
        }
        if "nodes" in fixed:
            row |= _interval(fixed["nodes"][i])
        row |= {
            "most_favoured": names[int(np.argmax(scores[i]))],
            "least_favoured": names[int(np.argmin(scores[i]))],
        }
        chapter_rows.append(row)
    chapter_rows.sort(key=lambda r: (len(str(r["chapter"])), str(r["chapter"])))
    return chapter_rows


def worst_gap_tables(
    probabilities: Array,
    logp: Array,
    level_ids: Mapping[str, Array],
    chapters: list[str],
    groups: NameGroups,
    weights: Array,
    pooling: str,
    draws: int,
    seed: int,
) -> dict[str, pl.DataFrame]:
    """The per-level and per-chapter gap tables of the codes given.

    Args:
        probabilities: (codes x names) probabilities (any per-chapter scale).
        logp: the same codes' log-probabilities (for the correction).
        level_ids: per level, each code's node (the first level's nodes are the chapters).
        chapters: the chapter labels in the order of the first level's nodes.
        groups: the name groups.
        weights: name weights (names, groups, resamples) of the listed names.
        pooling: how Table 2's pooled groups pool names.
        draws: name lists per hypothesis of the correction (0: no corrected columns).
        seed: seed of the correction's draws.

    Returns:
        ``worst_gap``: rows ``attribute, level, gap, corrected, ci_low, ci_high``;
        ``chapter_gap``: rows ``chapter, codes, gap, corrected, ci_low, ci_high,
        most_favoured, least_favoured`` (8 groups).
    """
    sums = assoc.level_sums(probabilities, level_ids)
    observed = observed_gaps(sums, weights, pooling)
    fixed = (
        correction.corrected_assoc_mad(logp, groups, level_ids, draws, seed, statistic="gap")
        if draws
        else {}
    )
    rows = []
    labels = [key.upper() for key in level_ids] + ["mean"]  # "l1" -> "L1", as the tables
    for attribute in ("both", "sex", "ethnicity"):
        for i, level in enumerate(labels):
            row: dict[str, object] = {
                "attribute": attribute,
                "level": level,
                "gap": float(observed[attribute][i]),
            }
            if attribute in fixed:
                row |= _interval(fixed[attribute][i])
            rows.append(row)
    chapter_rows = _chapter_rows(sums, level_ids, chapters, groups, weights, fixed)
    return {"worst_gap": pl.DataFrame(rows), "chapter_gap": pl.DataFrame(chapter_rows)}


def _interval(values: Array) -> dict[str, float | None]:
    """The corrected value and interval of one row of the correction's table (None for NaN)."""
    _, estimate, low, high = (None if np.isnan(v) else float(v) for v in values)
    return {"corrected": estimate, "ci_low": low, "ci_high": high}
