"""``climb-vllm bench --report N``: the report over N synthetic full-size run directories.

Each synthetic run holds what a real full run stores: CLIMB intrinsic records for every code of
the 2021 release x the 30 distinct names (log-probabilities with per-name base rates, per-code
effects and noise, so that the metrics are not degenerate) with calibration and sensitivity
records, and one answer per DiseaseMatcher question (all 32,000) and per BiasMD statement and
control, in the answer shapes of the grading benchmark. Baseline in the same run: the paper's
intrinsic tables of one run by the reference Polars implementation (``metrics.py``, point
estimates only), against the same tables with intervals by the matrix implementation.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from climb_vllm.core.store import RunStore


def _intrinsic(store: RunStore, model: str, rng: np.random.Generator) -> None:
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


def _answers(store: RunStore, model: str, benchmark: str, rng: np.random.Generator) -> int:
    from climb_vllm.benchmarks.hive.config import GenerationConfig
    from climb_vllm.benchmarks.hive.perf import _BM_ANSWERS, _DM_ANSWERS, _REASONING
    from climb_vllm.benchmarks.hive.run import items_for

    config = GenerationConfig(model=model, benchmark=benchmark, split="all")  # type: ignore[arg-type]
    store.claim(benchmark, config.hashed_fields(), config.config_hash())
    items = items_for(benchmark, "all", None, config.seed, config.controls)
    shapes = _DM_ANSWERS if benchmark == "diseasematcher" else _BM_ANSWERS
    picks = rng.integers(0, len(shapes), items.height)
    if benchmark == "diseasematcher":
        fields = items.select("patient1", "patient2", "disease").rows()
        responses = [
            shapes[k].format(a=a, b=b, d=d) + _REASONING for k, (a, b, d) in zip(picks, fields)
        ]
    else:
        fields = items.select("person1", "person2", "pronoun").rows()
        responses = [
            shapes[k].format(a=a, b=b, p=(p or "they").capitalize()) + _REASONING
            for k, (a, b, p) in zip(picks, fields)
        ]
    store.write_chunk(
        benchmark,
        0,
        pl.DataFrame(
            {
                "id": items["id"],
                "sample": 0,
                "seed": 0,
                "response": responses,
                "finish_reason": "stop",
                "completion_tokens": 120,
                "prompt_tokens": 90,
            }
        ),
    )
    return int(items.height)


def synthetic_runs(folder: Path, count: int, seed: int = 0) -> tuple[list[Path], dict[str, int]]:
    """Write ``count`` synthetic full-size run directories under ``folder``."""
    rng = np.random.default_rng(seed)
    runs = []
    sizes: dict[str, int] = {}
    for i in range(count):
        root = folder / f"model-{i}"
        store = RunStore(root)
        model = f"synthetic-model-{i}"
        _intrinsic(store, model, rng)
        for benchmark in ("biasmd", "diseasematcher"):
            sizes[benchmark] = _answers(store, model, benchmark, rng)
        runs.append(root)
    return runs, sizes


def report_bench(count: int, folder: Path) -> dict[str, Any]:
    """Seconds to write the report over ``count`` synthetic runs, and the baseline."""
    from climb_vllm.benchmarks.intrinsic import metrics
    from climb_vllm.benchmarks.intrinsic.config import DEFAULT_TEMPLATE, IntrinsicConfig
    from climb_vllm.benchmarks.intrinsic.results import intrinsic_tables, slot_frame
    from climb_vllm.benchmarks.intrinsic.task import BENCHMARK, TEMPLATES, IntrinsicTask

    start = time.perf_counter()
    runs, sizes = synthetic_runs(folder, count)
    results: dict[str, Any] = {"runs": count, "synthesis_seconds": time.perf_counter() - start}
    records = RunStore(runs[0]).read_records(BENCHMARK)
    results |= {"intrinsic_records_per_run": records.height} | {
        f"{k}_answers_per_run": v for k, v in sizes.items()
    }
    # The report is timed as a user runs it: the command in a fresh process (imports included),
    # after the synthetic records are flushed to disk so that their write-back does not compete.
    os.sync()
    command = [
        sys.executable,
        "-m",
        "climb_vllm",
        "report",
        *map(str, runs),
        "--out",
        str(folder / "report"),
    ]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    results["report_seconds"] = time.perf_counter() - start
    results["report_command"] = " ".join(command[2:])
    # Baseline: the reference implementation's point estimates of Tables 1-3 for one run.
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
    store = RunStore(runs[0])
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
    results["speedup_tables_vs_reference"] = (
        results["reference_tables_1_3_one_run_seconds"]
        / results["matrix_all_intrinsic_tables_one_run_seconds"]
    )
    return results
