"""Cutting outputs into diagnosis points: the project's rules and CliBench's."""

from __future__ import annotations

import pytest

from climb_vllm.icd_mapping.segmentation import (
    MAX_POINTS,
    clibench_point,
    clibench_points,
    heading_kind,
    split_points,
)

# -- the project's rules -------------------------------------------------------------------


def test_one_point_per_line() -> None:
    assert split_points("Hypertension\nType 2 diabetes\n\n") == ["Hypertension", "Type 2 diabetes"]


def test_preamble_and_closing_remark_around_a_list_are_dropped() -> None:
    text = (
        "Based on the notes, the likely diagnoses are:\n\n1. NSTEMI\n2. Hyperlipidemia\n\n"
        "Please consult a physician."
    )
    assert split_points(text) == ["1. NSTEMI", "2. Hyperlipidemia"]


def test_list_block_is_kept_when_the_text_starts_with_a_heading() -> None:
    # CliBench kept the second block here (the closing remark) and lost the list.
    text = "Diagnoses:\n- Sepsis\n- Pneumonia\n\nNote: further workup advised."
    assert split_points(text) == ["- Sepsis", "- Pneumonia"]


def test_many_blank_lines_make_one_point_per_block() -> None:
    blocks = [f"{i}. Diagnosis {i}" for i in range(1, 8)]
    assert split_points("\n\n".join(blocks)) == blocks


def test_unmarked_blocks_follow_clibench_preamble_rule() -> None:
    assert split_points("Here is my list\n\nAnemia\nGout") == ["Anemia", "Gout"]
    assert split_points("Anemia\nGout") == ["Anemia", "Gout"]


def test_inline_numbered_list_and_br_separators() -> None:
    assert split_points("1. Sepsis 2. Acute kidney injury 3. Hypotension") == [
        "Sepsis",
        "Acute kidney injury",
        "Hypotension",
    ]
    assert split_points("Sepsis<br>Gout") == ["Sepsis", "Gout"]


def test_single_line_answer_is_one_point_and_empty_output_has_none() -> None:
    assert split_points("Community-acquired pneumonia") == ["Community-acquired pneumonia"]
    assert split_points("") == []
    assert split_points("   \n\n  ") == []


def test_heading_lines_are_not_points_but_marked_lines_ending_in_colon_are() -> None:
    assert split_points("Primary diagnoses:\nSepsis\n**Secondary:**\nGout") == ["Sepsis", "Gout"]
    assert split_points("1. Sepsis:\n2. Gout") == ["1. Sepsis:", "2. Gout"]


def test_enormous_output_is_capped() -> None:
    points = split_points("\n".join(f"Diagnosis {i}" for i in range(100_000)))
    assert len(points) == MAX_POINTS


def test_a_recommendations_block_does_not_replace_the_diagnosis_list() -> None:
    text = (
        "1. NSTEMI\n2. Hypertension\n3. Hyperlipidemia\n\nRecommendations:\n"
        "- Cardiology follow-up\n- Statin therapy\n- Smoking cessation\n- Cardiac rehab"
    )
    assert split_points(text) == ["1. NSTEMI", "2. Hypertension", "3. Hyperlipidemia"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A plan section after the list, with more bullets than the list.
        ("- Sepsis\n- AKI\n\nPlan:\n- fluids\n- cultures\n- antibiotics", ["- Sepsis", "- AKI"]),
        # A preamble, the list, then a treatment section.
        (
            "Likely diagnoses:\n\n1. CHF exacerbation\n2. AKI\n\nTreatment:\n1. Diuresis\n"
            "2. Monitor creatinine\n3. Daily weights",
            ["1. CHF exacerbation", "2. AKI"],
        ),
        # "Assessment and plan" names diagnoses.
        (
            "Assessment and plan:\n1. COPD\n2. Pneumonia\n\nNext steps:\n- CXR\n- ABG\n- CBC",
            ["1. COPD", "2. Pneumonia"],
        ),
        # Items separated by blank lines are all kept (CliBench kept only the first).
        ("1. Sepsis\n\n2. Pneumonia\n\n3. AKI", ["1. Sepsis", "2. Pneumonia", "3. AKI"]),
        # A list split over two diagnosis sections.
        (
            "Primary:\n1. Stroke\n\nSecondary:\n- Atrial fibrillation\n- Hypertension",
            ["1. Stroke", "- Atrial fibrillation", "- Hypertension"],
        ),
        # A heading alone in its block governs the blocks after it.
        ("1. Gout\n\nWorkup:\n\n- uric acid\n\n- joint aspiration", ["1. Gout"]),
    ],
)
def test_blocks_under_non_diagnosis_headings_are_left_out(text: str, expected: list[str]) -> None:
    assert split_points(text) == expected


def test_more_than_five_blocks_skip_those_under_other_headings() -> None:
    blocks = ["1. A", "2. B", "3. C", "4. D", "Recommendations:", "- rest", "- fluids"]
    assert split_points("\n\n".join(blocks)) == ["1. A", "2. B", "3. C", "4. D"]


def test_heading_kinds() -> None:
    assert heading_kind("**Differential diagnoses:**") == "diagnosis"
    assert heading_kind("Recommendations:") == "other"
    assert heading_kind("Assessment and Plan:") == "diagnosis"
    assert heading_kind("Cardiovascular:") == "diagnosis"
    assert heading_kind("1. Sepsis:") == "none"


# -- CliBench's rules -------------------------------------------------------------------------


def test_clibench_keeps_the_first_block_when_the_text_starts_with_a_marker() -> None:
    text = "1. NSTEMI\n2. HTN\n\nRecommendations:\n- statin"
    assert clibench_points(text) == ["1. NSTEMI", "2. HTN"]


def test_clibench_keeps_the_second_block_after_a_heading() -> None:
    text = "Diagnoses:\n- Sepsis\n- Pneumonia\n\nNote: further workup advised."
    assert clibench_points(text) == ["Note: further workup advised."]


def test_clibench_finds_no_point_in_a_plain_line_and_reads_inline_numbering() -> None:
    assert clibench_points("Community-acquired pneumonia") == []
    assert clibench_points("1. Sepsis 2. AKI") == ["Sepsis ", "AKI"]


def test_clibench_point_cleaning_quirks() -> None:
    assert clibench_point("1. NSTEMI (I21.4)") == ("NSTEMI", ["I21.4"])
    assert clibench_point("1) Sepsis") == ("", [])  # no dot after the number: no text
    assert clibench_point("- Gout [M10.9]") == ("- Gout", ["M10.9"])
    # The label goes, the undotted code stays in the text.
    assert clibench_point("Hypertension (ICD-10-CM code: I10)") == ("Hypertension ( I10)", [])
