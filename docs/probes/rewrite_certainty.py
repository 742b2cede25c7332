"""Probe: how right the sex rewrite's certain edits are, and how many of its errors it marks.

Not part of the package. Prints one line per labelled set: WinoGender's development set
(Rudinger et al. 2018, read from ``../shared/data/winogender/``), then the project's own sets in
``tests/golden/counterfactual/``, then the packaged synthetic cases (no labels: only the share
of edits marked uncertain). The figures are those of :mod:`climb_vllm.rewrite.accuracy`.

Run: ``PYTHONPATH=. .venv/bin/python docs/probes/rewrite_certainty.py``
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from climb_vllm.resources.data import packaged
from climb_vllm.rewrite.accuracy import score, winogender_rows
from climb_vllm.rewrite.sex_rewrite import rewrite

ROOT = Path(__file__).parents[2]
WINOGENDER = ROOT.parent / "shared" / "data" / "winogender" / "winogender_patient_dev.tsv"
GOLDEN = ROOT / "tests" / "golden" / "counterfactual"
SHOWN = ("rows", "words", "edit_accuracy", "certain_edits", "certain_accuracy", "wrong_words")
SHOWN += ("wrong_marked", "missed", "uncertain_share", "review_share", "rows_safe")


def line(name: str, figures: dict[str, Any]) -> str:
    return " | ".join([name, *(str(figures[k]) for k in SHOWN)])


def main() -> None:
    print(" | ".join(["set", *SHOWN]))
    sets: list[tuple[str, list[dict[str, Any]]]] = []
    if WINOGENDER.is_file():
        sets.append(("WinoGender development (others' text)", winogender_rows(WINOGENDER)))
    else:
        print(f"(WinoGender not found at {WINOGENDER}: put ../shared beside the clone)")
    for path in sorted(GOLDEN.glob("*.jsonl"), key=lambda p: (len(p.name), p.name)):
        rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        sets.append((path.stem, rows))
    totals: dict[str, int] = {"words": 0, "certain": 0, "right": 0, "wrong": 0, "marked": 0}
    for name, rows in sets:
        figures = score(rows)
        print(line(name, figures))
        if name.startswith("third_parties"):
            totals["words"] += figures["words"]
            totals["certain"] += figures["certain_edits"]
            totals["right"] += round((figures["certain_accuracy"] or 0) * figures["certain_edits"])
            totals["wrong"] += figures["wrong_words"]
            totals["marked"] += round((figures["wrong_marked"] or 0) * figures["wrong_words"])
    print(f"own third-party sets together: {json.dumps(totals)}")
    cases = [
        json.loads(x)
        for x in packaged("cases", "synthetic_cases.jsonl").read_text().splitlines()
        if x.strip()
    ]
    edits = unsure = entries = 0
    for case in cases:
        for text in case["notes"].values():
            done = rewrite(text, "female" if case["sex"] == "male" else "male")
            edits += len(done.edits)
            unsure += sum(e.uncertain for e in done.edits)
            entries += len(done.uncertain())
    print(
        f"synthetic cases ({len(cases)}): {edits} edits, {unsure} marked uncertain "
        f"({unsure / edits:.1%}); {entries} words to review, {sum(1 for _ in cases)} cases"
    )


if __name__ == "__main__":
    main()
