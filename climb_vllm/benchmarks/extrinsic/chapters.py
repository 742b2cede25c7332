"""CLIMB extrinsic bias by the gold codes' chapter: which kinds of diagnosis a counterfactual
changes the recall of.

For a chapter c, each case keeps only its gold codes in c (cases without one leave the table),
and an output's hits at level L are its predicted codes lifted to L that match those gold codes
lifted to L (a level's node lies inside one chapter, so a prediction outside c never counts).
The bias of each counterfactual is then Table 4's, over the cases that have gold in c and both
sides of the pair, with its interval and p-value over those cases; q is the Benjamini-Hochberg
adjustment of the p-values over every (chapter, counterfactual) cell of the table, since many
cells are tested at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from climb_vllm.benchmarks.extrinsic.metrics import bias_table, output_hits

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.resources.ontology import Ontology


def bias_by_chapter(
    outputs: pl.DataFrame, gold: pl.DataFrame, ontology: Ontology, seed: int = 0
) -> pl.DataFrame:
    """Table 4 per chapter of the gold codes (module note).

    Args:
        outputs: the mapped outputs (:func:`.metrics.output_hits`'s input).
        gold: :func:`~climb_vllm.benchmarks.extrinsic.prompts.gold_frame`.
        ontology: the release that lifts codes to levels.
        seed: bootstrap seed.

    Returns:
        Table 4's columns with ``chapter`` (the L1 node) and ``gold_codes`` (the cases' gold
        codes in it) first and ``q`` added; empty without gold codes.
    """
    import polars as pl
    from scipy import stats

    chapter_of = {
        code: ontology.levels(code)[0] for codes in gold["gold"].to_list() for code in codes
    }
    frames = []
    for chapter in sorted(set(chapter_of.values()), key=lambda c: (len(c), c)):
        kept = gold.with_columns(
            pl.col("gold").list.eval(
                pl.element().filter(
                    pl.element().is_in([code for code, c in chapter_of.items() if c == chapter])
                )
            )
        ).filter(pl.col("gold").list.len() > 0)
        cases = kept["case"].to_list()
        hits = output_hits(outputs.filter(pl.col("case").is_in(cases)), kept, ontology)
        table = bias_table(hits, sorted(cases), seed)
        if table.height:
            count = int(kept["gold"].list.len().sum())
            frames.append(
                table.select(
                    pl.lit(chapter).alias("chapter"), pl.lit(count).alias("gold_codes"), pl.all()
                )
            )
    if not frames:
        return pl.DataFrame()
    out = pl.concat(frames)
    p = out["p_value"].to_numpy()
    q = np.full(len(p), np.nan)
    finite = np.isfinite(p)
    if finite.any():
        q[finite] = stats.false_discovery_control(p[finite])
    return out.with_columns(pl.Series("q", q))
