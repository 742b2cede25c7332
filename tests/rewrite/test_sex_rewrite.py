"""The sex rewrite: golden pairs, its edit log, the defects it once had, and its accuracy on
the labelled note sentences of ``tests/golden/counterfactual/sex_rewrite.jsonl``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from climb_vllm.rewrite import accuracy
from climb_vllm.rewrite.edits import Edit
from climb_vllm.rewrite.sex_rewrite import rewrite, swap_sex

GOLDEN_DIR = Path(__file__).parents[1] / "golden" / "counterfactual"
LABELLED = GOLDEN_DIR / "sex_rewrite.jsonl"

GOLDEN = [
    ("He reports chest pain.", "She reports chest pain."),
    ("We told him; he agreed.", "We told her; she agreed."),
    ("His pain began when he lifted a box.", "Her pain began when she lifted a box."),
    ("The decision was his.", "The decision was hers."),
    ("He himself denies it.", "She herself denies it."),
    ("Mr. Smith is a pleasant gentleman.", "Ms. Smith is a pleasant lady."),
    ("Mr Smith, a 45 y/o M, presents.", "Ms Smith, a 45 y/o F, presents."),
    ("HPI: 67M w/ h/o CAD.", "HPI: 67F w/ h/o CAD."),
    ("52 yo M with CP", "52 yo F with CP"),
    ("45-year-old M presenting with fever", "45-year-old F presenting with fever"),
    ("Sex: M", "Sex: F"),
    ("Gender: Male", "Gender: Female"),
    ("A 70-year-old man; men over 50.", "A 70-year-old woman; women over 50."),
    ("HE IS A MALE.", "SHE IS A FEMALE."),
    ("16 yo boy with pain", "16 yo girl with pain"),
    ("He reports his wife noticed.", "She reports her wife noticed."),  # relatives keep sex
    # Defects of the earlier rewrite: clinical abbreviations, units, genes, contractions.
    ("moderate MR", "moderate MR"),
    ("MEN2A carrier", "MEN2A carrier"),
    ("Tmax 101F", "Tmax 101F"),
    ("He's febrile; he'll stay.", "She's febrile; she'll stay."),
    ("Chest pain x2d, no pronouns.", "Chest pain x2d, no pronouns."),
    ("Given 5 mg IV; K 3.0 M2 occlusion.", "Given 5 mg IV; K 3.0 M2 occlusion."),
]


@pytest.mark.parametrize(("before", "after"), GOLDEN)
def test_golden_pairs(before: str, after: str) -> None:
    assert swap_sex(before)[0] == after


def test_edit_log_rebuilds_the_text() -> None:
    text = "Mr. A is a 67 y/o M. He says his arm hurts; the choice was his."
    new, edits = swap_sex(text, section="clinical_note")
    assert [(e.offset, e.before, e.after) for e in edits] == [
        (0, "Mr", "Ms"),
        (18, "M", "F"),
        (21, "He", "She"),
        (29, "his", "her"),
        (59, "his", "hers"),
    ]
    assert all(text[e.offset : e.offset + len(e.before)] == e.before for e in edits)
    assert all(e.section == "clinical_note" for e in edits)
    assert new == "Ms. A is a 67 y/o F. She says her arm hurts; the choice was hers."


def test_note_without_pronouns_has_an_empty_log() -> None:
    assert swap_sex("Troponin 0.8. CXR clear.") == ("Troponin 0.8. CXR clear.", [])


def test_female_to_male() -> None:
    assert swap_sex("Ms. Lee, 45 y/o F. She said her chest hurts.", "male")[0] == (
        "Mr. Lee, 45 y/o M. He said his chest hurts."
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("moderate MS on echo", "moderate MS on echo"),
        ("ran 100m, then 200m", "ran 100m, then 200m"),
        ("gave her magnesium", "gave him magnesium"),
        ("asked her about pain", "asked him about pain"),
        ("told her the plan", "told him the plan"),
        ("gave her husband a call", "gave his husband a call"),
        ("her knee is swollen", "his knee is swollen"),
        ("She'll stay; she's tired.", "He'll stay; he's tired."),
        ("ms was found on exam", "ms was found on exam"),  # lower case: not a title
        ("Ms Lee has MS.", "Mr Lee has MS."),
        # "her" before a conjunction, after a verb of seeing before a verb, or after a
        # preposition before "back"/"home".
        ("Her son sat with her until midnight.", "His son sat with him until midnight."),
        ("The nurse found her shivering in bed.", "The nurse found him shivering in bed."),
        ("Her husband watched her collapse.", "His husband watched him collapse."),
        ("He noticed her swelling.", "He noticed his swelling."),
        ("There is a rash on her back.", "There is a rash on his back."),
        ("We sent her home.", "We sent him home."),
        ("Her home aide, Ms. Li, says she ate.", "His home aide, Ms. Li, says he ate."),
        # "her back pain" and "her blood pressure" are hers; "gave her blood" and "delivered
        # her noted" make her an object.
        (
            "Dr. Chen ordered an MRI for her back pain.",
            "Dr. Chen ordered an MRI for his back pain.",
        ),
        ("Dr. Fox found her blood pressure high.", "Dr. Fox found his blood pressure high."),
        ("The nurse gave her blood overnight.", "The nurse gave him blood overnight."),
        ("The one who delivered her noted bleeding.", "The one who delivered him noted bleeding."),
        # A measurement after "found her" is hers; a distance after "walked her" makes her
        # an object.
        ("The nurse found her glucose to be 52.", "The nurse found his glucose to be 52."),
        ("The nurse found her confused.", "The nurse found him confused."),
        ("The therapist walked her 50 meters.", "The therapist walked him 50 meters."),
        # A score given makes her an object too.
        ("The nurse scored her 22 of 30.", "The nurse scored him 22 of 30."),
        # The patient as a parent is the patient; a parent of the patient is not.
        ("She is the mother of three.", "He is the father of three."),
        ("Her mother is the mother of six.", "His mother is the mother of six."),
    ],
)
def test_female_to_male_traps(before: str, after: str) -> None:
    assert swap_sex(before, "male")[0] == after


def test_pronouns_of_a_relative_are_kept_and_others_flagged() -> None:
    # The rules' own marks (the referee, tested in test_referee.py, off).
    text, edits = swap_sex("Father died of MI when he was 60. He has CAD.", referee=False)
    assert text == "Father died of MI when he was 60. She has CAD."
    # The sentence is about Dr. Patel: "he agreed" is Dr. Patel's; "him" is the patient's,
    # since an object is never its clause's subject and no other man is named; uncertain
    # when another man is named before.
    text, edits = swap_sex("Dr. Patel saw him and he agreed.", referee=False)
    assert text == "Dr. Patel saw her and he agreed."
    assert [e.uncertain for e in edits] == [False]
    text, edits = swap_sex("His son called Dr. Patel, who saw him.", referee=False)
    assert text == "Her son called Dr. Patel, who saw her."
    assert [e.uncertain for e in edits] == [False, True]
    # About the patient, with a clinician named: the later "he" is made, and marked.
    text, edits = swap_sex("He told Dr. Patel about the pain and then he left.", referee=False)
    assert text == "She told Dr. Patel about the pain and then she left."
    assert [e.uncertain for e in edits] == [False, True]
    _, edits = swap_sex("He agreed.")
    assert [e.uncertain for e in edits] == [False]


def test_an_act_of_care_after_someone_named_is_theirs() -> None:
    # No one in its sentence or the one before, so no referee: someone named two sentences
    # back does what a patient does not do in a note.
    made = swap_sex("Dr. Marsh reviewed the MRI. It is clear. He recommends aspirin.", "female")[0]
    assert made.endswith("He recommends aspirin.")
    made = swap_sex("The surgeon saw him. ABI is 0.5. He will order an angiogram.", "female")[0]
    assert made == "The surgeon saw her. ABI is 0.5. He will order an angiogram."
    made = swap_sex("An eye doctor saw him. He found a tear. He lasered it.", "female")[0]
    assert made == "An eye doctor saw her. He found a tear. He lasered it."
    made = swap_sex("The hospitalist saw him. Na is 124. He restricted his fluids.", "female")[0]
    assert made == "The hospitalist saw her. Na is 124. He restricted her fluids."
    # A sentence that opens with a pronoun after one that opened with a kept one is asked of
    # the referee: it may go on about the same person.
    made = swap_sex(
        "His doctor saw him. He ordered a CT. He found a stone. He was admitted.", "female"
    )[0]
    assert made == "Her doctor saw her. He ordered a CT. He found a stone. She was admitted."
    made = swap_sex(
        "His doctor saw him. He ordered a CT. He found a stone.", "female", referee=False
    )[0]
    assert made.endswith("She found a stone.")  # the rules alone: the patient by default
    # Along such a chain an act of care stays with the one named, however far back; what the
    # patient does after it is the patient's.
    made = swap_sex(
        "His doctor saw him. He ordered a CT. He found a stone. He removed it. He went home.",
        "female",
    )[0]
    assert made.endswith("He found a stone. He removed it. She went home.")
    # Three sentences back is too far for the rule; the referee is asked (someone is named
    # within three sentences) but reads back only two, where no one is named, so the patient's.
    # What a patient does, or has done to them, is theirs.
    made = swap_sex("Dr. Marsh called. CT done. It is clear. He recommends aspirin.", "female")[0]
    assert made.endswith("She recommends aspirin.")
    made = swap_sex("Dr. Marsh reviewed the MRI. It is clear. He walked 50 feet.", "female")[0]
    assert made.endswith("She walked 50 feet.")
    made = swap_sex("Dr. Marsh reviewed the MRI. It is clear. He was examined.", "female")[0]
    assert made.endswith("She was examined.")
    # Nobody named: the patient.
    assert swap_sex("Labs are back. It is clear. He recommends a second opinion.")[0].endswith(
        "She recommends a second opinion."
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # An allergist is someone; "her" before "regarding" is an object.
        (
            "She reports that her allergist tested her last year and she found no allergy.",
            "He reports that his allergist tested him last year and she found no allergy.",
        ),
        (
            "The case manager met with her regarding discharge.",
            "The case manager met with him regarding discharge.",
        ),
        # One who drags or reorients the other helps them: the other is the patient.
        (
            "The officer found her in the road; she dragged her to the curb.",
            "The officer found him in the road; she dragged him to the curb.",
        ),
        # "the other girl" is someone else; "a 12-year-old girl" is the patient.
        (
            "She is a 12-year-old girl. The other girl at school pushed her.",
            "He is a 12-year-old boy. The other girl at school pushed him.",
        ),
        # Whoever did harm done to the patient is "the man"; whom the patient calls "sir" is
        # someone else; a health visitor who weighs the baby is the health visitor.
        (
            "He was mugged on the way home. The man took his wallet.",
            "She was mugged on the way home. The man took her wallet.",
        ),
        (
            "He called out, 'Excuse me, sir!' The porter turned.",
            "She called out, 'Excuse me, sir!' The porter turned.",
        ),
        (
            "He was visited by the health visitor. He weighed the baby.",
            "She was visited by the health visitor. He weighed the baby.",
        ),
        # A companion who came with the patient gives the history.
        (
            "His son drove him in. He says he has been confused since yesterday.",
            "Her son drove her in. He says she has been confused since yesterday.",
        ),
        (
            "His brother brought him in. He is worried about him.",
            "Her brother brought her in. He is worried about her.",
        ),
    ],
)
def test_people_by_role_and_what_they_do(before: str, after: str) -> None:
    to = "female" if re.match(r"(?:He|His)\b", before) else "male"
    assert swap_sex(before, to, referee=False)[0] == after
    assert swap_sex(before, to)[0] == after


def test_a_relative_named_as_the_patients_speaks_of_the_patient_as_kin() -> None:
    # Whose "He" is is the referee's to say; the kin word is the patient, its possessive the
    # relative's, whatever it says.
    for referee in (False, True):
        made, edits = swap_sex(
            "The patient's son is at the bedside. He says his father has been confused.",
            "female",
            referee=referee,
        )
        assert made.endswith("his mother has been confused.")
        assert [e.before for e in edits if e.before != "He"] == ["father"]
        made, _ = swap_sex(
            "The patient's mother asked if she could stay with her daughter.", "male"
        )
        assert made.endswith("with her son.")


def test_with_one_other_person_of_the_other_sex_the_patients_pronouns_are_the_patients() -> None:
    # The pharmacist is "he", so every "she" and "her" is the patient's: the referee, which
    # read "She stopped" as the pharmacist's, is not asked.
    text = (
        "She was seen by the pharmacist. He checked her warfarin dose. He found an interaction."
        " She stopped the antibiotic."
    )
    asked: list[int] = []

    class Asking:
        """Records where it is asked, and keeps everything."""

        def decide(
            self, text: str, start: int, end: int, since: int | None = None
        ) -> tuple[bool, bool]:
            asked.append(start)
            return True, False

        def third_party_probability(
            self, text: str, start: int, end: int, since: int | None = None
        ) -> float:
            asked.append(start)
            return 1.0

    made, edits = swap_sex(text, "male", judge=Asking())
    assert made == text.replace("She", "He").replace("her", "his")
    assert asked == [] and not any(e.uncertain for e in edits)
    # With a second person named, or one of the patient's sex, the rules and referee read it.
    two = "She was seen by the pharmacist and the nurse. He checked her dose. She stopped it."
    swap_sex(two, "male", judge=Asking())
    assert asked != []


def test_a_default_third_party_is_edited_and_marked() -> None:
    # The rules alone: "he" after Dr. Patel's own sentence points at Dr. Patel only by the
    # default that the sentence is about him: it may be the patient, so it is edited and marked.
    note = "Dr. Patel reviewed the films. Dr. Patel thinks he should start PT."
    text, edits = swap_sex(note, "female", "hpi", referee=False)
    assert text == "Dr. Patel reviewed the films. Dr. Patel thinks she should start PT."
    assert edits == [Edit("hpi", note.rindex("he "), "he", "she", True)]
    # A rule that reads the referent keeps the word, unlogged: an act of care follows.
    note = "Dr. Patel saw the patient; he ordered an MRI."
    assert swap_sex(note, "female", "hpi") == (note, [])
    # So does a relative's pronoun on a family-history line.
    note = "FH: Father had an MI when he was 60."
    assert swap_sex(note, "female", "hpi") == (note, [])


def score_labelled(rows: list[dict[str, object]]) -> dict[str, Any]:
    """The rewrite's figures on labelled rows (:func:`climb_vllm.rewrite.accuracy.score`)."""
    return accuracy.score(rows)


