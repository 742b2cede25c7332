"""The project's text matching on real all-MiniLM-L6-v2 embeddings: qualifiers, abbreviation
senses, other names of codes and default leaves, over a code subset indexed with its names."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from climb_vllm.icd_mapping.icdmap import Mapper
from climb_vllm.icd_mapping.senses import chunks
from climb_vllm.icd_mapping.title_index import build_or_load

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
    "I05.0",
    "K29.7",
    "K29.70",
    "C91.1",
    "C91.10",
    "I24.9",
    "M79.A3",
    "O72",
    "O72.1",
    "C71.9",
    "S63.006A",
    "S63.096A",
    "J43.9",
    "J43.8",
    "D58.0",
    "Q12.4",
    "D59.9",
    "D58.9",
    "S93.40",
    "M71.2",
    "K22.3",
    "G56.2",
    "Z12.11",
    "S73.00",
    "T42.4X1A",
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


def test_a_bare_text_is_the_unspecified_title(names_mapper: Mapper) -> None:
    # "Gastritis, unspecified" (K29.7, a header) names "gastritis"; its leaf is K29.70.
    match = names_mapper.map_texts(["gastritis"])[0]
    assert (match.method, match.code) == ("exact", "K29.70")


def test_misspelt_texts_are_read_corrected(names_mapper: Mapper) -> None:
    assert _codes(names_mapper, ["hypertention", "multiple sclerosys"]) == ["I10", "G35"]


def test_context_chooses_the_sense_and_records_it(names_mapper: Mapper) -> None:
    neuro = chunks(
        "Optic neuritis last year; now leg weakness with enhancing white matter lesions."
    )
    cardio = chunks(
        "Rheumatic fever as a child. Echo: thickened mitral leaflets, valve area 1.0 cm2."
    )
    plain, brain, valve = names_mapper.map_texts(["MS", "MS", "MS"], [(), neuro, cardio])
    assert plain.code == "G35" and not plain.by_context
    assert plain.sense == "MS: multiple sclerosis"
    assert (brain.code, brain.by_context) == ("G35", True)
    assert (valve.code, valve.sense, valve.by_context) == ("I05.0", "MS: mitral stenosis", True)


def test_outputs_read_their_abbreviations_by_the_note(names_mapper: Mapper) -> None:
    output = "1. MS\n2. Atrial fibrillation"
    note = "Rheumatic heart disease. Echo: thickened mitral leaflets, mean gradient 11 mmHg."
    with_note = names_mapper.map_outputs([output], [note])[0]
    without = names_mapper.map_outputs([output])[0]
    assert with_note.points[0].codes == ("I05.0",)
    assert with_note.points[0].sense == "MS: mitral stenosis"
    assert without.points[0].codes == ("G35",)


def test_the_default_leaf_follows_the_side_the_text_names(names_mapper: Mapper) -> None:
    matcher = names_mapper._matcher
    assert matcher is not None
    assert matcher.leaf("S93.40", "right ankle sprain") == "S93.401A"
    assert matcher.leaf("S93.40", "left ankle sprain") == "S93.402A"
    assert matcher.leaf("S93.40", "ankle sprain") == "S93.409A"


def test_lay_names_lead_to_their_codes_on_the_side_any_reading_names(
    names_mapper: Mapper,
) -> None:
    attack, cyst, right_cyst, shorthand = names_mapper.map_texts(
        ["heart attack", "Baker's cyst", "Baker's cyst, right knee", "R ankle sprain"]
    )
    assert (attack.method, attack.code) == ("exact", "I21.9")
    # The lay names of sided codes name the header, so the text's side decides the leaf.
    assert (cyst.method, cyst.code) == ("exact", "M71.20")
    assert right_cyst.code == "M71.21"
    # "R" is read as "right" in one reading only; the side holds for the text.
    assert shorthand.code == "S93.401A"


def test_clinical_names_lead_to_their_codes(names_mapper: Mapper) -> None:
    # Eponyms the tabular list lacks: without the clinical names, "Boerhaave syndrome" was
    # read as Ogilvie syndrome (K59.81) and "cubital tunnel syndrome" as the tarsal tunnel.
    eponym, tunnel, left = names_mapper.map_texts(
        ["Boerhaave syndrome", "cubital tunnel syndrome", "left cubital tunnel syndrome"]
    )
    assert (eponym.method, eponym.code) == ("exact", "K22.3")
    assert (tunnel.method, tunnel.code) == ("exact", "G56.20")
    assert left.code == "G56.22"


def test_diagnosis_senses_name_their_codes(names_mapper: Mapper) -> None:
    # "ACS" is also abdominal compartment syndrome (M79.A3) in the inventory, whose title is
    # nearer than any title to "acute coronary syndrome"; the diagnosis sense names I24.9.
    acs, rule_out, gbm, pph = names_mapper.map_texts(["ACS", "r/o ACS", "GBM", "PPH"])
    assert (acs.method, acs.code) == ("exact", "I24.9")
    assert rule_out.code == "I24.9" and rule_out.qualifier == "uncertain"
    assert gbm.code == "C71.9"  # "glioblastoma multiforme" in the inventory names no title
    # "Postpartum hemorrhage" is the title of O72, a header without a default: the diagnosis
    # sense's code is taken instead.
    assert pph.code == "O72.1"


def test_other_x_needs_the_text_to_say_other(names_mapper: Mapper) -> None:
    # "Other dislocation of unspecified wrist and hand" is near, but the release also has
    # "Unspecified dislocation of ...": a text that says nothing more is the unspecified one.
    wrist, emphysema = names_mapper.map_texts(["dislocation of the wrist", "emphysema of lung"])
    assert wrist.code == "S63.006A"
    assert emphysema.code == "J43.9"
    assert names_mapper.map_texts(["other dislocation of wrist and hand"])[0].code == "S63.096A"


def test_a_congenital_name_fits_where_no_other_name_holds_the_words(names_mapper: Mapper) -> None:
    # No name without "hereditary" says "spherocytosis": the word separates nothing.
    assert names_mapper.map_texts(["spherocytosis"])[0].code == "D58.0"
    # "Acquired hemolytic anemia" holds both words: the hereditary name needs the word.
    assert names_mapper.map_texts(["hemolytic anemia"])[0].code != "D58.9"
    assert names_mapper.map_texts(["hereditary hemolytic anemia"])[0].code == "D58.9"


def test_a_family_point_searches_only_the_family_history_codes(names_mapper: Mapper) -> None:
    # Z12.11, "screening for malignant neoplasm of colon", is nearer "family history of colon
    # cancer" than Z80.0 among all Z codes; only Z80-Z84 are family history.
    match = names_mapper.map_texts(["family history of colon cancer"])[0]
    assert (match.code, match.qualifier) == ("Z80.0", "family")
    # And a personal history never takes a family history code.
    assert _codes(names_mapper, ["h/o colon cancer"])[0] != "Z80.0"


def test_a_found_code_yields_to_the_sibling_the_text_names(names_mapper: Mapper) -> None:
    # The index holds the accidental poisoning T42.4X1A, not the intentional one beside it:
    # the text's word decides.
    hip, overdose = names_mapper.map_texts(
        ["dislocation of the hip", "intentional overdose of benzodiazepines"]
    )
    # The header S73.00, "subluxation and dislocation of hip", descends to the dislocation
    # (S73.006A), not to the first unspecified child (S73.003A, a subluxation).
    assert hip.code == "S73.006A"
    assert overdose.code == "T42.4X2A"
    # Saying nothing that tells the siblings apart keeps what the search found.
    assert _codes(names_mapper, ["benzodiazepine overdose"])[0] == "T42.4X1A"
