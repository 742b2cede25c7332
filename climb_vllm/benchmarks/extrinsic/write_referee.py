"""``python -m climb_vllm.benchmarks.extrinsic.write_referee``: fit the pronoun referee
(:mod:`~climb_vllm.benchmarks.extrinsic.referee`) on labelled third-party excerpts and write
its weights (under a minute on 2 cores).

Every sex pronoun of every excerpt is one example: its label is whether the labelled rewrite
keeps it (someone else's) or changes it (the patient's). Excerpts whose pronouns do not line up
one to one with the labelled rewrite are left out and counted.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from climb_vllm.benchmarks.extrinsic.encoder import Encoder, encoder_fingerprint
from climb_vllm.benchmarks.extrinsic.referee import WEIGHTS, features, fit_logistic
from climb_vllm.core.errors import UserError
from climb_vllm.resources.data import packaged

PRONOUN = re.compile(r"\b(?:he|him|his|himself|she|her|hers|herself)\b", re.IGNORECASE)
#: The regularisation (scikit-learn's ``C``): chosen on the eighth and ninth sets with the
#: referee fitted on the sets before them (PERFORMANCE.md).
C = 0.1


def examples(path: Path) -> tuple[list[tuple[str, int, int]], list[bool], int]:
    """(pronouns as (text, start, end), whether each is someone else's, excerpts left out) of
    one labelled JSON-lines file (``text``, ``expected`` per line)."""
    items: list[tuple[str, int, int]] = []
    labels: list[bool] = []
    left_out = 0
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            row = None
        if not isinstance(row, dict) or not {"text", "expected"} <= row.keys():
            raise UserError(
                f"{path}, line {number}: not a labelled excerpt.",
                'give one JSON object per line with "text" and "expected".',
            )
        found = list(PRONOUN.finditer(row["text"]))
        wanted = PRONOUN.findall(row["expected"])
        if len(found) != len(wanted):
            left_out += 1
            continue
        for match, want in zip(found, wanted):
            items.append((row["text"], match.start(), match.end()))
            labels.append(want.lower() == match.group(0).lower())
    return items, labels, left_out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Fit on the given labelled files and write the weights; returns what was written.

    Args:
        argv: the labelled files (JSON lines), then ``--out FILE`` to write elsewhere than the
            package's data folder.
    """
    parser = argparse.ArgumentParser(prog="python -m climb_vllm.benchmarks.extrinsic.write_referee")
    parser.add_argument("files", type=Path, nargs="+", help="labelled third-party excerpts")
    parser.add_argument("--out", type=Path, help="where to write (default: the package)")
    args = parser.parse_args(argv)
    missing = [str(f) for f in args.files if not f.exists()]
    if missing:
        raise UserError(f"No such labelled file: {', '.join(missing)}.", "give existing files.")
    items: list[tuple[str, int, int]] = []
    labels: list[bool] = []
    counts, left_out = [], 0
    for path in args.files:
        found, kept, skipped = examples(path)
        items += found
        labels += kept
        counts.append(len(found))
        left_out += skipped
    encoder = Encoder(device="cpu")
    x = features(encoder, items)
    y = np.array(labels, dtype=bool)
    coef, intercept = fit_logistic(x, y, C)
    out = args.out or packaged(*WEIGHTS)
    out.parent.mkdir(parents=True, exist_ok=True)
    facts: dict[str, Any] = {
        "sets": [p.name for p in args.files],
        "pronouns_per_set": counts,
        "third_party_pronouns": int(y.sum()),
        "excerpts_left_out": left_out,
        "c": C,
        "encoder": encoder_fingerprint(),
    }
    with open(out, "wb") as handle:
        np.savez(handle, coef=coef.astype(np.float32), intercept=np.float64(intercept), **facts)
    print(json.dumps(facts))
    return facts


if __name__ == "__main__":
    main()
