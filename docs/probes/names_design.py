"""Probe: does the names-per-group table's projection agree with what K names really give?

Not part of the package. Two checks, each printed one line per K:

* ``--run DIR``, a finished intrinsic run with ``--top-k 50``: each group's 50 names stand for
  its population. Replication: K names per group drawn at random from the 50, the corrected
  interval computed as a run computes it, the median width and power over the draws. Projection:
  :func:`climb_vllm.benchmarks.intrinsic.design.project` from one draw of 5 names per group (as
  a run at the paper's K would make it), repeated for several such draws.
* ``--simulate``: the same on synthetic populations with a known truth
  (:mod:`climb_vllm.benchmarks.intrinsic.coverage`'s scenarios, 300 names per group).

Run: ``PYTHONPATH=. .venv/bin/python docs/probes/names_design.py --run RUN_DIR`` or
``PYTHONPATH=. .venv/bin/python docs/probes/names_design.py --simulate``
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import polars as pl

from climb_vllm.benchmarks.intrinsic import coverage, design
from climb_vllm.benchmarks.intrinsic.assoc import NameGroups
from climb_vllm.benchmarks.intrinsic.config import IntrinsicConfig
from climb_vllm.benchmarks.intrinsic.correction import corrected_assoc_mad
from climb_vllm.benchmarks.intrinsic.results import CodeLists, run_matrix, slot_frame
from climb_vllm.benchmarks.intrinsic.task import IntrinsicTask
from climb_vllm.core.store import RunStore

SIZES = (5, 10, 20, 50)

Draw = Callable[[int, np.random.Generator], tuple[np.ndarray, NameGroups]]


def replicate(
    draw: Draw, levels: Mapping[str, np.ndarray], replications: int, seed: int
) -> dict[int, tuple[float, float, float]]:
    """Median width and power (mean of L1-L5), and L1's median width, of the corrected
    interval at each K."""
    rng = np.random.default_rng(seed)
    out = {}
    for k in SIZES:
        widths, found, first = [], [], []
        for r in range(replications):
            logp, groups = draw(k, rng)
            table = corrected_assoc_mad(logp, groups, levels, design.DRAWS, r)["both"]
            widths.append(table[-1, 3] - table[-1, 2])
            found.append(table[-1, 2] > 0)
            first.append(table[0, 3] - table[0, 2])
        out[k] = (float(np.median(widths)), float(np.mean(found)), float(np.median(first)))
    return out


def compare(name: str, draw: Draw, levels: Mapping[str, np.ndarray], starts: int) -> None:
    """Print the replication and ``starts`` projections from K = 5, one line per K."""
    truth = replicate(draw, levels, 30, 1)
    rng = np.random.default_rng(2)
    projected: dict[int, list[float]] = {k: [] for k in SIZES}
    first: dict[int, list[float]] = {k: [] for k in SIZES}
    for s in range(starts):
        logp, groups = draw(5, rng)
        for row in design.project(logp, groups, levels, SIZES, seed=s):
            projected[row["k"]].append(row["width"])
            first[row["k"]].append(row["width_l1"])
    print(
        f"{name}: K | replicated width, power | projected width (median, range) | ratio | "
        "L1: replicated, projected"
    )
    for k in SIZES:
        widths = projected[k]
        print(
            f"  {k} | {truth[k][0]:.3f}, {truth[k][1]:.2f} | {np.median(widths):.3f} "
            f"({min(widths):.3f}-{max(widths):.3f}) | "
            f"{np.median(widths) / truth[k][0]:.2f} | {truth[k][2]:.3f}, {np.median(first[k]):.3f}"
        )


def from_run(root: Path) -> None:
    store = RunStore(root)
    config = IntrinsicConfig.from_section(store.section("intrinsic"))
    task = IntrinsicTask.from_config(config)
    names = list(task.distinct_names)
    codes = list(task.codes)
    logp = run_matrix(store.read_records("intrinsic"), codes, names, "incomplete")
    listed = CodeLists.of(codes, task, task.ontology.sex_lists(config.sex_rule))
    rows = np.flatnonzero(listed.neutral)
    levels = {k: v[rows] for k, v in listed.level_ids.items()}
    slots = slot_frame(task, config.top_k)
    parts = slots.partition_by("sex", "ethnicity", maintain_order=True)

    def draw(k: int, rng: np.random.Generator) -> tuple[np.ndarray, NameGroups]:
        chosen = pl.concat([p.sample(k, seed=int(rng.integers(1 << 31))) for p in parts])
        return logp[rows], NameGroups.from_slots(chosen, names)

    compare(
        f"{root} ({len(rows):,} sex-neutral codes, {config.top_k} names per group)", draw, levels, 5
    )


def simulated() -> None:
    codes, size = 600, 300
    levels = {"l1": (np.arange(codes) // 60).astype(str), "l5": np.arange(codes).astype(str)}
    for scenario in coverage.SCENARIOS + coverage.HELD_OUT:
        population = np.log(coverage._population(np.random.default_rng(0), scenario, codes, size))

        def draw(
            k: int, rng: np.random.Generator, population: np.ndarray = population
        ) -> tuple[np.ndarray, NameGroups]:
            picks = [rng.choice(size, k, replace=False) for _ in range(coverage.GROUPS)]
            matrix = np.concatenate([population[g, picks[g]].T for g in range(8)], axis=1)
            return matrix, design._groups_of(coverage._groups(), k)

        compare(f"scenario {scenario.name}", draw, levels, 5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="a finished intrinsic run with --top-k 50")
    parser.add_argument("--simulate", action="store_true", help="synthetic populations")
    args = parser.parse_args()
    if args.run:
        from_run(args.run)
    if args.simulate:
        simulated()


if __name__ == "__main__":
    main()
