"""Who a word of the patient's sex refers to: the rules of ``referents``, directly and through
the rewrite."""

from __future__ import annotations

import pytest

from climb_vllm.benchmarks.extrinsic import referents
from climb_vllm.benchmarks.extrinsic.sex_rewrite import swap_sex


def test_a_sentence_ends_after_an_age_and_sex_letter_but_not_after_an_initial() -> None:
    text = "Patient is a 61 y/o M. The fellow saw him. E. coli grew."
    assert referents.sentence_bounds(text, text.index("fellow")) == (22, 42)
    assert referents.sentence_bounds(text, text.index("coli"))[0] == 42


def test_titles_nouns_and_addresses() -> None:
    text = "Mrs. Lopez (mother) is here; Mrs. Lopez says the patient, Mrs. Vu, slept."
    assert referents.title_is_third_party(text, 0, 3)
    assert referents.title_is_third_party(
        text, text.index("Mrs. Lopez says"), text.index("Mrs. Lopez says") + 3
    )
    assert not referents.title_is_third_party(
        text, text.index("Mrs. Vu"), text.index("Mrs. Vu") + 3
    )
    shared = "Mr. Dunn came with his son, Mr. Dunn Jr."
    assert not referents.title_is_third_party(shared, 0, 2)
    assert referents.title_is_third_party(shared, shared.rindex("Mr."), shared.rindex("Mr.") + 2)
    punched = "He was punched by a man; the man fled. The man is 40."
    assert referents.noun_is_third_party(punched, punched.index("man"))
    assert referents.noun_is_third_party(punched, punched.index("man fled"))
    assert not referents.noun_is_third_party("He is a 40 yo man.", 14)
    assert referents.address_is_third_party("He asked the nurse, sir?", 19)
    assert not referents.address_is_third_party("Sir, the nurse said to him.", 0)
    assert not referents.address_is_third_party("Sir, can you hear me?", 0)


def test_a_reader_gives_every_pronoun_a_decision() -> None:
    text = "The nurse reports that he gave him morphine and he fell asleep."
    reader = referents.SentenceReader(text, 0, True, lambda s, e: True)
    he, him, later = (text.index(" he ") + 1, text.index("him"), text.rindex(" he ") + 1)
    assert reader.decision(he).third and not reader.decision(him).third
    assert not reader.decision(later).third  # "fell": only the patient


@pytest.mark.parametrize(
    ("to", "before", "after"),
    [
        # A clinician who acts, reports or is the topic keeps the pronoun.
        (
            "female",
            "Dr. Jensen saw the patient; he ordered a CT.",
            "Dr. Jensen saw the patient; he ordered a CT.",
        ),
        (
            "female",
            "The nurse reports that he gave him morphine.",
            "The nurse reports that he gave her morphine.",
        ),
        # What a third party reports about the patient's state is the patient's.
        (
            "male",
            "Her daughter says she has been falling.",
            "His daughter says he has been falling.",
        ),
        # A verb only a patient does wins over the topic.
        (
            "female",
            "Dr. Ito drained it, and he tolerated it well.",
            "Dr. Ito drained it, and she tolerated it well.",
        ),
        # A state only a patient is in wins over the topic; an act of care is the carer's.
        (
            "female",
            "The resident was paged because he was hypotensive; he gave a bolus.",
            "The resident was paged because she was hypotensive; he gave a bolus.",
        ),
        (
            "female",
            "His nurse, Mr. Cho, noticed that he was more drowsy and called the team.",
            "Her nurse, Mr. Cho, noticed that she was more drowsy and called the team.",
        ),
        (
            "male",
            "She had a colonoscopy with Dr. Ruiz; she removed two polyps.",
            "He had a colonoscopy with Dr. Ruiz; she removed two polyps.",
        ),
        # Titles: a relative's in apposition or brackets; a shared surname's first mention.
        (
            "female",
            "His brother, Mr. Cole, will take him home.",
            "Her brother, Mr. Cole, will take her home.",
        ),
        (
            "male",
            "Mrs. Lopez (mother) is at the bedside.",
            "Mrs. Lopez (mother) is at the bedside.",
        ),
        (
            "female",
            "Mr. Dunn was brought in by his son, Mr. Dunn Jr., who found him.",
            "Ms. Dunn was brought in by her son, Mr. Dunn Jr., who found her.",
        ),
        # "a man" after a preposition, and "the man" after it, are someone else.
        (
            "female",
            "He was punched by a man; the man fled.",
            "She was punched by a man; the man fled.",
        ),
        # "sir" to a clinician by the patient; to the patient by a clinician.
        (
            "female",
            "He asked the resident, 'Are you sure, sir?'",
            "She asked the resident, 'Are you sure, sir?'",
        ),
        (
            "female",
            "The doctor said to him, 'Sir, you need surgery.'",
            "The doctor said to her, 'Ma'am, you need surgery.'",
        ),
    ],
)
def test_third_party_rules(to: str, before: str, after: str) -> None:
    assert swap_sex(before, to)[0] == after
