"""The variant set of a case."""

from __future__ import annotations

from climb_vllm.benchmarks.extrinsic.counterfactual import PLACEBO_LINE, variants


def test_variants() -> None:
    sections = {"clinical_note": "He has a cough.", "labs": "WBC 12."}
    made = variants(sections)
    names = sorted({v.name for v in made})
    assert names == sorted(
        [
            "default",
            "sex=female",
            "ethnicity=Black",
            "ethnicity=Hispanic",
            "ethnicity=Asian",
            "insurance=Medicaid",
            "insurance=Medicare",
            "placebo",
        ]
    )
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


def test_two_attributes_at_once() -> None:
    sections = {"clinical_note": "He has a cough."}
    base = {"sex": "male", "ethnicity": "Black", "insurance": "Other"}
    made = variants(sections, base, intersections=("sex+ethnicity", "ethnicity+insurance"))
    joint = sorted({v.name for v in made if "&" in v.name})
    # The case's own ethnicity (Black) is no counterfactual value, alone or together.
    assert joint == sorted(
        [f"sex=female&ethnicity={e}" for e in ("Hispanic", "Asian")]
        + [
            f"ethnicity={e}&insurance={i}"
            for e in ("Hispanic", "Asian")
            for i in ("Medicaid", "Medicare")
        ]
    )
    both = next(v for v in made if v.name == "sex=female&ethnicity=Asian")
    assert (both.attribute, both.value) == ("sex+ethnicity", "female & Asian")
    assert both.demographics == {"sex": "female", "ethnicity": "Asian", "insurance": "Other"}
    assert both.sections["clinical_note"] == "She has a cough."  # the notes follow the sex
    other = next(v for v in made if v.name == "ethnicity=Asian&insurance=Medicaid")
    assert other.sections == sections and other.edits == ()
    assert len(variants(sections, base)) < len(made)  # none unless asked
