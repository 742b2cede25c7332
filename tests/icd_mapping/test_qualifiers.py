"""Negated, uncertain, past, family and post-procedure diagnosis texts."""

from __future__ import annotations

import pytest

from climb_vllm.icd_mapping.qualifiers import Qualified, queries, read


@pytest.mark.parametrize(
    ("text", "kind", "core"),
    [
        ("no evidence of PE", "negated", "PE"),
        ("No acute intracranial hemorrhage", "negated", "intracranial hemorrhage"),
        ("negative for DVT", "negated", "DVT"),
        ("denies chest pain", "negated", "chest pain"),
        ("without signs of infection", "negated", "infection"),
        ("not consistent with appendicitis", "negated", "appendicitis"),
        ("MI ruled out", "negated", "MI"),
        ("PE - excluded", "negated", "PE"),
        ("r/o PE", "uncertain", "PE"),
        ("R/O sepsis", "uncertain", "sepsis"),
        ("rule out ACS", "uncertain", "ACS"),
        ("possible pneumonia", "uncertain", "pneumonia"),
        ("concern for SBO", "uncertain", "SBO"),
        ("? PE", "uncertain", "PE"),
        ("PE?", "uncertain", "PE"),
        ("Pneumonia (suspected)", "uncertain", "Pneumonia"),
        ("h/o DVT", "history", "DVT"),
        ("hx of colon cancer", "history", "colon cancer"),
        ("History of falls", "history", "falls"),
        ("FHx of colon cancer", "family", "colon cancer"),
        ("family history of breast cancer", "family", "breast cancer"),
        ("s/p CABG", "status", "CABG"),
        ("status post R TKA", "status", "R TKA"),
    ],
)
def test_qualifiers_are_read(text: str, kind: str, core: str) -> None:
    assert read(text) == Qualified(kind, core)


@pytest.mark.parametrize(
    "text",
    [
        "Non-ST elevation MI",
        "Nonrheumatic aortic stenosis",
        "Noninfective gastroenteritis",
        "Hypertension",
        "Notalgia paresthetica",
        "Possum bite",
        "Historical note",  # a word that starts like a qualifier is not one
        "no",  # a qualifier alone is not a qualified diagnosis
    ],
)
def test_plain_diagnoses_are_not_qualified(text: str) -> None:
    assert read(text) == Qualified("none", text)


def test_queries_search_z_codes_for_past_family_and_status() -> None:
    within, exact = queries(Qualified("history", "PE"), ["pulmonary embolism"])
    assert within == ["personal history of pulmonary embolism"]
    assert exact == ["old pulmonary embolism"]
    assert queries(Qualified("family", "CAD"), ["coronary artery disease"]) == (
        ["family history of coronary artery disease"],
        [],
    )
    assert "acquired absence of spleen" in queries(Qualified("status", "x"), ["spleen"])[0]
    assert queries(Qualified("uncertain", "PE"), ["pulmonary embolism"]) == ([], [])
