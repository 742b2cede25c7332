"""Whether a code's name fits a diagnosis text: each rule of the name-fit module, on names
as the release writes them."""

from __future__ import annotations

import pytest

from climb_vllm.icd_mapping.name_fit import (
    congenital,
    fits,
    plain_postings,
)
from climb_vllm.resources.words import content_words


def test_diabetes_without_a_type_is_type_2() -> None:
    nephropathy = "Other specified diabetes mellitus with diabetic nephropathy"
    assert not fits("diabetic nephropathy", "none", "E13.21", nephropathy)
    assert fits("diabetic nephropathy", "none", "E11.21", "Type 2 ... nephropathy")
    assert not fits("diabetic nephropathy", "none", "E10.21", "Type 1 ... nephropathy")
    assert fits("type 1 diabetes with nephropathy", "none", "E10.21", "Type 1 ...")
    assert fits("steroid induced diabetes", "none", "E09.9", "Drug or chemical induced ...")


def test_hypertension_with_kidney_or_heart_disease_takes_the_combination() -> None:
    assert not fits("hypertensive CKD stage 3", "none", "N18.30", "Chronic kidney disease")
    assert fits("hypertensive CKD stage 3", "none", "I12.9", "Hypertensive chronic kidney")
    assert not fits("hypertension with heart failure", "none", "I50.9", "Heart failure")
    assert fits("hypertension with heart failure", "none", "I11.0", "Hypertensive heart")
    both = "hypertension with CKD and heart failure"
    assert not fits(both, "none", "I12.9", "x") and fits(both, "none", "I13.0", "x")
    # Pulmonary hypertension is not hypertension in this sense.
    assert fits("pulmonary hypertension with heart failure", "none", "I50.9", "Heart failure")


def test_with_and_without_must_agree() -> None:
    name = "Hypertensive heart and chronic kidney disease without heart failure"
    assert not fits(
        "hypertensive heart and kidney disease with heart failure", "none", "I13.10", name
    )
    assert not fits(
        "gastric ulcer without hemorrhage", "none", "K25.4", "Gastric ulcer with hemorrhage"
    )
    assert fits("gastric ulcer with hemorrhage", "none", "K25.4", "Gastric ulcer with hemorrhage")


def test_stages_must_agree() -> None:
    assert not fits("CKD stage 4", "none", "N18.30", "Chronic kidney disease, stage 3 unspecified")
    assert fits("CKD stage 4", "none", "N18.4", "Chronic kidney disease, stage 4 (severe)")
    ranged = (
        "Hypertensive chronic kidney disease with stage 1 through stage 4 chronic kidney disease"
    )
    assert fits("hypertensive CKD stage 3", "none", "I12.9", ranged)
    assert not fits("ESRD due to hypertension", "none", "I12.9", ranged)
    assert fits("chronic kidney disease", "none", "N18.4", "Chronic kidney disease, stage 4")


def test_a_named_side_excludes_names_that_leave_it_open() -> None:
    open_side = "Sprain of unspecified ligament of unspecified ankle, initial encounter"
    assert not fits("right ankle sprain", "none", "S93.409A", open_side)
    assert fits("ankle sprain", "none", "S93.409A", open_side)
    assert fits("right ankle sprain", "none", "S93.401A", "Sprain of ... right ankle")


def test_injuries_take_the_initial_encounter_unless_told() -> None:
    sequela = "Sprain of anterior cruciate ligament of left knee, sequela"
    assert not fits("left ACL tear", "none", "S83.512S", sequela)
    assert fits("left ACL tear, sequela", "none", "S83.512S", sequela)
    assert fits("left ACL tear", "none", "S83.512A", "... initial encounter")
    assert fits("pneumonia", "none", "J18.9", "Pneumonia, unspecified organism")


def test_a_named_severity_excludes_other_severities() -> None:
    assert not fits("MDD, recurrent, severe", "none", "F33.0", "... recurrent, mild")
    assert fits("MDD, recurrent, severe", "none", "F33.2", "... recurrent severe without ...")
    assert fits("MDD, recurrent", "none", "F33.0", "... recurrent, mild")


def test_a_congenital_name_needs_the_text_to_say_so() -> None:
    name = "Congenital mitral stenosis"
    assert not fits("mitral stenosis", "none", "Q23.2", name)
    assert fits("congenital mitral stenosis", "none", "Q23.2", name)
    assert fits("mitral stenosis in a newborn", "none", "Q23.2", name)
    assert fits("tetralogy of Fallot", "none", "Q21.3", "Tetralogy of Fallot")