def test_labelled_sentences_meet_the_targets() -> None:
    rows = [json.loads(line) for line in LABELLED.read_text().splitlines() if line.strip()]
    assert len(rows) >= 100 and {r["to"] for r in rows} == {"female", "male"}
    # Every listed fact is in the original sentence: a changed fact is detectable.
    assert all(f in r["text"] for r in rows for f in r["facts"])
    score = score_labelled(rows)
    print(json.dumps(score))
    assert score["fact_changes"] == 0
    assert score["edit_accuracy"] >= 0.98


#: Edit accuracy floors on the excerpts with third parties (rewrite/NOTES.md has the history).
#: Each held-out set was measured untouched before it was read or trained on: with the rules
#: alone 0.796, 0.806, 0.766, 0.820, 0.845, 0.823, 0.871, 0.871 and 0.898 for the first to
#: ninth sets; the tenth, with a linear referee fitted on every set before it, 0.933; the
#: eleventh 0.877 (0.855 with the rules alone); the twelfth, with the referee fine-tuned and
#: asked after a third party in the sentence before too, 0.851 (0.777 with the linear referee,
#: 0.743 with the rules alone); the thirteenth, with the referee tuned on mirrored excerpts as
#: well, 0.842 (0.824 with the fine-tuned referee before it, 0.793 with the linear one, 0.737
#: with the rules alone); the fourteenth, stretches of notes, 0.871 (0.766 with the rules
#: alone); the fifteenth, with the referee reading back to whoever is spoken of and a clause's
#: subject and object pronouns kept apart, 0.883 (0.881 with the referee before it, 0.754 with
#: the rules alone; measured once with the sentence before searched two sentences back, 0.860,
#: which is why the search stays at one); the sixteenth, with the referee tuning three layers on
#: the development to fifteenth sets and an act of care after someone named two sentences back
#: read as theirs, 0.961 (0.950 with the rewrite before it, 0.808 with the rules alone). The
#: rule 7's state after a third party's report was then left to the referee (0.964 on the
#: sixteenth, read by then); the seventeenth, measured before and after that change, 0.948
#: and 0.951 (0.803 with the rules alone); the eighteenth, measured before and after the
#: rules read from its errors (specialists by suffix, "the other man", "her back pain", acts of
#: care such as "lasered" also after someone named in the sentence before, care received in the
#: passive), 0.925 and 0.958 (0.862 with the rules alone); the nineteenth, with the referee
#: before and after its refit on the development to eighteenth sets, 0.945 and 0.962 (0.818
#: with the rules alone); the twentieth, written after that refit, 0.955 (0.830 with the rules
#: alone); the twenty-first and twenty-second, before and after the rules read from the
#: nineteenth and twentieth sets' errors and the referee's refit on the development to
#: twentieth sets, 0.939 and 0.947, 0.896 and 0.909 (0.749 and 0.727 with the rules alone),
#: then read; the twenty-third, written after a pronoun opening a sentence after a kept one
#: was asked of the referee, 0.908 (0.724 with the rules alone); the twenty-fourth and
#: twenty-fifth, before and after the rules read from the twenty-third set's errors and the
#: referee's refit on the development to twenty-third sets, 0.915 and 0.950, 0.896 and 0.944
#: (0.665 and 0.667 with the rules alone), then read; the twenty-sixth, before and after an
#: act of care along a chain of kept pronouns was kept, 0.911 and 0.914 (0.644 with the rules
#: alone); the twenty-seventh, before and after the rules read from the twenty-sixth set's
#: errors, a pronoun along a chain of kept ones read from where the chain's first was and the
#: referee's refit on the development to twenty-sixth sets, 0.909 and 0.921 (0.686 with the
#: rules alone), then read; the twenty-eighth, written after those changes, 0.925 (0.694 with
#: the rules alone). Then, with roles by more title endings, "laid her flat" and "seen her
#: monthly", the referee asked after someone named up to three sentences back, and a referee
#: tuning all six layers, also on readings along chains (rewrite/NOTES.md, "Six tuned layers"):
#: the twenty-seventh, on which they were chosen, 0.966; the twenty-eighth and twenty-ninth
#: (written before those changes, not read), measured once, 0.963 and 0.964 (0.699 and 0.682
#: with the rules alone; the twenty-ninth 0.918 with the rewrite before). Then, with a
#: companion's report, harm done, a relative's kin and one other person of the other sex read
#: by rules, chains past a sentence of no one, and the referee refit on the development to
#: twenty-ninth sets (rewrite/NOTES.md, "A companion's report and one other person"): the
#: thirtieth (written before those changes, read after its first figure), 0.979; the
#: thirty-first (written after the rules; it chose the refit), 0.977; the thirty-second
#: (written after all of it and measured once), 0.974; the thirty-third (written and committed
#: a day later, with nothing changed, and measured once), 0.984. The referee is tuned on the
#: development to twenty-ninth sets, so their floors are in-sample; the thirtieth to
#: thirty-third are not fitted on. Each floor is the score less 0.004 (a word's worth of float
#: rounding on another machine), rounded down.
THIRD_PARTY_FLOORS = {
    "third_parties_development.jsonl": 0.99,
    "third_parties_held_out.jsonl": 0.99,
    "third_parties_held_out_2.jsonl": 0.98,
    "third_parties_held_out_3.jsonl": 0.99,
    "third_parties_held_out_4.jsonl": 0.99,
    "third_parties_held_out_5.jsonl": 0.98,
    "third_parties_held_out_6.jsonl": 0.98,
    "third_parties_held_out_7.jsonl": 0.99,
    "third_parties_held_out_8.jsonl": 0.96,
    "third_parties_held_out_9.jsonl": 0.97,
    "third_parties_held_out_10.jsonl": 0.97,
    "third_parties_held_out_11.jsonl": 0.99,
    "third_parties_held_out_12.jsonl": 0.96,
    "third_parties_held_out_13.jsonl": 0.95,
    "third_parties_held_out_14.jsonl": 0.97,
    "third_parties_held_out_15.jsonl": 0.97,
    "third_parties_held_out_16.jsonl": 0.99,
    "third_parties_held_out_17.jsonl": 0.98,
    "third_parties_held_out_18.jsonl": 0.99,
    "third_parties_held_out_19.jsonl": 0.98,
    "third_parties_held_out_20.jsonl": 0.99,
    "third_parties_held_out_21.jsonl": 0.98,
    "third_parties_held_out_22.jsonl": 0.98,
    "third_parties_held_out_23.jsonl": 0.98,
    "third_parties_held_out_24.jsonl": 0.99,
    "third_parties_held_out_25.jsonl": 0.99,
    "third_parties_held_out_26.jsonl": 0.98,
    "third_parties_held_out_27.jsonl": 0.99,
    "third_parties_held_out_28.jsonl": 0.99,
    "third_parties_held_out_29.jsonl": 0.98,
    "third_parties_held_out_30.jsonl": 0.97,
    "third_parties_held_out_31.jsonl": 0.97,
    "third_parties_held_out_32.jsonl": 0.97,
    "third_parties_held_out_33.jsonl": 0.98,
}


