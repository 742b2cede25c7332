"""The labelled clinician diagnoses and the accuracy rule of the mapping bench."""

from __future__ import annotations

import zlib
from collections import Counter
from pathlib import Path

import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.icd_mapping.mapping_accuracy import (
    POOLED,
    SPLITS,
    context_accuracy,
    correct,
    load_contexts,
    load_labelled,
    score,
)

FIRST_AND_SECOND = ("development", "held_out", "development_2", "held_out_2")
KINDS = {
    "abbreviation",
    "lay",
    "eponym",
    "specificity",
    "title_variant",
    "status_post",
    "history",
    "family_history",
    "rule_out",
    "negation",
    "misspelling",
    "combination",
    "qualifier",
    "answer_style",
}


def test_labelled_set_is_valid(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    labelled = load_labelled()
    assert len(labelled) >= 500
    assert len({i.text for i in labelled}) == len(labelled)
    # The second set repeats no string of the first, even in another case.
    first_texts = {i.text.lower() for i in labelled if i.split in ("development", "held_out")}
    assert not any(i.text.lower() in first_texts for i in labelled if i.split.endswith("_2"))
    # Nor does the third, taken from another dataset.
    earlier = {i.text.lower() for i in labelled if i.split in FIRST_AND_SECOND}
    assert not any(i.text.lower() in earlier for i in labelled if i.split.endswith("_3"))
    third_texts = {i.text.lower() for i in labelled if i.split.endswith("_3")}
    assert not any(
        i.text.lower() in earlier | third_texts for i in labelled if i.split.endswith("_4")
    )
    # Each later set repeats no string of the sets before it.
    seen = earlier | third_texts
    for suffix in ("_4", "_5", "_6", "_7", "_8"):
        later = {i.text.lower() for i in labelled if i.split.endswith(suffix)}
        assert later and not later & seen, suffix
        seen |= later
    assert {i.kind for i in labelled} == KINDS
    for item in labelled:
        if item.kind == "negation":
            assert item.code == "", item
        else:
            assert ontology_2021.is_billable(item.code), item
    splits = Counter(i.split for i in labelled)
    first = splits["development"] + splits["held_out"]
    assert 0.25 < splits["held_out"] / first < 0.42
    second = splits["development_2"] + splits["held_out_2"]
    assert second >= 200 and 0.4 < splits["held_out_2"] / second < 0.6
    third = splits["development_3"] + splits["held_out_3"]
    assert third >= 140 and 0.4 < splits["held_out_3"] / third < 0.6
    assert splits["held_out_4"] >= 100
    assert splits["held_out_5"] >= 130
    assert splits["held_out_6"] >= 140
    assert splits["held_out_7"] >= 120
    assert splits["held_out_8"] >= 300


def test_second_set_split_is_the_crc_fixed_when_written() -> None:
    for item in load_labelled():
        if item.split.endswith("_2"):
            expected = "held_out_2" if zlib.crc32(item.text.encode()) % 2 == 0 else "development_2"
            assert item.split == expected, item


def test_third_set_is_sampled_and_split_by_the_crc_fixed_when_written() -> None:
    for item in load_labelled():
        if item.split.endswith("_3"):
            crc = zlib.crc32(item.text.encode())
            assert crc % 5 == 0, item
            assert item.split == ("held_out_3" if crc % 10 == 0 else "development_3"), item
        if item.split.endswith("_4"):
            assert zlib.crc32(item.text.encode()) % 5 == 1, item
        if item.split.endswith("_5"):
            assert zlib.crc32(item.text.encode()) % 5 == 2, item
        if item.split.endswith("_6"):
            assert zlib.crc32(item.text.encode()) % 5 == 3, item
        if item.split.endswith("_7"):
            assert zlib.crc32(item.text.encode()) % 5 == 4, item


def test_abbreviations_in_context_are_valid(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    items = load_contexts()
    assert len(items) >= 50
    for item in items:
        assert ontology_2021.is_billable(item.code), item
        key = f"{item.text}\t{item.context}".encode()
        assert item.split == ("held_out" if zlib.crc32(key) % 2 == 0 else "development")
    # Most abbreviations have two answers, so no reading without context is right for all.
    codes: dict[str, set[str]] = {}
    for item in items:
        codes.setdefault(item.text, set()).add(item.code[:3])
    assert sum(len(c) > 1 for c in codes.values()) >= 10


def test_context_accuracy_maps_with_and_without(mapper, ontology_2021) -> None:  # type: ignore[no-untyped-def]
    from climb_vllm.icd_mapping.mapping_accuracy import InContext

    items = [
        InContext("CAP", "C61", "PSA 40, Gleason 4+3 on prostate biopsy.", "development"),
        InContext(
            "CAP", "J18.9", "Fever, cough and a lobar infiltrate on chest x-ray.", "held_out"
        ),
    ]
    figures, rows = context_accuracy(ontology_2021, mapper, items, resamples=50)
    assert figures["context_L3_development"] == 1.0
    assert figures["context_L3_held_out"] == 1.0
    # Without its context, one "CAP" is read the same way as the other: one of them is wrong.
    assert figures["no_context_L3_development"] + figures["no_context_L3_held_out"] == 1.0
    assert rows[0][4] == "CAP: prostate cancer"
    assert rows[1][4] == "CAP: community acquired pneumonia"


def test_a_split_column_must_name_a_known_split(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("text\tcode\tkind\tsplit\nHTN\tI10\tabbreviation\ttest\n")
    with pytest.raises(UserError, match="unknown split"):
        load_labelled(bad)


def test_correct_compares_levels(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    # Same category (I50), other code: right at L1-L3, wrong at L4-L5.
    assert correct(ontology_2021, "I50.9", ("I50.20",)) == [True, True, True, False, False]
    assert correct(ontology_2021, "I50.9", ("I50.9", "I10")) == [True] * 5
    assert correct(ontology_2021, "I50.9", ()) == [False] * 5
    assert correct(ontology_2021, "", ()) == [True] * 5  # a negation: nothing is right
    assert correct(ontology_2021, "", ("I26.99",)) == [False] * 5


def test_another_labelled_file_must_have_the_columns(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("diagnosis\tcode\nHTN\tI10\n")
    with pytest.raises(UserError, match="text, code, kind"):
        load_labelled(bad)


def test_score_on_a_mapper(mapper, ontology_2021, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    labelled_file = tmp_path / "set.tsv"
    labelled_file.write_text(
        "text\tcode\tkind\nEssential (primary) hypertension\tI10\ttitle_variant\n"
        "no evidence of hypertension\t\tnegation\n"
    )
    right, predicted, qualifiers, seconds = score(
        ontology_2021, mapper, load_labelled(labelled_file)
    )
    assert right.tolist() == [[True] * 5, [True] * 5]
    assert predicted == [("I10",), ()]
    assert qualifiers == ["none", "negated"]
    assert seconds >= 0


def test_pooled_splits_are_sets_held_out_whole() -> None:
    # A pooled split must be a set held out whole: a set with a development part would put
    # strings that rules were written on into the pooled held-out figure.
    present = {item.split for item in load_labelled()}
    assert set(POOLED) <= present
    for split in POOLED:
        assert split.startswith("held_out_") and split in SPLITS, split
        assert f"development_{split.removeprefix('held_out_')}" not in SPLITS, split
