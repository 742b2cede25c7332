"""The table bench's side of the intrinsic benchmark: a full release's synthetic records, and
the time of its tables by the reference Polars implementation against the matrix one (see
PERFORMANCE.md, "P6")."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from climb_vllm.core.store import RunStore


def synthetic_records(store: RunStore, model: str, rng: np.random.Generator) -> int:
    """Write a full release's records (every code x the 30 distinct names, with the template
    and calibration records) for ``model`` into ``store``: log-probabilities with per-name
    base rates, per-code effects and noise, so that the metrics are not degenerate. Returns
    the number of code records."""
    from climb_vllm.benchmarks.intrinsic.config import IntrinsicConfig
    from climb_vllm.benchmarks.intrinsic.task import BENCHMARK, TEMPLATES, IntrinsicTask

    config = IntrinsicConfig(model=model)
    task = IntrinsicTask.from_config(config)
    store.claim(BENCHMARK, config.hashed_fields(), config.config_hash())
    names = list(task.distinct_names)
    name_effect = rng.normal(-14, 2, len(names))
    codes = list(task.codes)
    code_effect = rng.normal(0, 1.5, len(codes))

    def logprobs(rows: int, effects: np.ndarray) -> np.ndarray:
        noise = rng.normal(0, 0.7, (rows, len(names)))
        values: np.ndarray = (effects[:, None] + name_effect[None, :] + noise).ravel()
        return values

    for index, start in enumerate(range(0, len(codes), config.chunk_size)):
        chunk = codes[start : start + config.chunk_size]
        store.write_chunk(
            BENCHMARK,
            index,
            pl.DataFrame(
                {
                    "code": np.repeat(chunk, len(names)),
                    "name": np.tile(names, len(chunk)),
                    "logprob": logprobs(len(chunk), code_effect[start : start + len(chunk)]),
                }
            ),
        )
    for index, (template, keys, _) in enumerate(task.template_prompts(config)):
        free = [k.startswith("cf:") for k in keys]
        store.write_chunk(
            TEMPLATES,
            index,
            pl.DataFrame(
                {
                    "template": template,
                    "kind": np.repeat(["content-free" if f else "code" for f in free], len(names)),
                    "code": np.repeat([k.removeprefix("cf:") for k in keys], len(names)),
                    "name": np.tile(names, len(keys)),
                    "logprob": logprobs(len(keys), rng.normal(0, 1.5, len(keys))),
                }
            ),
        )
    return len(codes) * len(names)


def table_baseline(run: Path) -> dict[str, Any]:
    """On one synthetic run: the paper's Tables 1-3 by the reference Polars implementation
    (``metrics.py``, point estimates only) against every intrinsic table with intervals by the
    matrix implementation, and the shares of the names-alone null and the corrected AssocMAD."""
    from climb_vllm.benchmarks.intrinsic import metrics
    from climb_vllm.benchmarks.intrinsic.config import DEFAULT_TEMPLATE, IntrinsicConfig
    from climb_vllm.benchmarks.intrinsic.results import intrinsic_tables, slot_frame
    from climb_vllm.benchmarks.intrinsic.task import BENCHMARK, TEMPLATES, IntrinsicTask

    results: dict[str, Any] = {}
    records = RunStore(run).read_records(BENCHMARK)
    task = IntrinsicTask.from_config(IntrinsicConfig(model="x"))
    slots = slot_frame(task, 5)
    levels = task.ontology.table.select("code", *metrics.LEVELS)
    specific = task.ontology.female_only | task.ontology.male_only
    neutral = [c for c in task.codes if c not in specific]
    start = time.perf_counter()
    metrics.assoc_mad_by_level(records, slots, levels, neutral)
    for attribute in ("sex", "ethnicity"):
        metrics.assoc_mad_by_level(records, slots, levels, neutral, groups=(attribute,))
    metrics.sex_preference(
        records, slots, sorted(task.ontology.female_only), sorted(task.ontology.male_only)
    )
    results["reference_tables_1_3_one_run_seconds"] = time.perf_counter() - start
    store = RunStore(run)
    start = time.perf_counter()
    intrinsic_tables(records, task, 5, store.read_records(TEMPLATES), DEFAULT_TEMPLATE)
    results["matrix_all_intrinsic_tables_one_run_seconds"] = time.perf_counter() - start
    # The names-alone null's share: the same tables without it, in the same run.
    start = time.perf_counter()
    intrinsic_tables(
        records, task, 5, store.read_records(TEMPLATES), DEFAULT_TEMPLATE, permutations=0
    )
    results["matrix_tables_without_null_seconds"] = time.perf_counter() - start
    results["names_alone_null_seconds"] = (
        results["matrix_all_intrinsic_tables_one_run_seconds"]
        - results["matrix_tables_without_null_seconds"]
    )
    # The corrected AssocMAD's share (raw and calibrated Tables 1 and 2), likewise.
    start = time.perf_counter()
    intrinsic_tables(records, task, 5, store.read_records(TEMPLATES), DEFAULT_TEMPLATE, draws=0)
    results["matrix_tables_without_correction_seconds"] = time.perf_counter() - start
    results["corrected_assoc_mad_seconds"] = (
        results["matrix_all_intrinsic_tables_one_run_seconds"]
        - results["matrix_tables_without_correction_seconds"]
    )
    # The names-per-group projection's share (:mod:`.design`), likewise.
    start = time.perf_counter()
    intrinsic_tables(
        records, task, 5, store.read_records(TEMPLATES), DEFAULT_TEMPLATE, design=False
    )
    results["names_design_seconds"] = results["matrix_all_intrinsic_tables_one_run_seconds"] - (
        time.perf_counter() - start
    )
    results["speedup_tables_vs_reference"] = (
        results["reference_tables_1_3_one_run_seconds"]
        / results["matrix_all_intrinsic_tables_one_run_seconds"]
    )
    return results
