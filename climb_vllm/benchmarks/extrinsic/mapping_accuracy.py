"""``climb-vllm bench --mapping-accuracy [N]``: how often a mapper finds the code a coder would
assign, for the project's mapper and CliBench's, side by side in one run.

The labelled set (``climb_vllm/data/mapping/clinician_diagnoses.tsv``, written for the project;
see the SOURCE.md beside it) holds diagnoses as clinicians write them, each with the billable
code a coder would assign in the 2021 release, or none for a negated one ("no evidence of PE").
Each string is read as one diagnosis point (:meth:`~climb_vllm.benchmarks.extrinsic.icdmap.
Mapper.map_points`), over every code of the release.

A string is correct at level L when the first predicted code has the gold code's level-L
ancestor (L1 chapter, L3 category, L5 the code itself); a negated string is correct at every
level when nothing is predicted. Accuracy is given for the whole set, for the third of the set
held out while the rules were written (``split`` "held_out": CRC-32 of the text mod 3 = 0) and
for each kind of string, with a 95% bootstrap interval over strings (N resamples).
"""

from __future__ import annotations

import csv
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from climb_vllm.core.errors import UserError
from climb_vllm.resources.data import packaged

if TYPE_CHECKING:
    from climb_vllm.benchmarks.extrinsic.icdmap import Mapper
    from climb_vllm.resources.ontology import Ontology

#: The levels reported (names as in the ontology).
REPORTED = {"L1": 0, "L3": 2, "L5": 4}


@dataclass(frozen=True)
class Labelled:
    """One labelled string.

    Attributes:
        text: the diagnosis as written.
        code: the code a coder would assign ("" when the text negates its diagnosis).
        kind: abbreviation, lay, eponym, specificity, title_variant, status_post, history,
            family_history, rule_out or negation.
    """

    text: str
    code: str
    kind: str

    @property
    def split(self) -> str:
        """ "held_out" for the third of the set kept aside while the rules were written."""
        return "held_out" if zlib.crc32(self.text.encode()) % 3 == 0 else "development"


def load_labelled(path: Path | None = None) -> list[Labelled]:
    """The labelled set (the packaged one unless ``path`` names another TSV with columns
    ``text, code, kind``)."""
    source = path or packaged("mapping", "clinician_diagnoses.tsv")
    with source.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if not rows or {"text", "code", "kind"} - set(rows[0]):
        raise UserError(
            f"{source} is not a labelled mapping set.", "give it columns text, code, kind."
        )
    return [Labelled(r["text"], (r["code"] or "").strip(), r["kind"]) for r in rows]


def correct(ontology: Ontology, gold: str, predicted: tuple[str, ...]) -> list[bool]:
    """Whether ``predicted`` is right at L1..L5 for ``gold`` (see the module docstring)."""
    if not gold:
        return [not predicted] * 5
    if not predicted:
        return [False] * 5
    mine, theirs = ontology.levels(predicted[0]), ontology.levels(gold)
    return [a == b for a, b in zip(mine, theirs)]


def _interval(flags: np.ndarray, resamples: int, rng: np.random.Generator) -> tuple[float, float]:
    """95% bootstrap interval of the mean of ``flags``."""
    if flags.size == 0:
        return float("nan"), float("nan")
    means = flags[rng.integers(0, flags.size, size=(resamples, flags.size))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def score(
    ontology: Ontology, mapper: Mapper, labelled: list[Labelled]
) -> tuple[np.ndarray, list[tuple[str, ...]], list[str], float]:
    """(right: strings x 5 booleans, predictions, qualifiers, seconds) of one mapper."""
    start = time.perf_counter()
    points = mapper.map_points([item.text for item in labelled])
    seconds = time.perf_counter() - start
    right = np.array([correct(ontology, i.code, p.codes) for i, p in zip(labelled, points)])
    return right, [p.codes for p in points], [p.qualifier for p in points], seconds


def mapping_accuracy_bench(resamples: int, items_out: Path | None = None) -> dict[str, Any]:
    """Both mappers on the labelled set over the full 2021 release; see the module docstring.

    Args:
        resamples: bootstrap resamples for the intervals.
        items_out: a CSV of every string's predictions (default
            ``outputs/bench/mapping_accuracy_items.csv``).
    """
    from climb_vllm.benchmarks.extrinsic.icdmap import Mapper
    from climb_vllm.benchmarks.extrinsic.title_index import Encoder, build_or_load
    from climb_vllm.resources.ontology import load_ontology

    ontology = load_ontology("2021")
    labelled = load_labelled()
    unknown = [i.code for i in labelled if i.code and not ontology.is_billable(i.code)]
    if unknown:
        raise UserError(f"Gold codes not billable in 2021: {unknown[:5]}.", "fix the labelled set.")
    encoder = Encoder(device="cpu")
    mappers = {
        "default": Mapper(
            ontology, build_or_load(ontology, None, encoder, display="plain", names=True), encoder
        ),
        "clibench": Mapper(
            ontology,
            build_or_load(ontology, None, encoder, display="plain"),
            encoder,
            protocol="clibench",
        ),
    }
    rng = np.random.default_rng(0)
    splits = np.array([i.split for i in labelled])
    kinds = np.array([i.kind for i in labelled])
    results: dict[str, Any] = {
        "strings": len(labelled),
        "held_out_strings": int((splits == "held_out").sum()),
    }
    predictions: dict[str, list[tuple[str, ...]]] = {}
    qualifiers: list[str] = []
    for name, mapper in mappers.items():
        right, predicted, found, seconds = score(ontology, mapper, labelled)
        predictions[name] = predicted
        if name == "default":
            qualifiers = found
        results[f"{name}_map_s"] = seconds
        for level, column in REPORTED.items():
            flags = right[:, column].astype(float)
            low, high = _interval(flags, resamples, rng)
            results[f"{name}_{level}"] = float(flags.mean())
            results[f"{name}_{level}_ci95"] = f"{low:.3f}-{high:.3f}"
            results[f"{name}_{level}_held_out"] = float(flags[splits == "held_out"].mean())
        for kind in dict.fromkeys(kinds.tolist()):
            mine = right[kinds == kind]
            results[f"{name}_L3_L5_{kind}"] = f"{mine[:, 2].mean():.3f} / {mine[:, 4].mean():.3f}"
    out = items_out or Path("outputs") / "bench" / "mapping_accuracy_items.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "kind", "split", "gold", "default", "qualifier", "clibench"])
        for k, item in enumerate(labelled):
            writer.writerow(
                [
                    item.text,
                    item.kind,
                    item.split,
                    item.code,
                    " ".join(predictions["default"][k]),
                    qualifiers[k],
                    " ".join(predictions["clibench"][k]),
                ]
            )
    results["items_csv"] = str(out)
    return results
