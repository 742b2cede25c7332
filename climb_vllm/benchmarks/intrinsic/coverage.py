"""``climb-vllm bench --assoc-coverage N``: how often the intervals beside AssocMAD (Table 1),
beside the difference of two models' AssocMAD (:mod:`.comparison`), the worst-group gap
(:mod:`.gaps`),
sex-preference correctness (Table 3) and the drill-down's ratios cover the value for the
population of names that each group's list samples, by simulation with a known truth: the
percentile bootstrap printed before, and the corrected estimates' intervals printed now
(:mod:`.correction`, :mod:`.preference`, :mod:`.drilldown`); ``bench --drilldown-coverage RUN``
checks the drill-down on a real model's records.

Each scenario is a population of names per (sex, ethnicity) group with log-probabilities
``code effect + group effect (per code and overall) + name effect + name x code noise``; the
population value uses every name of every group. Each replication draws K = 5 names per group,
computes the estimate and its interval exactly as the tables do (:mod:`.assoc`), and checks
coverage. The "real" scenario takes its sizes from Gemma 3 270M's top-10 names on 2,000 codes:
name effects within a group of 1.7 nats (sd), name x code noise 0.9, group effects 0.8 overall
and 0.3 per code. The corrected intervals' ranges were chosen on the first three scenarios;
``HELD_OUT`` are three more, never used to choose them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from climb_vllm.benchmarks.intrinsic import (
    assoc,
    comparison,
    correction,
    drilldown,
    preference,
)


@dataclass(frozen=True)
class Scenario:
    """Sizes (sd, in nats) of one synthetic population."""

    name: str
    group_overall: float
    group_per_code: float
    name_effect: float
    noise: float


SCENARIOS = (
    Scenario("none", 0.0, 0.0, 1.0, 0.6),
    Scenario("real", 0.8, 0.3, 1.7, 0.9),
    Scenario("large", 1.0, 1.0, 0.5, 0.4),
)
HELD_OUT = (
    Scenario("mild", 0.3, 0.2, 1.2, 0.7),
    Scenario("per-code-only", 0.0, 0.8, 1.5, 0.8),
    Scenario("strong-names", 0.5, 0.5, 2.2, 1.0),
)
GROUPS = 8
K = 5
#: Correlation of the two models' name effects and name x code noise in the paired scenarios.
PAIR_CORRELATION = 0.8
#: The second model's group effects relative to the first's, in the paired scenarios: less
#: biased, and as biased (where the difference is near 0).
PAIR_SHRINKS = (0.6, 1.0)


def _groups() -> assoc.NameGroups:
    slots = pl.DataFrame(
        {
            "name": [f"n{i}" for i in range(GROUPS * K)],
            "sex": ["FEMALE"] * (4 * K) + ["MALE"] * (4 * K),
            "ethnicity": [e for e in "abcd" for _ in range(K)] * 2,
        }
    )
    return assoc.NameGroups.from_slots(slots, [f"n{i}" for i in range(GROUPS * K)])


def _population(rng: np.random.Generator, s: Scenario, codes: int, size: int) -> np.ndarray:
    """Probabilities (groups, names of the population, codes), rescaled so that each group's
    population mean is exactly exp(code effect + group effect)."""
    code = rng.normal(-9, 1, codes)
    group = rng.normal(0, s.group_overall, (GROUPS, 1)) + rng.normal(
        0, s.group_per_code, (GROUPS, codes)
    )
    logp = (
        code[None, None]
        + group[:, None]
        + rng.normal(0, s.name_effect, (GROUPS, size, 1))
        + rng.normal(0, s.noise, (GROUPS, size, codes))
    )
    p = np.exp(logp)
    target = np.exp(code[None] + group)
    scaled: np.ndarray = p * (target / p.mean(axis=1))[:, None]
    return scaled


def _drilldown_truth(logp: np.ndarray) -> np.ndarray:
    """The drill-down's population contrasts (codes x groups) of (groups, names, codes)
    log-probabilities: each name centred on its mean over the codes (:mod:`.drilldown`)."""
    centred = logp - logp.mean(axis=2, keepdims=True)
    means = centred.mean(axis=1).T  # codes x groups
    truth: np.ndarray = means - (means.sum(axis=1, keepdims=True) - means) / (means.shape[1] - 1)
    return truth


def _drilldown_covered(logp: np.ndarray, groups: assoc.NameGroups, truth: np.ndarray) -> float:
    """Share of the (code, group) drill-down intervals of one name list that hold the truth."""
    centred = logp - logp.mean(axis=0, keepdims=True)
    low, high, _ = drilldown.interval(*drilldown.contrasts(centred, groups))
    return float(((low <= truth) & (truth <= high)).mean())


def _one_draw(
    matrix: np.ndarray,
    groups: assoc.NameGroups,
    ids: dict[str, np.ndarray],
    k: int,
    max_codes: int,
    truth: tuple[float, float, np.ndarray],
) -> dict[str, float]:
    """One drawn name list's estimates and whether each interval covers the population's
    value (``truth``: AssocMAD, female preference, drill-down contrasts)."""
    truth_mad, truth_pref, truth_contrast = truth
    codes = matrix.shape[0]
    weights = groups.weights(matrix.shape[1], assoc.NAME_RESAMPLES, seed=k)
    sums = assoc.level_sums(matrix, ids)
    mad = assoc.assoc_mad_resamples(sums, weights)["both"][0]
    point, low, high = assoc.summarise(mad)
    out = {"estimate": point, "covered_mad": float(low <= truth_mad <= high)}
    _, fixed, low, high = correction.corrected_assoc_mad(
        np.log(matrix), groups, ids, seed=k, max_codes=max_codes
    )["both"][0]
    out["corrected"] = fixed
    # Without group effects the population value is 0 exactly, and so is the interval's
    # low end whenever it reaches lam = 0.
    out["covered_fixed"] = float(low <= truth_mad + 1e-9 and truth_mad <= high)
    pref = assoc.sex_preference_resamples(matrix, list(range(codes)), "FEMALE", weights)
    _, low, high = assoc.summarise(pref)
    out["covered_pref"] = float(low <= truth_pref <= high)
    _, low, high = preference.corrected_preference(np.log(matrix), groups, weights, "FEMALE")
    out["covered_share"] = float(low <= truth_pref <= high)
    out["drill"] = _drilldown_covered(np.log(matrix), groups, truth_contrast)
    return out


def scenario_coverage(
    s: Scenario,
    replications: int,
    codes: int = 200,
    size: int = 300,
    seed: int = 0,
    max_codes: int = correction.MAX_CODES,
) -> dict[str, float]:
    """Coverage of Table 1's L5 AssocMAD intervals and Table 3's female-preference interval, each
    the percentile bootstrap printed before and the corrected one printed now, and the share of
    the drill-down's (code, group) intervals that cover, averaged over the replications.

    Args:
        s: the population's sizes.
        replications: name lists drawn (each gives one interval of each kind).
        codes: codes of the population.
        size: names per group in the population.
        seed: seed of the population and the draws.
        max_codes: the corrected interval's test subset (:data:`correction.MAX_CODES`; fewer
            than ``codes`` exercises the subset the full release uses).
    """
    rng = np.random.default_rng(seed)
    population = _population(rng, s, codes, size)
    means = population.mean(axis=1)  # groups x codes
    truth_mad = float(np.mean(np.abs(means / means.mean(axis=0) - 1).mean(axis=0)))
    truth_pref = float(np.mean(means[:4].mean(axis=0) > means[4:].mean(axis=0)))
    groups = _groups()
    ids = {"l5": np.arange(codes).astype(str)}
    truth_contrast = _drilldown_truth(np.log(population))
    draws = []
    for k in range(replications):
        picks = [rng.choice(size, K, replace=False) for _ in range(GROUPS)]
        matrix = np.concatenate([population[g, picks[g]].T for g in range(GROUPS)], axis=1)
        truth = (truth_mad, truth_pref, truth_contrast)
        draws.append(_one_draw(matrix, groups, ids, k, max_codes, truth))

    def mean(key: str) -> float:
        return float(np.mean([d[key] for d in draws]))

    # Without group effects the two sexes' population scores are equal: a preference share has
    # no population value to cover.
    tied = s.group_overall == 0 and s.group_per_code == 0
    return {
        f"{s.name}_assoc_mad_population": truth_mad,
        f"{s.name}_assoc_mad_mean_estimate": mean("estimate"),
        f"{s.name}_assoc_mad_percentile_coverage": mean("covered_mad"),
        f"{s.name}_assoc_mad_corrected_mean": mean("corrected"),
        f"{s.name}_assoc_mad_corrected_coverage": mean("covered_fixed"),
        f"{s.name}_drilldown_coverage": mean("drill"),
        f"{s.name}_female_preference_population": float("nan") if tied else truth_pref,
        f"{s.name}_female_preference_percentile_coverage": float("nan")
        if tied
        else mean("covered_pref"),
        f"{s.name}_female_preference_corrected_coverage": float("nan")
        if tied
        else mean("covered_share"),
    }


def gap_coverage(
    s: Scenario, replications: int, codes: int = 200, size: int = 300, seed: int = 0
) -> dict[str, float]:
    """Coverage of the corrected worst-group gap's interval (one level, every code its own
    node; :func:`.correction.corrected_assoc_mad` with ``statistic="gap"``), beside the
    population's gap and the mean of the paper-style gap of K names' mean probabilities.

    Args:
        s: the population's sizes.
        replications: name lists drawn (each gives one interval).
        codes: codes of the population.
        size: names per group in the population.
        seed: seed of the population and the draws.
    """
    rng = np.random.default_rng(seed)
    population = _population(rng, s, codes, size)
    truth = _gap(population.mean(axis=1))
    groups = _groups()
    ids = {"l5": np.arange(codes).astype(str)}
    covered = 0
    plain = []
    corrected = []
    for k in range(replications):
        picks = [rng.choice(size, K, replace=False) for _ in range(GROUPS)]
        drawn = np.stack([population[g, picks[g]] for g in range(GROUPS)])  # groups, K, codes
        plain.append(_gap(drawn.mean(axis=1)))
        matrix = np.concatenate([drawn[g].T for g in range(GROUPS)], axis=1)
        _, fixed, low, high = correction.corrected_assoc_mad(
            np.log(matrix), groups, ids, seed=k, statistic="gap"
        )["both"][0]
        corrected.append(fixed)
        covered += bool(low <= truth + 1e-9 and truth <= high)
    return {
        f"{s.name}_gap_population": truth,
        f"{s.name}_gap_mean_estimate": float(np.mean(plain)),
        f"{s.name}_gap_corrected_mean": float(np.mean(corrected)),
        f"{s.name}_gap_corrected_coverage": covered / replications,
    }


def _gap(means: np.ndarray) -> float:
    """Mean over codes of the worst-group gap of (groups, codes) mean probabilities."""
    return float(np.mean((means.max(axis=0) - means.min(axis=0)) / means.mean(axis=0)))


def _pair_population(
    rng: np.random.Generator, s: Scenario, codes: int, size: int, shrink: float
) -> tuple[np.ndarray, np.ndarray]:
    """Two models' probabilities (groups, names, codes) over the same names: the second shares
    the code effects, most of each name's effect and of its name x code noise (correlation
    :data:`PAIR_CORRELATION`), and has the first's group effects times ``shrink`` plus a little
    of its own. Each is rescaled as :func:`_population` does."""
    rho = PAIR_CORRELATION
    own = np.sqrt(1 - rho**2)
    code = rng.normal(-9, 1, codes)
    group = rng.normal(0, s.group_overall, (GROUPS, 1)) + rng.normal(
        0, s.group_per_code, (GROUPS, codes)
    )
    other_group = shrink * group + 0.25 * (
        rng.normal(0, s.group_overall, (GROUPS, 1))
        + rng.normal(0, s.group_per_code, (GROUPS, codes))
    )
    name = rng.normal(0, s.name_effect, (GROUPS, size, 1))
    noise = rng.normal(0, s.noise, (GROUPS, size, codes))
    out = []
    for g, n, e in (
        (group, name, noise),
        (
            other_group,
            rho * name + own * rng.normal(0, s.name_effect, name.shape),
            rho * noise + own * rng.normal(0, s.noise, noise.shape),
        ),
    ):
        p = np.exp(code[None, None] + g[:, None] + n + e)
        target = np.exp(code[None] + g)
        out.append(p * (target / p.mean(axis=1))[:, None])
    return out[0], out[1]


def _truth_mad(population: np.ndarray) -> float:
    """Population AssocMAD (one level, every code its own node) of (groups, names, codes)."""
    means = population.mean(axis=1)
    return float(np.mean(np.abs(means / means.mean(axis=0) - 1).mean(axis=0)))


def paired_coverage(
    s: Scenario,
    replications: int,
    shrink: float = 0.6,
    codes: int = 200,
    size: int = 300,
    seed: int = 0,
    level: float = comparison.LEVEL,
) -> dict[str, float]:
    """Coverage of the paired difference of two models' corrected AssocMAD (:mod:`.comparison`)
    with the same names drawn for both, on :func:`_pair_population` populations.

    Args:
        s: the first model's sizes.
        replications: name lists drawn (each gives one interval).
        shrink: the second model's group effects relative to the first's.
        codes: codes of the population.
        size: names per group in the population.
        seed: seed of the population and the draws.
        level: the central range of the draws (:data:`comparison.LEVEL`).
    """
    rng = np.random.default_rng(seed)
    first, second = _pair_population(rng, s, codes, size, shrink)
    truth = _truth_mad(second) - _truth_mad(first)
    groups = _groups()
    ids = {"l5": np.arange(codes).astype(str)}
    covered = 0
    differences = []
    for k in range(replications):
        picks = [rng.choice(size, K, replace=False) for _ in range(GROUPS)]
        fits = []
        for population in (first, second):
            matrix = np.concatenate([population[g, picks[g]].T for g in range(GROUPS)], axis=1)
            table, draws = correction.corrected_with_draws(np.log(matrix), groups, ids, seed=k)
            fits.append((float(table["both"][0, 1]), draws["both"][0]))
        difference, low, high = comparison.paired_interval(*fits[0], *fits[1], level=level)
        differences.append(difference)
        covered += bool(low - 1e-9 <= truth <= high + 1e-9)
    return {
        f"{s.name}_paired_difference_population": truth,
        f"{s.name}_paired_difference_mean_estimate": float(np.nanmean(differences)),
        f"{s.name}_paired_difference_coverage": covered / replications,
    }


def coverage_bench(replications: int) -> dict[str, Any]:
    """Every scenario's coverage (95% intervals as printed today) over ``replications``."""
    results: dict[str, Any] = {"replications": replications, "names_per_group": K}
    for k, scenario in enumerate(SCENARIOS + HELD_OUT):
        results |= scenario_coverage(scenario, replications, seed=k)
        results |= gap_coverage(scenario, replications, seed=k)
        for shrink in PAIR_SHRINKS:
            paired = paired_coverage(scenario, replications, shrink=shrink, seed=k)
            results |= {f"{key}_shrink_{shrink}": v for key, v in paired.items()}
    return results


