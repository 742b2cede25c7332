"""The review file: reading a researcher's decisions back, and refusing bad ones by line."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.rewrite.review import COLUMNS, load_decisions, unused, write_review
from climb_vllm.rewrite.sex_rewrite import rewrite

TEXT = "The nurse notified the patient that his shift would be ending."


def _file(tmp_path: Path, decision: str, **changes: str) -> Path:
    row = {
        "case": "c1",
        "to": "female",
        "section": "note",
        "offset": str(TEXT.index("his")),
        "sentence": TEXT,
        "word": "his",
        "rewrite": "her",
        "decision": decision,
        **changes,
    }
    path = tmp_path / "uncertain_edits.csv"
    write_review(path, [row])
    return path


def test_a_decision_makes_the_word_certain_either_way() -> None:
    at = TEXT.index("his")
    kept = rewrite(TEXT, "female", decisions={(at, "his"): "male"})
    assert kept.text == TEXT and kept.uncertain() == [] and kept.kept[0].decided
    changed = rewrite(TEXT, "female", decisions={(at, "his"): "female"})
    assert "her shift" in changed.text and changed.edits[0].decided
    assert changed.decided == {(at, "his")}


def test_decisions_are_read_by_the_word_they_name(tmp_path: Path) -> None:
    path = _file(tmp_path, " Male ")
    decisions = load_decisions(path)
    assert [(key, d.sex, d.line) for key, d in decisions.items()] == [
        (("c1", "female", "note", TEXT.index("his"), "his"), "male", 2)
    ]
    assert load_decisions(_file(tmp_path, "")) == {}  # an empty decision is no decision


def test_a_decision_that_is_neither_sex_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"line 2: the decision 'patient' is neither sex"):
        load_decisions(_file(tmp_path, "patient"))


def test_a_file_without_the_columns_or_missing_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerow([c for c in COLUMNS if c != "offset"])
    with pytest.raises(UserError, match="lacks the column"):
        load_decisions(path)
    with pytest.raises(UserError, match="No decisions file"):
        load_decisions(tmp_path / "absent.csv")


def test_a_decision_for_no_uncertain_word_is_refused_by_line(tmp_path: Path) -> None:
    decisions = load_decisions(_file(tmp_path, "male", word="her"))
    with pytest.raises(UserError, match=r"line 2: case 'c1' .* no uncertain word 'her'"):
        unused(decisions, set())
