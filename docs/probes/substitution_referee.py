"""Probe: can a small language model say whose a pronoun is, by Trinh and Le's substitution test?

Not part of the package. For each of WinoGender's 196 development sentences (Rudinger et al.
2018, participant renamed "the patient"; read from ``../shared/data/winogender/``), the pronoun
is replaced by "the patient" and by "the <occupation>" ("the patient's" for a possessive, told by
the sentence's male twin: "his" there), and the rest of the sentence is scored after each
(partial scoring) and the whole sentence too (full scoring), with the project's in-process
engine. The candidate whose text scores higher is the referent. A margin for "certain" is
chosen on one half of the occupations (the smallest margin above which every decision of that
half is right) and read on the other half, then the halves swap.

Run: ``PYTHONPATH=. .venv/bin/python docs/probes/substitution_referee.py [MODEL]`` (default:
the converted Gemma 3 270M).
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path
from typing import Any

from climb_vllm.engines.base import ScoreRequest
from climb_vllm.engines.local import LocalEngine
from climb_vllm.models.sources import resolve

ROOT = Path(__file__).parents[2]
WINOGENDER = ROOT.parent / "shared" / "data" / "winogender" / "winogender_patient_dev.tsv"
PRONOUN = re.compile(r"\b(he|she|him|her|his|hers)\b", re.IGNORECASE)


def candidates(row: dict[str, str], possessive: bool) -> dict[str, tuple[str, str]]:
    """(text up to and with the candidate, the rest) for the patient and the occupation."""
    sentence = row["sentence"]
    (match,) = PRONOUN.finditer(sentence)
    out = {}
    for who, phrase in (("patient", "the patient"), ("other", f"the {row['occupation']}")):
        if possessive:
            phrase += "'s"
        if match.start() == 0:
            phrase = phrase[0].upper() + phrase[1:]
        out[who] = (sentence[: match.start()] + phrase, sentence[match.end() :])
    return out


def margin_rule(calibration: list[tuple[float, bool]]) -> float:
    """The smallest margin above which every calibration decision is right."""
    wrong = [m for m, right in calibration if not right]
    return max(wrong, default=0.0)


def main() -> None:
    rows = list(csv.DictReader(WINOGENDER.open(), delimiter="\t"))
    twin = {r["id"]: r for r in rows}
    engine = LocalEngine(resolve(sys.argv[1] if len(sys.argv) > 1 else "gemma-3-270m"))
    tokenizer = engine.tokenizer
    bos = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    requests, keys = [], []
    for row in rows:
        male = twin[row["id"].replace(".female.", ".male.")]["sentence"]
        possessive = bool(re.search(r"\bhis\b", male, re.IGNORECASE))
        for who, (head, rest) in candidates(row, possessive).items():
            encode = tokenizer(head, add_special_tokens=False)["input_ids"]
            tail = tokenizer(rest, add_special_tokens=False)["input_ids"]
            whole = tokenizer(head + rest, add_special_tokens=False)["input_ids"]
            requests.append(ScoreRequest(tuple(bos + encode), (tuple(tail),)))
            requests.append(ScoreRequest(tuple(bos), (tuple(whole),)))
            keys.append((row["id"], who))
    results = engine.score(requests)
    scores: dict[str, dict[str, tuple[float, float]]] = {}
    for n, (key, who) in enumerate(keys):
        pair = (results[2 * n].logprobs[0], results[2 * n + 1].logprobs[0])
        scores.setdefault(key, {})[who] = pair
    occupations = sorted({r["occupation"] for r in rows})
    half = {o: n % 2 for n, o in enumerate(occupations)}
    print("scoring | right | sentences | patient sentences right | certain (held-out halves) |")
    for k, name in ((0, "partial"), (1, "full")):
        decided: list[dict[str, Any]] = []
        for row in rows:
            margin = scores[row["id"]]["patient"][k] - scores[row["id"]]["other"][k]
            truth = row["pronoun_refers_to"] == "patient"
            decided.append(
                {
                    "half": half[row["occupation"]],
                    "margin": abs(margin),
                    "right": (margin > 0) == truth,
                    "patient": truth,
                }
            )
        right = sum(d["right"] for d in decided)
        patients = [d for d in decided if d["patient"]]
        held = []
        for test in (0, 1):
            rule = margin_rule([(d["margin"], d["right"]) for d in decided if d["half"] != test])
            above = [d for d in decided if d["half"] == test and d["margin"] > rule]
            held.append(
                f"{sum(d['right'] for d in above)} of {len(above)} right (margin > {rule:.2f})"
            )
        print(
            f"{name} | {right} | {len(decided)} | {sum(d['right'] for d in patients)} of "
            f"{len(patients)} | {'; '.join(held)} |"
        )


if __name__ == "__main__":
    main()
