"""``climb-vllm bench --mapping-accuracy [N]``: how often a mapper finds the code a coder would
assign, for the project's mapper and CliBench's, side by side in one run.

The labelled sets (``climb_vllm/data/mapping/``, written for the project; see the SOURCE.md
there) hold diagnoses as clinicians write them, each with the billable code a coder would
assign in the 2021 release, or none for a negated one ("no evidence of PE"). Each string is
read as one diagnosis point (:meth:`~climb_vllm.icd_mapping.icdmap.Mapper.map_points`),
over every code of the release. Splits (:data:`SPLITS`): the first set's development part and
the third held out while its rules were written (CRC-32 of the text mod 3 = 0), the second
set's halves, its held-out half fixed before any rule was written for it, and the third set's
parts (disease names written by DiseaseDecipher's authors), its held-out part fixed likewise,
and four more sets of such names, all held out (the seventh coded after the lay names of
:mod:`~climb_vllm.resources.icd_terms` were written; none read when its clinical names were),
and an eighth set written for the project like the first two, in the words of a discharge
diagnosis list, all held out.

A string is correct at level L when the first predicted code has the gold code's level-L
ancestor (L1 chapter, L3 category, L5 the code itself); a negated string is correct at every
level when nothing is predicted. Accuracy is given for the whole set, for each split and for
each kind of string, and for the sets held out whole pooled (:data:`POOLED`), with a 95%
bootstrap interval over strings (N resamples).

The abbreviations in context (:mod:`~climb_vllm.icd_mapping.senses`) are scored the
same way, each point mapped with its context and without it.
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
    from climb_vllm.icd_mapping.icdmap import Mapper
    from climb_vllm.resources.ontology import Ontology

#: The levels reported (names as in the ontology).
REPORTED = {"L1": 0, "L3": 2, "L5": 4}
#: The splits of the labelled sets, in report order.
SPLITS = (
    "development",
    "held_out",
    "development_2",
    "held_out_2",
    "development_3",
    "held_out_3",
    "held_out_4",
    "held_out_5",
    "held_out_6",
    "held_out_7",
    "held_out_8",
)
#: The sets held out whole, pooled in the report (``<mapper>_<level>_pooled_held_out``): every
#: string of each was written before the rules it measures, and none by the mapper's output.
POOLED = ("held_out_4", "held_out_5", "held_out_6", "held_out_7", "held_out_8")
#: The packaged labelled sets; a file without a ``split`` column splits by CRC-32 mod 3.
PACKAGED = (
    "clinician_diagnoses.tsv",
    "clinician_diagnoses_2.tsv",
    "disease_names_3.tsv",
    "disease_names_4.tsv",
    "disease_names_5.tsv",
    "disease_names_6.tsv",
    "disease_names_7.tsv",
    "clinician_diagnoses_8.tsv",
)


@dataclass(frozen=True)
class Labelled:
    """One labelled string.

    Attributes:
        text: the diagnosis as written.
        code: the code a coder would assign ("" when the text negates its diagnosis).
        kind: abbreviation, lay, eponym, specificity, title_variant, status_post, history,
            family_history, rule_out, negation, misspelling, combination, qualifier or
            answer_style (a diagnosis as a discharge list words it, with its qualifiers).
        split: one of :data:`SPLITS`.
    """

    text: str
    code: str
    kind: str
    split: str


def _first_split(text: str) -> str:
    """The first set's split: the third kept aside while its rules were written."""
    return "held_out" if zlib.crc32(text.encode()) % 3 == 0 else "development"


