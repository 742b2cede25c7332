"""The sex rewrite on golden before/after pairs, its edit log, and the variant set."""

from __future__ import annotations

import pytest

from climb_vllm.benchmarks.extrinsic.counterfactual import PLACEBO_LINE, swap_sex, variants

GOLDEN = [
    ("He reports chest pain.", "She reports chest pain."),
    ("We told him; he agreed.", "We told her; she agreed."),
    ("His pain began when he lifted a box.", "Her pain began when she lifted a box."),
    ("The decision was his.", "The decision was hers."),
    ("He himself denies it.", "She herself denies it."),
    ("Mr. Smith is a pleasant gentleman.", "Ms. Smith is a pleasant lady."),
    ("Mr Smith, a 45 y/o M, presents.", "Ms Smith, a 45 y/o F, presents."),
    ("HPI: 67M w/ h/o CAD.", "HPI: 67F w/ h/o CAD."),
    ("52 yo M with CP", "52 yo F with CP"),
    ("45-year-old M presenting with fever", "45-year-old F presenting with fever"),
    ("Sex: M", "Sex: F"),
    ("Gender: Male", "Gender: Female"),
    ("A 70-year-old man; men over 50.", "A 70-year-old woman; women over 50."),
    ("HE IS A MALE.", "SHE IS A FEMALE."),
    ("16 yo boy with pain", "16 yo girl with pain"),
    ("He reports his wife noticed.", "She reports her wife noticed."),  # relatives keep sex
    ("Chest pain x2d, no pronouns.", "Chest pain x2d, no pronouns."),
    ("Given 5 mg IV; K 3.0 M2 occlusion.", "Given 5 mg IV; K 3.0 M2 occlusion."),
]


@pytest.mark.parametrize(("before", "after"), GOLDEN)
def test_golden_pairs(before: str, after: str) -> None:
    assert swap_sex(before)[0] == after


def test_edit_log_rebuilds_the_text() -> None:
    text = "Mr. A is a 67 y/o M. He says his arm hurts; the choice was his."
    new, edits = swap_sex(text, section="clinical_note")
    assert [(e.offset, e.before, e.after) for e in edits] == [
        (0, "Mr", "Ms"), (18, "M", "F"), (21, "He", "She"), (29, "his", "her"),
        (59, "his", "hers"),
    ]  # fmt: skip
    assert all(text[e.offset : e.offset + len(e.before)] == e.before for e in edits)
    assert all(e.section == "clinical_note" for e in edits)
    assert new == "Ms. A is a 67 y/o F. She says her arm hurts; the choice was hers."


def test_note_without_pronouns_has_an_empty_log() -> None:
    assert swap_sex("Troponin 0.8. CXR clear.") == ("Troponin 0.8. CXR clear.", [])


def test_female_to_male() -> None:
    assert swap_sex("Ms. Lee, 45 y/o F. She said her chest hurts.", "male")[0] == (
        "Mr. Lee, 45 y/o M. He said his chest hurts."
    )


def test_variants() -> None:
    sections = {"clinical_note": "He has a cough.", "labs": "WBC 12."}
    made = variants(sections)
    names = sorted({v.name for v in made})
    assert names == sorted(
        ["default", "sex=female", "ethnicity=Black", "ethnicity=Hispanic", "ethnicity=Asian",
         "insurance=Medicaid", "insurance=Medicare", "placebo"]
    )  # fmt: skip
    assert len(made) == 2 * len(names)  # both placements
    female = next(v for v in made if v.name == "sex=female")
    assert female.sections["clinical_note"] == "She has a cough." and len(female.edits) == 1
    assert female.line == (
        "Patient information: sex is female, ethnicity is White, insurance is Other."
    )
    black = next(v for v in made if v.name == "ethnicity=Black")
    assert black.sections == sections and black.edits == ()
    placebo = next(v for v in made if v.name == "placebo")
    assert placebo.demographics == {"sex": "male", "ethnicity": "White", "insurance": "Other"}
    assert placebo.line == PLACEBO_LINE.format(**placebo.demographics)
    # A female baseline gets a male counterfactual instead.
    flipped = variants(sections, {"sex": "female", "ethnicity": "White", "insurance": "Other"})
    assert any(v.name == "sex=male" for v in flipped)
