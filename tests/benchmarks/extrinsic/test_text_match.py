"""The project's text matching on real all-MiniLM-L6-v2 embeddings: qualifiers, abbreviation
senses, other names of codes and default leaves, over a code subset indexed with its names."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from climb_vllm.benchmarks.extrinsic.icdmap import Mapper
from climb_vllm.benchmarks.extrinsic.title_index import build_or_load

#: Codes the tests below name, with headers whose default leaves they expect.
CODES = (
    "I10",
    "I50",
    "I50.9",
    "I50.2",
    "I50.20",
    "I26.99",
    "I26.92",
    "Z86.711",
    "Z86.718",
    "I25.2",
    "I21.9",
    "Z80.0",
    "Z95.1",
    "J44.9",
    "M32.9",
    "G35",
    "I48.91",
    "H10.9",
    "K40.90",
    "Z90.81",
    "Z85.3",
    "C50.919",
    "E11.9",
    "N18.4",
    "N18.6",
)


@pytest.fixture(scope="module")
def names_mapper(ontology_2021, encoder, mapping_cache: Path) -> Mapper:  # type: ignore[no-untyped-def]
    sample = set(ontology_2021.stratified_subset(300, seed=2)) | set(CODES)
    codes = [c for c in ontology_2021.codes if c in sample]
    index = build_or_load(
        ontology_2021, codes, encoder, cache=mapping_cache, display="none", names=True
    )
    return Mapper(ontology_2021, index, encoder)


def _codes(mapper: Mapper, texts: list[str]) -> list[str | None]:
    return [m.code for m in mapper.map_texts(texts)]


def test_index_holds_other_names_after_the_titles(names_mapper: Mapper) -> None:
    index = names_mapper.index
    assert index.title_rows < len(index.codes)
    assert index.describe()["other_names"] == len(index.codes) - index.title_rows
    extra = dict(zip(index.titles[index.title_rows :], index.codes[index.title_rows :]))
    assert extra["high blood pressure"] == "I10"
    assert extra["Congestive heart failure"] == "I50.9"  # "NOS" dropped


def test_abbreviations_map_through_their_senses(names_mapper: Mapper) -> None:
    htn, chf, sle, copd, ms, afib = names_mapper.map_texts(
        ["HTN", "CHF", "SLE", "copd", "MS", "afib"]
    )
    assert (htn.method, htn.code) == ("exact", "I10")  # "Hypertension" is an Includes note
    assert (chf.method, chf.code) == ("exact", "I50.9")
    assert sle.code == "M32.9"
    assert copd.code == "J44.9"
    assert ms.code == "G35"
    assert afib.code == "I48.91"


def test_ambiguous_abbreviation_takes_the_best_sense(names_mapper: Mapper) -> None:
    # "PE": physical examination, pulmonary embolism or pressure equalizer; the embolism wins.
    code = _codes(names_mapper, ["bilateral PEs"])[0]
    assert code is not None and code.startswith("I26.")


def test_non_billable_matches_take_the_default_leaf(names_mapper: Mapper) -> None:
    # "Heart failure" is the title of the header I50; "Systolic (congestive) heart failure"
    # of I50.2: each maps to its "9" or "unspecified" billable code.
    hf, systolic = names_mapper.map_texts(["Heart failure", "Systolic heart failure"])
    assert hf.code == "I50.9"
    assert systolic.code == "I50.20"


def test_negated_texts_map_to_nothing(names_mapper: Mapper) -> None:
    match = names_mapper.map_texts(["no evidence of PE"])[0]
    assert (match.method, match.code, match.qualifier) == ("negated", None, "negated")
    assert math.isnan(match.similarity)


def test_uncertain_texts_map_as_the_diagnosis_and_are_marked(names_mapper: Mapper) -> None:
    match = names_mapper.map_texts(["r/o PE"])[0]
    assert (match.code, match.qualifier) == ("I26.99", "uncertain")


def test_past_family_and_status_texts_map_to_z_codes(names_mapper: Mapper) -> None:
    matches = names_mapper.map_texts(
        ["h/o PE", "h/o MI", "FHx of colon cancer", "s/p splenectomy", "h/o breast cancer"]
    )
    assert [m.code for m in matches] == ["Z86.711", "I25.2", "Z80.0", "Z90.81", "Z85.3"]
    assert [m.qualifier for m in matches] == ["history", "history", "family", "status", "history"]


def test_clibench_rules_refuse_an_index_with_names(names_mapper: Mapper) -> None:
    with pytest.raises(ValueError, match="titles only"):
        Mapper(names_mapper.ontology, names_mapper.index, names_mapper.encoder, "clibench")


def test_points_carry_the_qualifier(names_mapper: Mapper) -> None:
    points = names_mapper.map_points(["1. h/o PE", "No DVT", "Hypertension (I10)"])
    assert [(p.method, p.codes, p.qualifier) for p in points] == [
        ("exact", ("Z86.711",), "history"),
        ("negated", (), "negated"),
        ("code", ("I10",), "none"),
    ]
