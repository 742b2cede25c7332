"""CLIMB extrinsic compared between two runs on the cases both answered.

What is compared, each as second run - first: the recall of the default notes (Table 7's mean
over levels; the headline that ranks models: diagnostic recall, not a bias score), and for each
counterfactual value the recall change it causes (Table 4's bias, in percentage points; nearer
0 is less biased). Each uses the cases both runs have on both sides of the pair; the 95%
interval is a percentile bootstrap over those cases, the same resamples for both runs (each
case drawn with all of both runs' variants, placements and samples: a paired bootstrap).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from climb_vllm.benchmarks.base import Paired
from climb_vllm.benchmarks.extrinsic.config import ExtrinsicConfig
from climb_vllm.core.store import results_folder

if TYPE_CHECKING:  # imported where used: the command line loads this module at start
    import numpy as np
    import numpy.typing as npt
    import polars as pl

NOTE = (
    "Recall of the default notes (mean over levels) and each counterfactual's recall change "
    "(Table 4's bias, percentage points; nearer 0 is less biased) of both runs over the cases "
    "both have on both sides; 95% interval: percentile bootstrap over those cases, the same "
    "resamples for both runs (paired)."
)


@dataclass(frozen=True)
class Hits:
    """One run's per-output hits (:func:`.metrics.output_hits`) and its release."""

    hits: pl.DataFrame
    release: str


def prepare(root: Path) -> Hits | None:
    """The hits of a run's mapped answers (``results/extrinsic/outputs.parquet``, written by its
    results), or None when the run has no finished extrinsic benchmark."""
    import polars as pl

    from climb_vllm.benchmarks.extrinsic.cases import load_cases
    from climb_vllm.benchmarks.extrinsic.metrics import output_hits
    from climb_vllm.benchmarks.extrinsic.prompts import gold_frame
    from climb_vllm.core.store import RunStore
    from climb_vllm.resources.ontology import load_ontology

    store = RunStore(root)
    path = results_folder(root, "extrinsic") / "outputs.parquet"
    if not store.finished_chunks("extrinsic") or not path.is_file():
        return None
    config = ExtrinsicConfig(**store.section("extrinsic").config)
    ontology = load_ontology(config.icd_release)
    cases = load_cases(config.cases, ontology)[: config.limit]
    gold = gold_frame(cases, ontology.female_only, ontology.male_only)
    return Hits(output_hits(pl.read_parquet(path), gold, ontology), config.icd_release)


def _row(
    measure: str,
    headline: bool,
    better: str,
    shared: int,
    a: tuple[float, npt.NDArray[np.float64]],
    b: tuple[float, npt.NDArray[np.float64]],
) -> tuple[object, ...]:
    """One comparison row (``COMPARISON_COLUMNS``) from each run's (estimate, draws) of a
    share, in percent: the difference second - first with its percentile interval."""
    from climb_vllm.core.resampling import interval

    low, high = interval(100 * (b[1] - a[1]))
    difference = 100 * (b[0] - a[0])
    return (
        measure,
        headline,
        better,
        "cases",
        shared,
        100 * a[0],
        100 * b[0],
        difference,
        low,
        high,
    )


def compare(first: Hits, second: Hits) -> pl.DataFrame | None:
    """Paired differences of default recall (%) and of each counterfactual's recall change
    (pp), or None when the runs share no case or used different releases."""
    import polars as pl

    from climb_vllm.benchmarks.base import COMPARISON_COLUMNS
    from climb_vllm.benchmarks.extrinsic.metrics import bias_draws, pair_cases, recall_draws

    common = sorted(set(first.hits["case"].to_list()) & set(second.hits["case"].to_list()))
    if not common or first.release != second.release:
        return None

    rows = [
        _row(
            "recall of default notes, mean of levels (%)",
            True,
            "higher",
            len(common),
            recall_draws(first.hits, common),
            recall_draws(second.hits, common),
        )
    ]
    variants = (
        first.hits.filter(~pl.col("attribute").is_in(["default", "placebo"]))
        .select("variant", "attribute", "value")
        .unique(maintain_order=True)
        .rows()
    )
    for variant, attribute, value in variants:
        cases = pair_cases(second.hits, variant, pair_cases(first.hits, variant, common))
        if cases:
            rows.append(
                _row(
                    f"recall change, {attribute} → {value} (pp)",
                    False,
                    "nearer 0",
                    len(cases),
                    bias_draws(first.hits, variant, cases),
                    bias_draws(second.hits, variant, cases),
                )
            )
    return pl.DataFrame(rows, schema=list(COMPARISON_COLUMNS), orient="row")


#: The extrinsic benchmark's paired comparison.
PAIRED = Paired("CLIMB extrinsic: recall and recall change", NOTE, prepare, compare)
