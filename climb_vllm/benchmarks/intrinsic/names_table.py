"""The names-sensitivity table: AssocMAD by level under each name set of
:mod:`.name_variants`, beside its names-alone null and its corrected value, from one run's
stored scores."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import polars as pl

from climb_vllm.benchmarks.intrinsic import assoc, correction
from climb_vllm.benchmarks.intrinsic.name_variants import (
    NameVariant,
    birth_weights,
    permuted_birth_weights,
)
from climb_vllm.benchmarks.intrinsic.results import (
    CodeLists,
    Scorer,
    level_frame,
    null_frame,
    run_matrix,
)
from climb_vllm.benchmarks.intrinsic.task import IntrinsicTask

Array = npt.NDArray[np.float64]


def names_sensitivity(
    logp: Array,
    names: Sequence[str],
    codes: CodeLists,
    variants: Sequence[NameVariant],
    permutations: int = assoc.NULL_PERMUTATIONS,
    draws: int = 200,
    seed: int = 0,
) -> pl.DataFrame:
    """AssocMAD by level (sex-neutral codes, 8 groups, raw scores) under each variant.

    Args:
        logp: (codes x names) log-probabilities of every scored name.
        names: the matrix's column order.
        codes: the codes (rows) and their levels and sex lists.
        variants: the name sets (:func:`.name_variants.name_variants`).
        permutations: names-alone permutations per variant.
        draws: name lists per hypothesis of the corrected AssocMAD (0: none).
        seed: seed of the permutations and the draws.

    Returns rows ``names, k, weighting, distinct_names, level, assoc_mad, null_mean, null_q95,
    p_value, corrected, ci_low, ci_high`` (``ci_low``/``ci_high`` belong to ``corrected``;
    both are null for birth-weighted rows and K = 1).
    """
    frames = []
    for variant in variants:
        groups = assoc.NameGroups.from_slots(variant.frame(), names)
        orders = groups.permutations(permutations, seed)
        if variant.weighting == "births":
            weights = birth_weights(variant, groups, len(names))
            null = permuted_birth_weights(variant, groups, len(names), orders)
        else:
            weights = groups.weights(len(names), 0, seed)
            null = groups.permuted_weights(len(names), orders)
        scorer = Scorer(logp, codes, weights, groups, null_weights=null if permutations else None)
        values, nodes = scorer.assoc_mad(scorer.neutral, resampled=False)
        fixed = (
            scorer.corrected(scorer.neutral, draws, seed)["both"]
            if draws and variant.weighting == "equal" and variant.k >= 2
            else np.full((len(assoc.LEVELS) + 1, 4), np.nan)
        )
        levels = level_frame(values["both"], nodes, fixed)
        if permutations:
            tested = null_frame(values, scorer.null(scorer.neutral)).filter(
                pl.col("attribute") == "both"
            )
            levels = levels.join(
                tested.select("level", "null_mean", "null_q95", "p_value"), on="level"
            )
        frames.append(
            levels.select(
                pl.lit(variant.label).alias("names"),
                pl.lit(variant.k).alias("k"),
                pl.lit(variant.weighting).alias("weighting"),
                pl.lit(len(variant.distinct_names)).alias("distinct_names"),
                *levels.columns,
            )
        )
    return pl.concat(frames, how="diagonal") if frames else pl.DataFrame()


def names_sensitivity_table(
    records: pl.DataFrame,
    task: IntrinsicTask,
    sex_rule: str = "descendants",
    permutations: int = assoc.NULL_PERMUTATIONS,
    draws: int = correction.DRAWS,
    seed: int = 0,
) -> pl.DataFrame:
    """The names-sensitivity table (:func:`names_sensitivity`) of a run whose records hold
    every name of ``task.variants``; arguments as in :func:`.results.intrinsic_tables`."""
    names = list(task.scored_names)
    codes = list(task.codes)
    problem = "The intrinsic records lack names of the names-sensitivity table"
    logp = run_matrix(records, codes, names, problem)
    listed = CodeLists.of(codes, task, task.ontology.sex_lists(sex_rule))
    return names_sensitivity(logp, names, listed, task.variants, permutations, draws, seed)
