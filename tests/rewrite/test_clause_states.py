"""What the words after a subject pronoun say: the functions of ``clause_states``."""

from __future__ import annotations

import re

import pytest

from climb_vllm.rewrite.clause_states import (
    acts_after_someone,
    is_act_of_care,
    is_part,
    main_verb,
    opens_act_of_care,
    reports_after_companion,
    state_after,
)


@pytest.mark.parametrize(
    ("words", "asked", "expected"),
    [
        ("tolerated it well", False, "strong"),
        ("was more drowsy", False, "strong"),
        ("had missed two doses", False, "strong"),
        ("can dress herself now", False, "strong"),
        ("smelled of alcohol", False, "strong"),
        ("walked 200 feet", False, "strong"),
        ("walked her to the bathroom", False, None),
        ("has gout", False, "weak"),
        ("has been falling", False, "weak"),
        ("has been the proxy since", False, None),
        ("can climb stairs", False, "weak"),
        ("can examine her", False, None),
        ("agreed", True, "weak"),
        ("agreed", False, None),
        ("agreed with the plan", True, None),
        ("ordered a ct", False, None),
        ("had to suction her", False, None),
        # Care received in the passive is the patient's; a diagnosis may be a relative's.
        ("was referred for counselling", False, "strong"),
        ("was diagnosed at 40", False, "weak"),
    ],
)
def test_state_after(words: str, asked: bool, expected: str | None) -> None:
    assert state_after(words.split(), "herself", asked) == expected


def test_main_verb_act_of_care_and_part() -> None:
    assert main_verb("will not have called".split()) == "called"
    assert main_verb([]) == ""
    assert is_act_of_care("had reviewed the films".split())
    assert is_act_of_care("added a diuretic".split())
    assert not is_act_of_care("added that she felt better".split())
    assert not is_act_of_care("was treated with".split())
    assert is_act_of_care("weighed the baby".split()) and is_act_of_care("weighed him".split())
    assert not is_act_of_care("weighed 50 kg".split())
    assert not is_act_of_care("weighed her baby".split())
    assert is_part("the hcp".split()) and not is_part("tired today".split())


def test_an_act_of_care_read_in_the_text() -> None:
    text = "Dr. Marsh reviewed the MRI. He sees no infarct. He recommends aspirin."
    last = text.rindex("He")
    assert opens_act_of_care(text, last, last + 2)
    assert acts_after_someone(text, last, last + 2)
    # What a patient does is no act of care; with no one named before, no one to give it to.
    walked = "Dr. Marsh reviewed the MRI. He walked 50 feet."
    at = walked.rindex("He")
    assert not opens_act_of_care(walked, at, at + 2)
    alone = "Labs are back. It is clear. He recommends aspirin."
    at = alone.rindex("He")
    assert opens_act_of_care(alone, at, at + 2) and not acts_after_someone(alone, at, at + 2)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A companion of the pronoun's sex came with the patient, then reports on them.
        ("His son drove him in. He says he has been confused.", True),
        ("She came with her wife. She says she is short of breath.", True),
        ("His nephew translated. He said he has had the pain for a month.", True),
        ("His brother brought him in. He is worried about him.", True),
        ("She was brought by her daughter-in-law. She noticed her confusion.", True),
        ("She came with her partner. She reports that she sleeps badly.", True),
        # A companion of the other sex cannot be "he"; nor is a clinician a companion.
        ("His wife brought him in. He says he has had chest pain.", False),
        ("He came to see Dr. Lee. He says he has had pain.", False),
        # No report on someone, no companion's act, or the report not the sentence's opening.
        ("His son drove him in. He says the pain began today.", False),
        ("His son lives nearby. He says he has been confused.", False),
        ("His son drove him in. Today he says he has been confused.", False),
        ("He says he has been confused.", False),
        ("His son drove him in. He asks if he can go home.", False),
    ],
)
def test_a_report_after_a_companion(text: str, expected: bool) -> None:
    at = _report_pronoun(text)
    assert reports_after_companion(text, at, at + len(text[at:].split()[0])) is expected


def _report_pronoun(text: str) -> int:
    """Where the last sentence's first pronoun is."""
    last = text.rindex(". ") + 2 if ". " in text else 0
    match = re.search(r"\b(?:he|she)\b", text[last:], re.IGNORECASE)
    assert match is not None
    return last + match.start()
