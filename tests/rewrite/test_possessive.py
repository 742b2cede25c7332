"""Tests for reading a female -> male "her" as "his" or "him"."""

from __future__ import annotations

import pytest

from climb_vllm.rewrite.possessive import his_or_him, next_word, previous_word


def _read(sentence: str) -> str:
    """``his_or_him`` for the first "her" of ``sentence`` (marked by surrounding spaces or a
    sentence start)."""
    at = sentence.index("her ") if sentence.startswith("her ") else sentence.index(" her") + 1
    return his_or_him(sentence, at, at + 3)


@pytest.mark.parametrize(
    ("sentence", "reading"),
    [
        ("The nurse gave her magnesium.", "him"),
        ("The nurse gave her husband a call.", "his"),
        ("There is a rash on her back.", "his"),
        ("We sent her home.", "him"),
        # A function after "found her" is hers, as a measurement is; a state makes her the
        # object.
        ("The therapist found her speech slurred.", "his"),
        ("The therapist found her gait unsteady.", "his"),
        ("The doctor found her lungs clear.", "his"),
        ("The doctor found her glucose low.", "his"),
        ("The doctor found her confused.", "him"),
        # A state she is laid or kept in makes her the object; so does how often she is seen,
        # unless a thing of hers follows.
        ("The nurse laid her flat and raised her legs.", "him"),
        ("They kept her warm overnight.", "him"),
        ("The psychiatrist has seen her monthly since the admission.", "him"),
        ("The nurse says she missed her monthly injection.", "his"),
        ("She kept her appointment.", "his"),
        # After a verb of seeing, a bare verb makes her the object.
        ("The nurse watched her feed the baby.", "him"),
        ("The doctor saw her walk in.", "him"),
        ("He watched her collapse.", "him"),
        ("He noticed her swelling.", "his"),
        # Visiting her home is a place of hers; sending her home is not.
        ("The therapist visited her home.", "his"),
        ("The therapist sent her home.", "him"),
        ("The nurse scored her 22 of 30.", "him"),
        ("her knee is swollen.", "his"),
    ],
)
def test_her_is_read_as_possessive_or_object(sentence: str, reading: str) -> None:
    assert _read(sentence) == reading


def test_the_words_beside_a_word() -> None:
    text = "She gave her 2 mg."
    assert next_word(text, 8) == "her"
    assert next_word(text, len(text)) is None
    assert previous_word(text, 9) == "gave"
    assert previous_word(text, 0) is None
