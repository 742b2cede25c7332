"""The variant set of a case."""

from __future__ import annotations

from climb_vllm.benchmarks.extrinsic.counterfactual import PLACEBO_LINE, variants


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
