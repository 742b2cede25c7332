"""The rewrite's figures on text others wrote: WinoGender (Rudinger et al. 2018), read from
``../shared/data/winogender/`` (not packaged)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from climb_vllm.rewrite.accuracy import score, token_edits, winogender_rows

WINOGENDER = Path(__file__).parents[2].parent / "shared" / "data" / "winogender"
DEV = WINOGENDER / "winogender_patient_dev.tsv"


def _rows() -> list[dict[str, object]]:
    if not DEV.is_file():
        pytest.skip(f"needs the WinoGender development set at {DEV} (../shared beside the clone)")
    return winogender_rows(DEV)


def test_winogender_rows_pair_each_sentence_with_its_twin() -> None:
    rows = _rows()
    assert len(rows) == 196
    changed = [r for r in rows if r["text"] != r["expected"]]
    assert len(changed) == 98  # the pronoun is the patient's in half of them
    assert all(len(token_edits(str(r["text"]), str(r["expected"]))) == 1 for r in changed)


def test_on_winogender_certain_edits_are_right_and_wrong_ones_are_marked() -> None:
    figures = score(_rows())
    print(json.dumps(figures))
    # Every sentence names a second person who could take the pronoun: nothing is certain,
    # and every wrong word is marked for review.
    assert figures["certain_accuracy"] is None or figures["certain_accuracy"] >= 0.99
    assert figures["wrong_marked"] >= 0.9
    assert figures["rows_safe"] == 1.0


def test_score_counts_a_wrong_unmarked_word() -> None:
    # A label that disagrees with a certain edit: the edit counts as certain and wrong.
    row = {"to": "female", "text": "He reports pain.", "expected": "He reports pain."}
    figures = score([row])
    assert figures["certain_edits"] == 1 and figures["certain_accuracy"] == 0.0
    assert figures["wrong_words"] == 1 and figures["wrong_marked"] == 0.0