@pytest.mark.parametrize("name", sorted(THIRD_PARTY_FLOORS))
def test_third_party_excerpts_meet_their_floors(name: str) -> None:
    rows = [json.loads(line) for line in (GOLDEN_DIR / name).read_text().splitlines() if line]
    assert len(rows) >= 59 and {r["to"] for r in rows} == {"female", "male"}
    score = score_labelled(rows)
    print(name, json.dumps(score))
    assert score["edit_accuracy"] >= THIRD_PARTY_FLOORS[name]
    # What the rewrite marks certain is right, and its errors are marked (each set on its own;
    # a set whose every word is right has no wrong word to mark).
    assert score["certain_accuracy"] >= 0.99
    assert score["wrong_marked"] is None or score["wrong_marked"] >= 0.9
    # The printed interval holds the estimate printed beside it.
    assert score["edit_accuracy_low"] <= score["edit_accuracy"] <= score["edit_accuracy_high"]


#: A sentence put before every excerpt of the thirty-third set (not fitted on), and the edit
#: accuracy floor then (rewrite/NOTES.md, "A companion's report and one other person"): without
#: a sentence before, 0.984, and 0.984 with each of these; a sentence that speaks of no one is
#: not read, but one that speaks of the patient is (on the sixteenth set it once lowered 0.961
#: to 0.947), a known weakness this test keeps in view.
INSIDE_A_NOTE = {
    "Seen today. ": 0.98,
    "The patient was seen and examined. ": 0.98,
    "Vital signs are stable and the exam is unchanged from last visit. ": 0.98,
}


