"""The word lists of ``referent_words``: each word points one way."""

from __future__ import annotations

from climb_vllm.rewrite import referent_words as words


def test_what_a_patient_does_is_never_an_act_of_care_or_help() -> None:
    assert not words.PATIENT_VERBS & words.CARE_VERBS
    assert not words.PATIENT_VERBS & words.HELPS
    assert not words.PATIENT_STATES & words.PARTS
    assert not words.PASSIVE_CARE & words.PATIENT_STATES


def test_roles_and_relatives_are_apart_and_answers_are_speech() -> None:
    assert not words.ROLES & (words.KIN_MALE | words.KIN_FEMALE)
    assert not words.KIN_MALE & words.KIN_FEMALE
    assert words.ANSWERS <= words.SPEECH
    assert {"dietitian", "phlebotomist", "bystander", "driver"} <= words.ROLES
    # Specialists by their suffix.
    for role in ("cardiologist", "podiatrist", "neurosurgeon", "endoscopist", "physiotherapist"):
        assert words.is_role(role)
    assert not words.is_role("surgery") and not words.is_role("therapy")
    # Titles by other endings, British titles, and people one is held or lives with.
    for role in ("orthopedist", "geneticist", "sonographer", "orthodontist", "prosthetist"):
        assert words.is_role(role)
    assert {"gp", "registrar", "inmate", "flatmate"} <= words.ROLES
    assert "mum" in words.KIN_FEMALE and "grandpa" in words.KIN_MALE
    for word in ("wrist", "list", "exist", "biopsy", "ultrasonography", "hip"):
        assert not words.is_role(word)


def test_every_word_is_lower_case_and_single() -> None:
    lists = [v for name, v in vars(words).items() if isinstance(v, frozenset)]
    assert len(lists) >= 20
    for listed in lists:
        assert all(w == w.lower() and " " not in w for w in listed)
