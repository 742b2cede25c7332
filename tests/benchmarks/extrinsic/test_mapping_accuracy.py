"""The labelled clinician diagnoses and the accuracy rule of the mapping bench."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from climb_vllm.benchmarks.extrinsic.mapping_accuracy import correct, load_labelled, score
from climb_vllm.core.errors import UserError

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
}


def test_labelled_set_is_valid(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    labelled = load_labelled()
    assert len(labelled) >= 300
    assert len({i.text for i in labelled}) == len(labelled)
    assert {i.kind for i in labelled} == KINDS
    for item in labelled:
        if item.kind == "negation":
            assert item.code == "", item
        else:
            assert ontology_2021.is_billable(item.code), item
    splits = Counter(i.split for i in labelled)
    assert 0.25 < splits["held_out"] / len(labelled) < 0.42


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