@pytest.mark.parametrize("before", sorted(INSIDE_A_NOTE))
def test_third_party_excerpts_inside_a_note(before: str) -> None:
    name = "third_parties_held_out_33.jsonl"
    rows = [json.loads(line) for line in (GOLDEN_DIR / name).read_text().splitlines() if line]
    padded = [dict(r, text=before + r["text"], expected=before + r["expected"]) for r in rows]
    score = score_labelled(padded)
    print(repr(before), json.dumps(score))
    assert score["edit_accuracy"] >= INSIDE_A_NOTE[before]


def test_sentence_starts_agree_with_a_scan_from_the_start() -> None:
    from climb_vllm.rewrite import sex_rewrite

    text = "Mr. A is 61. He fell; she helped!\nDr. Li saw him? E. coli grew. Done"
    for match in re.finditer(r"\w+", text):
        ends = [m.end() for m in sex_rewrite._SENTENCE_END.finditer(text, 0, match.start())]
        assert sex_rewrite._sentence_start(text, match.start()) == (ends[-1] if ends else 0)


@pytest.mark.parametrize(
    ("before", "to", "after"),
    [
        # The daughter speaks of the patient as her mother: "She" is the daughter.
        (
            "Phone call from the patient's daughter. She says her mother has been skipping her "
            "insulin doses.",
            "male",
            "Phone call from the patient's daughter. She says her father has been skipping his "
            "insulin doses.",
        ),
        # A man a clause brings in, and "that man" after him, are someone else.
        (
            "He reports that a man approached him in the parking lot and demanded money.",
            "female",
            "She reports that a man approached her in the parking lot and demanded money.",
        ),
        # "male" of a role is that person's sex; "sir" said to him stays.
        (
            "The patient thanked the male nurse, saying 'thank you, sir'.",
            "female",
            "The patient thanked the male nurse, saying 'thank you, sir'.",
        ),
        (
            "A 3-year-old male patient with fever.",
            "female",
            "A 3-year-old female patient with fever.",
        ),
    ],
)
def test_others_named_by_a_relative_a_clause_or_a_role(before: str, to: str, after: str) -> None:
    assert rewrite(before, to).text == after