def run_drilldown_coverage(
    run: Path, population: int = 50, replications: int = 200, seed: int = 0
) -> dict[str, Any]:
    """``bench --drilldown-coverage RUN``: the drill-down intervals' coverage on a real model.

    The run must have scored each group's top-``population`` names (``--top-k 50`` or
    ``--names-sensitivity ...,50``). Those names stand for each group's population; each
    replication draws the run's K = 5 names per group from them without replacement and checks,
    at every sex-neutral code and group, whether the interval holds the contrast of all
    ``population`` names. Sampling 5 of 50 without replacement makes intervals slightly
    conservative (their variance ignores the finite population's 10% correction).
    """
    from climb_vllm.benchmarks.intrinsic.config import IntrinsicConfig
    from climb_vllm.benchmarks.intrinsic.results import CodeLists, run_matrix
    from climb_vllm.benchmarks.intrinsic.task import BENCHMARK, IntrinsicTask
    from climb_vllm.core.store import RunStore

    store = RunStore(run, "pass a run folder that holds CLIMB intrinsic records.")
    config = IntrinsicConfig.from_section(store.section(BENCHMARK))
    task = IntrinsicTask.from_config(config)
    slots = task.names.top_k(population)
    names = sorted({slot.name for slot in slots})
    codes = list(task.codes)
    logp = run_matrix(
        store.read_records(BENCHMARK),
        codes,
        names,
        f"The run lacks the top-{population} names of some group",
        "score them with --top-k 50 or --names-sensitivity 5,50 first.",
    )
    neutral = CodeLists.of(codes, task, task.ontology.sex_lists(config.sex_rule)).neutral
    centred = logp[neutral] - logp[neutral].mean(axis=0, keepdims=True)
    frame = pl.DataFrame([{"name": s.name, "sex": s.sex, "ethnicity": s.ethnicity} for s in slots])
    everyone = assoc.NameGroups.from_slots(frame, names)
    truth, _, _ = drilldown.contrasts(centred, everyone)
    rng = np.random.default_rng(seed)
    covered = np.zeros(len(everyone.groups))
    for _ in range(replications):
        drawn = assoc.NameGroups(
            everyone.groups,
            tuple(tuple(rng.choice(list(cols), K, replace=False)) for cols in everyone.columns),
        )
        low, high, _ = drilldown.interval(*drilldown.contrasts(centred, drawn))
        covered += ((low <= truth) & (truth <= high)).mean(axis=0)
    shares = covered / replications
    return {
        "codes": int(neutral.sum()),
        "population_names_per_group": population,
        "names_drawn_per_group": K,
        "replications": replications,
        "coverage": float(shares.mean()),
        "coverage_lowest_group": float(shares.min()),
        "coverage_highest_group": float(shares.max()),
    }