def test_a_superficial_name_needs_the_text_to_say_so() -> None:
    name = "Other superficial bite of hand of right hand"
    assert not fits("dog bite of right hand", "none", "S60.571A", name)
    assert fits("superficial dog bite of right hand", "none", "S60.571A", name)


def test_x_and_non_x_contradict() -> None:
    assert not fits("toxic multinodular goiter", "none", "E04.2", "Nontoxic multinodular goiter")
    assert fits("nontoxic multinodular goiter", "none", "E04.2", "Nontoxic multinodular goiter")
    assert not fits("nontraumatic hemorrhage", "none", "S06.6X0A", "Traumatic subarachnoid ...")
    # "..., not specified as traumatic" leaves the word open.
    name = "Unspecified rotator cuff tear or rupture of right shoulder, not specified as traumatic"
    assert fits("nontraumatic rotator cuff tear, right", "none", "M75.101", name)


def test_a_recurrent_name_needs_the_text_to_say_so() -> None:
    name = "Recurrent dislocation, unspecified wrist"
    assert not fits("dislocation of the wrist", "none", "M24.439", name)
    assert fits("recurrent dislocation of the wrist", "none", "M24.439", name)
    # "not specified as recurrent" is what a text that says nothing means.
    name = "Unilateral inguinal hernia, without obstruction or gangrene, not specified as recurrent"
    assert fits("inguinal hernia", "none", "K40.90", name)


def test_opposite_words_contradict() -> None:
    name = "Thyrotoxicosis with diffuse goiter without thyrotoxic crisis or storm"
    assert not fits("toxic multinodular goiter", "none", "E05.00", name)
    assert not fits("chronic pancreatitis", "none", "K85.90", "Acute pancreatitis, unspecified")
    assert fits("acute on chronic pancreatitis", "none", "K85.90", "Acute pancreatitis")
    assert fits("pancreatitis", "none", "K85.90", "Acute pancreatitis, unspecified")
    # "non-ST elevation" is "nonST elevation", which "ST elevation" contradicts.
    stemi = "ST elevation (STEMI) myocardial infarction of inferior wall"
    assert not fits("non-ST elevation myocardial infarction", "none", "I21.19", stemi)
    assert not fits("inferior ST elevation MI", "none", "I21.4", "Non-ST elevation MI")


def test_an_inclusion_term_means_what_its_title_says() -> None:
    title = "Nontoxic multinodular goiter"
    assert not fits("toxic multinodular goiter", "none", "E04.2", "Multinodular goiter", title)
    assert fits("multinodular goiter", "none", "E04.2", "Multinodular goiter", title)


@pytest.mark.parametrize(
    ("text", "code", "name", "fit"),
    [
        ("dislocation of the wrist", "M24.339", "Pathological dislocation of wrist", False),
        ("pathological dislocation of wrist", "M24.339", "Pathological dislocation", True),
        ("hip fracture due to osteoporosis", "M80.059A", "... with pathological fracture", True),
        ("septic shock", "T81.12XA", "Postprocedural septic shock", False),
        ("septic shock after surgery", "T81.12XA", "Postprocedural septic shock", True),
        ("inferior STEMI", "I22.1", "Subsequent ST elevation (STEMI) ... inferior wall", False),
        ("subsequent STEMI", "I22.1", "Subsequent ST elevation (STEMI) ... inferior wall", True),
    ],
)
def test_qualifiers_a_coder_takes_only_when_told(
    text: str, code: str, name: str, fit: bool
) -> None:
    assert fits(text, "none", code, name) is fit


def test_a_congenital_name_fits_when_the_text_names_only_what_it_holds() -> None:
    name = "Congenital posterior urethral valves"
    assert not fits("urethral valves", "none", "Q64.2", name)
    assert fits("urethral valves", "none", "Q64.2", name, inborn=True)


def test_plain_postings_agree_with_content_words() -> None:
    names = [
        "Hereditary spherocytosis",
        "Spherophakia",
        "Urethral stricture, unspecified",
        "Congenital posterior urethral valves",
        "Acquired hemolytic anemias",
        "Valves of the urethra",
    ]
    postings = plain_postings(names)
    expected: dict[str, list[int]] = {}
    for row, name in enumerate(names):
        if not congenital(name):
            for word in content_words(name):
                expected.setdefault(word, []).append(row)
    assert {w: list(r) for w, r in postings.items()} == expected
    assert "spherocytosis" not in postings and list(postings["valve"]) == [5]