def load_labelled(path: Path | None = None) -> list[Labelled]:
    """The packaged labelled sets, or the TSV ``path`` with columns ``text, code, kind`` and
    optionally ``split`` (one of :data:`SPLITS`; without it, the first set's rule)."""
    sources = [path] if path else [packaged("mapping", name) for name in PACKAGED]
    labelled: list[Labelled] = []
    for source in sources:
        with source.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
        if not rows or {"text", "code", "kind"} - set(rows[0]):
            raise UserError(
                f"{source} is not a labelled mapping set.", "give it columns text, code, kind."
            )
        for number, row in enumerate(rows, start=2):
            split = row.get("split") or _first_split(row["text"])
            if split not in SPLITS:
                raise UserError(
                    f"{source} line {number}: unknown split {split!r}.",
                    f"use one of {', '.join(SPLITS)}, or leave the column out.",
                )
            labelled.append(Labelled(row["text"], (row["code"] or "").strip(), row["kind"], split))
    return labelled


@dataclass(frozen=True)
class InContext:
    """One abbreviation written in a context.

    Attributes:
        text: the diagnosis point as written ("CAP").
        code: the code a coder would assign in that context.
        context: the note excerpt or the answer's other diagnoses.
        split: "development" or "held_out".
    """

    text: str
    code: str
    context: str
    split: str


def load_contexts() -> list[InContext]:
    """The packaged abbreviations in context (SOURCE.md in ``climb_vllm/data/mapping``)."""
    source = packaged("mapping", "abbreviation_contexts.tsv")
    with source.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [InContext(r["text"], r["code"], r["context"], r["split"]) for r in rows]


def context_accuracy(
    ontology: Ontology, mapper: Mapper, items: list[InContext], resamples: int
) -> tuple[dict[str, Any], list[list[str]]]:
    """(figures, rows of the items CSV) of the abbreviations in context, each point mapped
    with its context and without."""
    rng = np.random.default_rng(1)
    splits = np.array([i.split for i in items])
    with_context = mapper.map_points([i.text for i in items], [i.context for i in items])
    without = mapper.map_points([i.text for i in items])
    results: dict[str, Any] = {"context_items": len(items)}
    for name, points in (("context", with_context), ("no_context", without)):
        right = np.array([correct(ontology, i.code, p.codes) for i, p in zip(items, points)])
        for level in ("L3", "L5"):
            for split in ("development", "held_out"):
                flags = right[splits == split, REPORTED[level]].astype(float)
                low, high = _interval(flags, resamples, rng)
                results[f"{name}_{level}_{split}"] = float(flags.mean())
                results[f"{name}_{level}_{split}_ci95"] = f"{low:.3f}-{high:.3f}"
    rows = [
        [i.text, i.split, i.code, " ".join(a.codes), a.sense, " ".join(b.codes), b.sense, i.context]
        for i, a, b in zip(items, with_context, without)
    ]
    return results, rows


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
    from climb_vllm.icd_mapping.icdmap import Mapper
    from climb_vllm.icd_mapping.title_index import build_or_load
    from climb_vllm.resources.encoder import Encoder
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
    results: dict[str, Any] = {"strings": len(labelled)}
    for split in SPLITS:
        results[f"{split}_strings"] = int((splits == split).sum())
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
            for split in SPLITS:
                part = flags[splits == split]
                low, high = _interval(part, resamples, rng)
                results[f"{name}_{level}_{split}"] = float(part.mean()) if part.size else None
                results[f"{name}_{level}_{split}_ci95"] = f"{low:.3f}-{high:.3f}"
            pooled = flags[np.isin(splits, POOLED)]
            low, high = _interval(pooled, resamples, rng)
            results[f"{name}_{level}_pooled_held_out"] = float(pooled.mean())
            results[f"{name}_{level}_pooled_held_out_ci95"] = f"{low:.3f}-{high:.3f}"
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
    figures, rows = context_accuracy(ontology, mappers["default"], load_contexts(), resamples)
    results.update(figures)
    context_out = out.with_name("mapping_context_items.csv")
    with context_out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "text",
                "split",
                "gold",
                "with_context",
                "sense",
                "without",
                "sense_without",
                "context",
            ]
        )
        writer.writerows(rows)
    results["context_items_csv"] = str(context_out)
    return results
