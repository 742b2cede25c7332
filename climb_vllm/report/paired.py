"""Paired comparisons of a base model and its LoRA adapters on the same items.

Runs are paired when one was made with ``--adapter`` and another of the same model without it.
Because both answer the same items, the report shows differences (adapter − base) with paired
intervals instead of two independent ones:

* intrinsic: Table 1's AssocMAD (8 groups, sex-neutral codes) per level; the codes must be the
  same in both runs. The interval resamples names within each group, the same resampled names
  for both runs, so it is the interval of the per-code differences averaged over codes.
* BiasMD / DiseaseMatcher: the paper's accuracy (BiasMD: items, controls left out); per item
  the share of correct samples in each run, the difference averaged over the items both runs
  answered, with a bootstrap over those items (each drawn with both of its answers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from climb_vllm.core.resampling import mean_interval
from climb_vllm.core.store import RunStore

#: Name resamples of the intrinsic difference (the same count as Table 1's intervals).
RESAMPLES = 200


def _adapter(manifest: dict[str, Any]) -> tuple[str, str | None] | None:
    """(model, adapter) of a run from the first benchmark section that has a configuration."""
    for section in manifest.get("benchmarks", {}).values():
        config = section.get("config")
        if isinstance(config, dict) and "model" in config:
            return str(config["model"]), config.get("adapter")
    return None


def pairs(manifests: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(base index, adapter index) for every adapter run whose base model has a run here."""
    facts = [_adapter(m) for m in manifests]
    bases = {f[0]: i for i, f in enumerate(facts) if f is not None and not f[1]}
    return [
        (bases[f[0]], i) for i, f in enumerate(facts) if f is not None and f[1] and f[0] in bases
    ]


def intrinsic_difference(base: Path, other: Path, seed: int = 0) -> pl.DataFrame | None:
    """AssocMAD by level of both runs and their paired difference, or None when either run has
    no finished intrinsic benchmark or they scored different codes."""
    from climb_vllm.benchmarks.intrinsic.config import IntrinsicConfig
    from climb_vllm.benchmarks.intrinsic.results import LEVEL_LABELS, table1_resamples
    from climb_vllm.benchmarks.intrinsic.task import IntrinsicTask

    values = []
    chosen = None
    for root in (base, other):
        store = RunStore(root)
        if not store.finished_chunks("intrinsic"):
            return None
        config = IntrinsicConfig.from_section(store.section("intrinsic"))
        task = IntrinsicTask.from_config(config)
        if chosen is not None and (task.codes, task.distinct_names) != chosen:
            return None
        chosen = (task.codes, task.distinct_names)
        records = store.read_records("intrinsic")
        values.append(table1_resamples(records, task, config.top_k, RESAMPLES, seed))
    difference = values[1] - values[0]
    low, high = np.nanpercentile(difference[:, 1:], [2.5, 97.5], axis=1)
    return pl.DataFrame(
        {
            "level": list(LEVEL_LABELS),
            "base": values[0][:, 0],
            "adapter": values[1][:, 0],
            "difference": difference[:, 0],
            "ci_low": low,
            "ci_high": high,
        }
    )


def _item_accuracy(root: Path, benchmark: str) -> pl.DataFrame | None:
    """Per item id, the share of its samples graded correct (BiasMD: items only)."""
    path = root / "results" / benchmark / "graded.parquet"
    if not path.is_file():
        return None
    graded = pl.read_parquet(path)
    if "kind" in graded.columns:
        graded = graded.filter(pl.col("kind") != "control")
    return graded.group_by("id").agg(pl.col("correct").cast(pl.Float64).mean().alias("accuracy"))


def hive_difference(base: Path, other: Path, benchmark: str) -> pl.DataFrame | None:
    """Accuracy of both runs on their common items and the paired difference (points), or None
    when either run lacks the benchmark's graded answers."""
    a, b = _item_accuracy(base, benchmark), _item_accuracy(other, benchmark)
    if a is None or b is None:
        return None
    joined = a.join(b, on="id", suffix="_adapter")
    if joined.height == 0:
        return None
    change = (joined["accuracy_adapter"] - joined["accuracy"]).to_numpy() * 100
    low, high = mean_interval(change)
    return pl.DataFrame(
        {
            "items": [joined.height],
            "base": [float(joined["accuracy"].mean()) * 100],  # type: ignore[arg-type]
            "adapter": [float(joined["accuracy_adapter"].mean()) * 100],  # type: ignore[arg-type]
            "difference": [float(change.mean())],
            "ci_low": [low],
            "ci_high": [high],
        }
    )


def paired_tables(
    roots: list[Path], labels: list[str], manifests: list[dict[str, Any]]
) -> dict[str, pl.DataFrame]:
    """Every paired comparison among the runs, one table per benchmark (rows: adapter runs).

    Args:
        roots: the run directories.
        labels: their labels in the report.
        manifests: their manifests.
    """
    out: dict[str, list[pl.DataFrame]] = {}
    for base, other in pairs(manifests):
        head = {"adapter run": labels[other], "base run": labels[base]}
        found = {"intrinsic": intrinsic_difference(roots[base], roots[other])}
        for benchmark in ("biasmd", "diseasematcher"):
            found[benchmark] = hive_difference(roots[base], roots[other], benchmark)
        for benchmark, frame in found.items():
            if frame is not None:
                out.setdefault(benchmark, []).append(
                    frame.select(*(pl.lit(v).alias(k) for k, v in head.items()), pl.all())
                )
    return {benchmark: pl.concat(frames) for benchmark, frames in out.items()}
