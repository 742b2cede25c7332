"""Refusal and non-answer screening of diagnosis outputs."""

from __future__ import annotations

import pytest

from climb_vllm.icd_mapping.refusals import disclaimer, screen


@pytest.mark.parametrize(
    ("point", "kind"),
    [
        ("I am not able to provide a medical diagnosis.", "refusal"),
        ("I'm unable to diagnose without an examination.", "refusal"),
        ("As an AI, I cannot make clinical decisions.", "refusal"),
        ("Please consult a qualified healthcare provider.", "refusal"),
        ("This is not a substitute for professional medical advice.", "refusal"),
        ("Not enough information is provided to make a diagnosis.", "non_answer"),
        ("Please provide more details about the symptoms.", "non_answer"),
        # Diagnoses that share words with the cues are not disclaimers.
        ("Inability to ambulate due to weakness", None),
        ("Consultation for chest pain", None),
        ("Unable to void (urinary retention)", None),
        ("Sorry, no", "refusal"),
        ("Pneumonia", None),
    ],
)
def test_disclaimer_points(point: str, kind: str | None) -> None:
    assert disclaimer(point) == kind


def test_screen_keeps_diagnoses_and_names_refusals() -> None:
    assert screen("", []) == ("empty", [])
    assert screen("  \n", []) == ("empty", [])
    assert screen("Sepsis\nI can't provide more.", ["Sepsis", "I can't provide more."]) == (
        "answer",
        ["Sepsis"],
    )
    text = "I cannot provide a diagnosis. Please see a doctor."
    assert screen(text, [text]) == ("refusal", [])
    # No points at all but a refusal in the whole text.
    assert screen("Sorry.", []) == ("refusal", [])
    # No points, no cue: an answer that could not be read.
    assert screen("???", []) == ("answer", [])
