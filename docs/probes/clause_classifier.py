"""Probe: can the sentence encoder the mapper already uses decide the pronouns the sex
rewrite's referent rules leave to a default?

Not part of the package. For every pronoun the rewrite edits and marks uncertain in the labelled
third-party sets (``tests/golden/counterfactual/third_parties_*.jsonl``), the clause from the
pronoun to the next clause break ("he injected it with a steroid") is embedded with
all-MiniLM-L6-v2. A logistic regression learns keep (a third party's) or edit (the patient's)
from the development to the sixth set and is scored on the seventh and eighth, beside the
rewrite's own choice (edit every such pronoun). Nine settings are printed (C and the probability
above which a pronoun is kept); they are compared on the test sets themselves, so the best row
overstates what a setting chosen in advance would give.

Run: ``.venv/bin/python docs/probes/clause_classifier.py``
"""

from __future__ import annotations

import json
import re
import sys
from itertools import accumulate, count
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tests" / "rewrite"))

import test_sex_rewrite as scoring  # noqa: E402

from climb_vllm.resources.encoder import Encoder  # noqa: E402
from climb_vllm.rewrite import accuracy  # noqa: E402
from climb_vllm.rewrite.sex_rewrite import swap_sex  # noqa: E402

TRAIN = ["development", "held_out", "held_out_2", "held_out_3", "held_out_4", "held_out_5"]
TRAIN += ["held_out_6"]
TEST = ["held_out_7", "held_out_8"]
BREAK = re.compile(r"[,;:.()]|\b(?:and|but|so|because|while|then)\b")


def uncertain_pronouns(part: str) -> list[tuple[str, bool]]:
    """(clause after the pronoun, whether the labelled rewrite keeps it) for each uncertain
    pronoun edit of set ``part``."""
    path = scoring.GOLDEN_DIR / f"third_parties_{part}.jsonl"
    found = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        text = row["text"]
        _, log = swap_sex(text, row["to"], referee=False)
        wanted = {(i, before) for i, before, _ in accuracy.token_edits(text, row["expected"])}
        token_at = dict(zip(accumulate([0] + [len(t) for t in accuracy.tokens(text)]), count()))
        for edit in log:
            if edit.uncertain and edit.before.lower() in ("he", "she", "him", "her", "his"):
                rest = text[edit.offset :]
                end = BREAK.search(rest, len(edit.before))
                clause = rest[: end.start() if end else len(rest)].strip()
                found.append((clause, (token_at[edit.offset], edit.before) not in wanted))
    return found


def main() -> None:
    train = [item for part in TRAIN for item in uncertain_pronouns(part)]
    test = [item for part in TEST for item in uncertain_pronouns(part)]
    encoder = Encoder()
    x_train = encoder.encode([c for c, _ in train])
    x_test = encoder.encode([c for c, _ in test])
    y_train = np.array([k for _, k in train])
    y_test = np.array([k for _, k in test])
    print(
        f"train {len(train)} ({int(y_train.sum())} keep), test {len(test)} "
        f"({int(y_test.sum())} keep); editing every one is right on "
        f"{int((~y_test).sum())} of {len(test)}"
    )
    for c in (0.1, 1.0, 10.0):
        model = LogisticRegression(C=c, max_iter=2000).fit(x_train, y_train)
        keep_p = model.predict_proba(x_test)[:, 1]
        for threshold in (0.5, 0.7, 0.85):
            keep = keep_p > threshold
            print(
                f"C {c:>4} keep above {threshold}: right {int((keep == y_test).sum())} of "
                f"{len(test)}, kept {int(keep.sum())} ({int((keep & y_test).sum())} rightly)"
            )


if __name__ == "__main__":
    main()
