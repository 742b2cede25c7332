"""Misspelt words corrected against a vocabulary (rapidfuzz's OSA distance)."""

from __future__ import annotations

from climb_vllm.icd_mapping.spelling import Speller

NAMES = [
    "Pneumonia, unspecified organism",
    "Bacterial pneumonia",
    "Essential (primary) hypertension",
    "Hypotension",
    "Unspecified convulsions",
    "Seizure NOS",
    "Psoriasis, unspecified",
    "Diverticulitis of intestine",
    "Anemia, unspecified",
    "Anosmia",
]


def test_one_or_two_edits_are_corrected() -> None:
    speller = Speller(NAMES)
    assert speller.correction("pnuemonia") == "pneumonia"  # a swap
    assert speller.correction("pnemonia") == "pneumonia"  # a deletion
    assert speller.correction("hypertention") == "hypertension"  # a substitution
    assert speller.correction("siezure") == "seizure"
    assert speller.correction("psoraisis") == "psoriasis"  # two edits in a long word
    assert speller.correction("diverticulitus") == "diverticulitis"


def test_known_short_and_far_words_are_kept() -> None:
    speller = Speller(NAMES, known=["metformin"])
    assert speller.correction("pneumonia") is None  # a word of the names
    assert speller.correction("Metformin") is None  # a known word, any case
    assert speller.correction("anemi") == "anemia"
    assert speller.correction("anem") is None  # shorter than MIN_LENGTH
    assert speller.correction("apixaban") is None  # nothing within two edits
    assert speller.correction("type2") is None  # digits: not a word
    # Seven letters allow one edit: "anemmia" is one from "anemia", two from "anosmia".
    assert speller.correction("anemmia") == "anemia"
    # The first letter is kept: "xneumonia" is one edit from "pneumonia" but not corrected.
    assert speller.correction("xneumonia") is None


def test_ties_go_to_the_more_frequent_word() -> None:
    # "hypotention" is one edit from neither; "hyportension" is one from "hypertension" only.
    speller = Speller([*NAMES, "hypotonia", "hypotonia"])
    assert speller.correction("hypotonis") == "hypotonia"
    two = Speller(["tinea", "tibia", "tibia"])
    assert two.correction("tinia") == "tibia"  # one edit from both; tibia is used more


def test_correct_keeps_skipped_words_and_layout() -> None:
    speller = Speller(NAMES)
    assert speller.correct("Pnuemonia, R lung") == "pneumonia, R lung"
    assert speller.correct("CAPPS pnemonia", skip=frozenset({"CAPPS"})) == "CAPPS pneumonia"
