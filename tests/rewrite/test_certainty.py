"""Certainty: a word is certain only where the text leaves one reading of it."""

from __future__ import annotations

import pytest

from climb_vllm.rewrite.certainty import Reading, people, plain_object
from climb_vllm.rewrite.sex_rewrite import rewrite


def _marks(text: str, to: str = "female") -> list[tuple[str, bool]]:
    """(word, uncertain) of every edit and listed kept word, in order."""
    done = rewrite(text, to)
    return [(e.before, e.uncertain) for e in sorted(done.edits + done.kept, key=lambda e: e.offset)]


@pytest.mark.parametrize(
    ("text", "to", "expected"),
    [
        # No one else: every word is certain.
        ("He reports chest pain and his wife agrees.", "female", [("He", False), ("his", False)]),
        # Someone of the patient's sex named before: open.
        (
            "His son visited. He brought flowers.",
            "female",
            [("His", False), ("He", True)],
        ),
        # Someone of the other sex cannot take the word.
        (
            "His daughter visited. She says he is eating well.",
            "female",
            [("His", False), ("he", False)],
        ),
        # WinoGender: the clinician could take the pronoun.
        (
            "The nurse notified the patient that her shift would be ending.",
            "male",
            [("her", True)],
        ),
        # A pronoun object is never its own clause's subject.
        ("Dr. Burke saw him in clinic.", "female", [("him", False)]),
        # Before a noun "her" may be a possessive: the exemption does not hold.
        ("A stranger found her wallet.", "male", [("her", True)]),
        # Along a chain of pronouns past the window, the first open one keeps the rest open.
        (
            "The nurse came in. She checked the drip. She gave meds. She noted the pressure. "
            "She called the doctor.",
            "male",
            [("She", True), ("She", True), ("She", True), ("She", True)],
        ),
        # An age-sex abbreviation is always certain; an address form never is.
        ("67 y/o M. Sir, please sit.", "female", [("M", False), ("Sir", True)]),
        # An adjective of someone else: "the male nurse".
        (
            "He told the male nurse he felt better.",
            "female",
            [("He", False), ("male", True), ("he", True)],
        ),
    ],
)
def test_certainty_follows_the_readings_the_text_leaves(
    text: str, to: str, expected: list[tuple[str, bool]]
) -> None:
    assert _marks(text, to) == expected


def test_a_kin_word_said_from_someone_elses_side_is_listed() -> None:
    # The daughter speaks: "her mother" may be the patient.
    done = rewrite("Her daughter says her mother has been skipping her dose.", "male")
    listed = {(e.before, e.after) for e in done.uncertain()}
    assert ("mother", "father") in listed and ("her", "his") in listed
    # "her husband" in a man's note may be the patient; the title after it is kept, listed.
    done = rewrite("Mrs. Olsen reports her husband, Mr. Olsen, has been confused.", "female")
    assert [(e.before, e.uncertain) for e in done.kept] == [("husband", True), ("Mr", True)]
    assert done.text == "Mrs. Olsen reports her husband, Mr. Olsen, has been confused."


def test_the_patients_own_kin_word_changes() -> None:
    text = "He is the son of a man with hemochromatosis."
    assert rewrite(text, "female").text == "She is the daughter of a man with hemochromatosis."


def test_people_names_doers_and_leaves_things() -> None:
    text = "The technician and the accountant checked the monitor and the catheter."
    found = [text[p.start : p.start + 10] for p in people(text)]
    assert found == ["technician", "accountant"]
    # The patient by a single title, and the patient's description, are not someone else.
    assert people("Mr. Jones is a 67-year-old man.") == ()
    assert people("Mr. Jones called Mr. Smith.") != ()


def test_an_object_her_is_plain_only_before_no_noun() -> None:
    text = "called her to return it; found her wallet; saw her."
    assert plain_object(text, text.index("her") + 3)
    assert not plain_object(text, text.index("her wallet") + 3)
    assert plain_object(text, text.rindex("her") + 3)


def test_reading_with_one_other_person_of_the_other_sex() -> None:
    text = "She was seen by the pharmacist. He checked her dose."
    reading = Reading(text, "female")
    assert reading.certain(text.index("her dose"), "her")
