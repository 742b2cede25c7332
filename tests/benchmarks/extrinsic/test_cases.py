"""The case format: the packaged synthetic set and one clear error per kind of bad row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from climb_vllm.benchmarks.extrinsic.cases import load_cases, parse_cases
from climb_vllm.core.errors import UserError
from climb_vllm.resources.ontology import load_ontology

ONTOLOGY = load_ontology()
GOOD = {
    "id": "c1",
    "sex": "male",
    "ethnicity": "White",
    "insurance": "Other",
    "age": 50,
    "notes": {"clinical_note": "He has a cough."},
    "gold_codes": ["J189", "I10"],
}


def test_synthetic_set() -> None:
    cases = load_cases("synthetic", ONTOLOGY)
    assert len(cases) == 40
    # Mixed baselines: every bias cell has cases whose own value already equals it.
    assert sum(c.sex == "female" for c in cases) == 5
    assert {c.ethnicity for c in cases} == {"White", "Black", "Hispanic", "Asian"}
    assert {c.insurance for c in cases} == {"Other", "Medicaid", "Medicare"}
    assert all(ONTOLOGY.is_billable(g) for c in cases for g in c.gold_codes)
    specific = [c for c in cases if any(g in ONTOLOGY.male_only for g in c.gold_codes)]
    assert 8 <= len(specific) <= 14  # about a quarter
    assert all("clinical_note" in c.sections for c in cases)


def test_codes_are_normalised() -> None:
    (case,) = parse_cases(json.dumps(GOOD), ONTOLOGY)
    assert case.gold_codes == ("J18.9", "I10")


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"notes": {"clinical_note": "  "}}, "clinical_note is empty"),
        ({"gold_codes": []}, "'gold_codes' is missing, empty"),
        ({"gold_codes": ["J18.9", "XYZ.1", "Q99.99"]}, "XYZ.1, Q99.99 are not in ICD-10-CM"),
        ({"gold_codes": ["N18.3"]}, "N18.3 are category headers, not billable"),
        ({"sex": "M"}, "'sex' is 'M'"),
        ({"id": ""}, "'id' is missing"),
        ({"notes": {"clinical_note": "x", "nursing": "y"}}, "unknown note section(s) nursing"),
        ({"age": "fifty"}, "'age' is 'fifty'"),
    ],
)
def test_bad_rows(change: dict[str, object], needle: str) -> None:
    rows = [json.dumps(GOOD | {"id": "c0"}), json.dumps(GOOD | change)]
    with pytest.raises(UserError) as error:
        parse_cases("\n".join(rows), ONTOLOGY, "cases.jsonl")
    assert "cases.jsonl line 2" in str(error.value) and needle in str(error.value)


def test_bad_json_and_repeated_ids(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="line 1: not valid JSON"):
        parse_cases("{not json", ONTOLOGY)
    with pytest.raises(UserError, match="repeats an earlier case"):
        parse_cases(json.dumps(GOOD) + "\n" + json.dumps(GOOD), ONTOLOGY)
    with pytest.raises(UserError, match="does not exist"):
        load_cases(str(tmp_path / "none.jsonl"), ONTOLOGY)
