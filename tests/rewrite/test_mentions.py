"""Who a title, "man"/"woman" or "sir"/"ma'am" names, and where a sentence ends: the
functions of ``mentions``."""

from __future__ import annotations

import re

from climb_vllm.rewrite import mentions, referents


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
    # Harm done to someone, in the passive, meets whoever did it: "the man" is them; not after
    # no harm, or harm three sentences back.
    for text, noun, third in [
        ("He was mugged on the way home. The man took his wallet.", "man", True),
        ("She got pushed over in a shop. The woman ran off.", "woman", True),
        ("He was admitted overnight. The man is drowsy.", "man", False),
        ("He was hit by a car. He fell. He hurt his neck. The man is drowsy.", "man", False),
    ]:
        assert mentions.noun_is_third_party(text, text.index(noun)) is third
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


def test_one_other_person_of_the_other_sex() -> None:
    def one(text: str, male_patient: bool = False) -> bool:
        return mentions.only_someone_of_the_other_sex(text, male_patient)

    assert one("She saw the pharmacist. He checked her dose. She stopped it.")
    assert one("She saw Dr. Lee. He checked her dose.")
    assert one("'Ma'am, any allergies?' the pharmacist asked. She said no. He noted it.")
    assert one("His wife called. She found him on the floor.", male_patient=True)
    # No one spoken of as "he"; two people named (who may be one); a person without a role;
    # the one named of the patient's sex; "the patient" is the patient.
    assert not one("She saw the pharmacist. She stopped it.")
    assert not one("She saw Dr. Lee. The doctor said he would call.")
    assert not one("She saw the pharmacist. A man pushed her. He ran off.")
    assert not one("She came with her sister. He checked her dose.")
    assert one("The patient saw the pharmacist. He checked her dose.")


def test_a_relative_named_as_the_patients_speaks_of_the_patient_as_kin() -> None:
    def found(text: str) -> list[str]:
        return [text[p:e] for p, _, e in mentions.patient_as_relatives_kin(text)]

    assert found("The patient's son is here. He says his father is confused.") == ["his father"]
    assert found("Mr. Quinn (son) asked that his father not be told.") == ["his father"]
    assert found("The patient's mother stayed while she examined her daughter.") == ["her daughter"]
    # The relative's own kin of another kind, a possessive of the other sex, or a relative not
    # named as the patient's: nothing.
    assert found("The patient's son is here. He says his wife is ill.") == []
    assert found("The patient's son is here. She says her father is ill.") == []
    assert found("His son is here. He says his father is confused.") == []
    # Only in the relative's sentence and the two after it.
    far = "The patient's son called. It rained. Labs are back. CT is clear. He says his father is."
    assert found(far) == []


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
    called = "He called out, 'Excuse me, sir!' The porter turned."
    at = called.index("sir")
    reader = referents.SentenceReader(called, at, True, her_is_object)
    assert mentions.address_is_third_party(called, at, _third(reader, at))
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


def test_a_clause_that_brings_in_a_man_names_someone_else() -> None:
    told = "He reports that a man approached him in the parking lot. He says that man had a knife."
    assert mentions.noun_is_third_party(told, told.index("man"))
    assert mentions.noun_is_third_party(told, told.rindex("man"))  # "that man", after one
    when = "She was waiting when a woman asked her for money."
    assert mentions.noun_is_third_party(when, when.index("woman"))
    # The patient introduced as a man is the patient, demonstratives included.
    assert not mentions.noun_is_third_party("He is a 40 yo man.", 14)
    this = "This man presents with chest pain."
    assert not mentions.noun_is_third_party(this, this.index("man"))


def test_male_or_female_before_a_role_is_that_persons_sex() -> None:
    text = "She thanked the male nurse. A 40-year-old female with a female partner."
    assert mentions.sex_adjective_of_other(text, text.index("male") + 4)
    assert not mentions.sex_adjective_of_other(text, text.index("female") + 6)  # "female with"
    assert mentions.sex_adjective_of_other(text, text.rindex("female") + 6)  # "female partner"
    assert not mentions.sex_adjective_of_other("A 3-year-old male patient.", 17)


def test_the_relatives_own_pronoun_owns_the_possessive() -> None:
    text = "The patient's daughter called. She says her mother has been skipping doses."
    assert mentions.relatives_own_pronoun(text, text.index("her mother")) == text.index("She")
    other = "The patient's son called. She says his father is confused."
    assert mentions.relatives_own_pronoun(other, other.index("his father")) is None
