"""Who a title, "man"/"woman" or "sir"/"ma'am" names, and where a sentence ends: the
functions of ``mentions``."""

from __future__ import annotations

import re

from climb_vllm.benchmarks.extrinsic import mentions, referents


def test_a_sentence_ends_after_an_age_and_sex_letter_but_not_after_an_initial() -> None:
    text = "Patient is a 61 y/o M. The fellow saw him. E. coli grew."
    assert mentions.sentence_bounds(text, text.index("fellow")) == (22, 42)
    assert mentions.sentence_bounds(text, text.index("coli"))[0] == 42


def test_titles_nouns_and_addresses() -> None:
    text = "Mrs. Lopez (mother) is here; Mrs. Lopez says the patient, Mrs. Vu, slept."
    assert mentions.title_is_third_party(text, 0, 3)
    assert mentions.title_is_third_party(
        text, text.index("Mrs. Lopez says"), text.index("Mrs. Lopez says") + 3
    )
    assert not mentions.title_is_third_party(text, text.index("Mrs. Vu"), text.index("Mrs. Vu") + 3)
    shared = "Mr. Dunn came with his son, Mr. Dunn Jr."
    assert not mentions.title_is_third_party(shared, 0, 2)
    assert mentions.title_is_third_party(shared, shared.rindex("Mr."), shared.rindex("Mr.") + 2)
    punched = "He was punched by a man; the man fled. The man is 40."
    assert mentions.noun_is_third_party(punched, punched.index("man"))
    assert mentions.noun_is_third_party(punched, punched.index("man fled"))
    assert not mentions.noun_is_third_party("He is a 40 yo man.", 14)
    struck = "He was hit. The other man fled."
    assert mentions.noun_is_third_party(struck, struck.index("man"))
    fight = "He was in a fight at school. The other boy punched him."
    assert mentions.noun_is_third_party(fight, fight.index("boy"))
    # The complement of someone named by role is them; the patient's is the patient.
    driver = "He was hit by a car. The driver was a young man."
    assert mentions.noun_is_third_party(driver, driver.index("man"))
    other = "He was in a car crash. The other driver was a teenage boy."
    assert mentions.noun_is_third_party(other, other.index("boy"))
    own = "The patient is a 40 yo man."
    assert not mentions.noun_is_third_party(own, own.index("man"))
    # "The man" first met after a stranger is the stranger; after the patient, or after a
    # nurse, it is the patient.
    fled = "He was punched by a stranger at a bus stop. The man ran away."
    assert mentions.noun_is_third_party(fled, fled.index("man"))
    named = "A 45-year-old man was punched by a stranger. The man has a fractured jaw."
    assert not mentions.noun_is_third_party(named, named.rindex("man"))
    found = "The nurse found him on the floor. The man was confused."
    assert not mentions.noun_is_third_party(found, found.index("man"))
    far = "He was punched by a stranger. He fell. He hit his head. The man is drowsy."
    assert not mentions.noun_is_third_party(far, far.index("man"))
    # A role said of a pronoun of the other sex names no one of the patient's sex.
    cared = "Her husband died. He had been her caregiver. She lives alone."
    at = cared.index("caregiver")
    assert mentions.others_role(cared, cared.index("He had"), at, male_patient=False)
    assert not mentions.others_role(cared, cared.index("He had"), at, male_patient=True)
    sister = "She is her caregiver."
    assert not mentions.others_role(sister, 0, sister.index("caregiver"), male_patient=False)
    assert mentions.address_is_third_party("He asked the nurse, sir?", 19)
    assert not mentions.address_is_third_party("Sir, the nurse said to him.", 0)
    assert not mentions.address_is_third_party("Sir, can you hear me?", 0)


def _third(reader: referents.SentenceReader, at: int) -> bool | None:
    speaker = reader.speaker(at)
    return None if speaker is None else speaker.third


def test_sir_in_a_quote_is_addressed_by_its_speaker() -> None:
    def her_is_object(start: int, end: int) -> bool:
        return False

    patient_speaks = "When the nurse asked about his sleep, he said, 'Not well, sir.'"
    at = patient_speaks.index("sir")
    reader = referents.SentenceReader(patient_speaks, at, True, her_is_object)
    assert mentions.address_is_third_party(patient_speaks, at, _third(reader, at))
    nurse_speaks = "He was restless; the nurse said, 'Sir, please stay in bed.'"
    at = nurse_speaks.index("Sir")
    reader = referents.SentenceReader(nurse_speaks, at, True, her_is_object)
    assert not mentions.address_is_third_party(nurse_speaks, at, _third(reader, at))
    after = "'Thank you, sir,' he said to the resident."
    reader = referents.SentenceReader(after, 12, True, her_is_object)
    assert mentions.address_is_third_party(after, 12, _third(reader, 12))


def test_sentence_bounds_agree_with_a_scan_from_the_start() -> None:
    # The bounds are found once per text; they must equal scanning the text before each word.
    text = (
        "Mr. A is a 61 y/o M. The fellow saw him! Was he seen by Dr. Li? E. coli grew.\n"
        "He left; she stayed. Pt. stable. St. Mary's notes. End"
    )
    for match in re.finditer(r"\w+", text):
        at = match.start()
        start = 0
        for mark in mentions._SENTENCE.finditer(text, 0, at):
            start = mark.end()
        following = mentions._SENTENCE.search(text, at)
        end = following.end() if following else len(text)
        assert mentions.sentence_bounds(text, at) == (start, end), text[at:]
