"""Who a title, "man"/"woman" or "sir"/"ma'am" names, and the sentences and words the
referent rules read (:mod:`~climb_vllm.rewrite.referents` has the rules for
pronouns and the history of both):

- **Titles**: "Mr./Ms./Mrs. Name" is a third party's when it follows a role or relative and a
  comma ("her brother, Mr. Cole"), is followed by one in brackets or after a comma ("Mrs. Lopez
  (mother)", "Ms. Ford, his case worker"), or repeats such a name; "the patient, Mrs. Ahmed" is
  the patient's. "sir"/"ma'am" inside a quote is a third party's when the patient speaks it
  ("When the resident asked about his smoking, he said, 'I quit, sir'") and the patient's when
  someone else does; outside a quote, when its sentence names a clinician or staff member and
  its first person is the patient (the speaker).
- **"man"/"woman"** (and "boy"/"girl") after a preposition, "another" or "other" ("assaulted
  by a man", "the other boy"), set beside a person named by role ("the other driver, a young
  man,"), followed by a clause whose subject is a pronoun ("a man he did not know"), or "the
  man" after such a one, is a third party. So is
  "PT"/"OT" in capitals after a determiner ("The PT evaluated him"), where "pt" is the patient.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

from climb_vllm.rewrite.referent_words import (
    DETERMINERS,
    KIN_FEMALE,
    KIN_MALE,
    PREPOSITIONS,
    STRANGERS,
    is_person_word,
    is_role,
)

_WORDS = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")
_SENTENCE = re.compile(
    r"(?<!\b[A-Z])(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)(?<!\bSt)[.!?](?=\s)|\n"
    r"|(?<=/o [MF])\.(?=\s)|(?<=yo [MF])\.(?=\s)"  # "a 61 y/o M. The fellow ..."
)
# A person named by role or kinship, then "is/was a (young) ...": the noun after is them.
_PREDICATE = re.compile(
    r"\b(?:the|his|her|their|a|an)\s+(?:other\s+)?([a-z]+)\s+(?:is|was)\s+(?:a|an)\s+"
    r"(?:[a-z0-9-]+\s+){0,2}$",
    re.IGNORECASE,
)
# Someone met at a scene, brought in with an indefinite article ("by a stranger").
_MET = re.compile(
    rf"\b(?:a|an|another)\s+(?:[a-z-]+\s+)?(?:{'|'.join(sorted(STRANGERS))})\b", re.IGNORECASE
)
# Someone done harm to in the passive ("He was mugged", "she got pushed over"): whoever did it
# is then met at the scene, though not named ("The man took his wallet").
_HARMED = re.compile(
    r"\b(?:was|were|been|got|being)\s+(?:[a-z]+\s+)?(?:mugged|attacked|assaulted|punched|pushed|"
    r"hit|kicked|stabbed|robbed|beaten|shoved|knocked|grabbed|bitten|raped|struck|tackled|"
    r"threatened|slapped|strangled|choked)\b",
    re.IGNORECASE,
)
_TITLE = re.compile(r"\b(Mrs|Mr|Ms|Miss)\.?\s+([A-Z][A-Za-z'’-]+|_{2,})")


@dataclass(frozen=True)
class Word:
    start: int
    end: int
    text: str

    @property
    def key(self) -> str:
        return self.text.lower().replace("’", "'")


@functools.lru_cache(maxsize=16)
def _sentence_marks(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(starts, ends) of the sentence-ending marks of ``text``, found once per text: a note's
    every pronoun asks for its sentence, and scanning from the start each time is quadratic."""
    marks = list(_SENTENCE.finditer(text))
    return tuple(m.start() for m in marks), tuple(m.end() for m in marks)


def sentence_bounds(text: str, at: int) -> tuple[int, int]:
    """(start, end) of the sentence holding offset ``at`` (the start of a word)."""
    starts, ends = _sentence_marks(text)
    before = bisect.bisect_right(ends, at)
    following = bisect.bisect_left(starts, at)
    start = ends[before - 1] if before else 0
    return start, ends[following] if following < len(ends) else len(text)


def _title_context(text: str, match: re.Match[str]) -> str | None:
    """ "third" or "patient" for one "Title Name" by what stands around it, else None."""
    before = text[max(0, match.start() - 40) : match.start()].lower()
    after = text[match.end() : match.end() + 40].lower()
    if re.search(r"\b(?:patient|pt)['’]?,?\s*$", before):
        return "patient"
    role = re.search(r"([a-z-]+)\s*,\s*$", before)
    if role and is_person_word(role.group(1)):
        return "third"  # "her brother, Mr. Cole"
    bracket = re.match(r"\s*\(([a-z-]+)", after)
    if bracket and is_person_word(bracket.group(1).split("-")[0]):
        return "third"  # "Mrs. Lopez (mother)", "(daughter-in-law)"
    apposed = re.match(r"\s*,\s*(?:his|her|the|their)\s+(?:[a-z]+\s+)?([a-z]+)", after)
    if apposed and is_person_word(apposed.group(1)):
        return "third"  # "Ms. Ford, his case worker"
    return None


@functools.lru_cache(maxsize=16)
def titled_names(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(third parties', patient's) surnames after a title in ``text``, by what stands around
    each (a surname may be in both: "Mrs. Ahmed (daughter-in-law) ... the patient, Mrs.
    Ahmed"); found once per text."""
    third: set[str] = set()
    patient: set[str] = set()
    for match in _TITLE.finditer(text):
        context = _title_context(text, match)
        if context == "third":
            third.add(match.group(2))
        elif context == "patient":
            patient.add(match.group(2))
    return frozenset(third), frozenset(patient)


def title_is_third_party(text: str, start: int, end: int) -> bool:
    """Whether the title at ``start``-``end`` ("Mr", "Mrs", ...) is a third party's: by what
    stands around it, else, for a name seen as a third party's elsewhere, unless this is the
    name's first titled mention in the note (a note opens with its patient: "Mr. Dunn ... his
    son, Mr. Dunn Jr., ...")."""
    match = _TITLE.match(text, start)
    if not match:
        return False
    context = _title_context(text, match)
    if context is not None:
        return context == "third"
    here = match.group(2)
    third, _ = titled_names(text)
    first = re.search(rf"\b(?:Mrs|Mr|Ms|Miss)\.?\s+{re.escape(here)}\b", text)
    return here in third and first is not None and first.start() < start


# A clause opened by a complementizer or conjunction, then an indefinite person ("He says that a
# man approached him", "when a woman asked her for money"): the patient is not introduced so.
_CLAUSE_THEN_INDEFINITE = re.compile(
    r"\b(?:that|when|while|until|because|after|before|and|but|where)\s+(?:a|an)\s+"
    r"(?:[a-z]+\s+)?$",
    re.IGNORECASE,
)


def noun_is_third_party(text: str, start: int) -> bool:
    """Whether "man"/"woman"/"gentleman"/"lady"/"boy"/"girl" at ``start`` is someone other
    than the patient: after a preposition, "another" or "other" within three words ("the
    other man"), set beside a person named by role or kinship ("the other driver, a young
    man,"), the complement of one ("the driver was a young man"), followed by a clause whose
    subject is a pronoun ("a man he did not know"), brought in by a clause's complementizer or
    conjunction ("he says that a man approached him"), or "the/that man" after one of those
    or, as the text's first "man", after someone met at a scene ("a stranger") or harm done to
    someone ("was mugged") in its sentence or the one before."""
    before = [w.lower() for w in _WORDS.findall(text[max(0, start - 40) : start])][-3:]
    if any(w in PREPOSITIONS or w in ("another", "other") for w in before):
        return True
    if re.match(r"\w+\s+(?:he|she)\s+\w", text[start:], re.IGNORECASE):
        return True
    apposed = re.search(
        r"\b([a-z]+),\s+(?:a|an|the)\s+(?:[a-z0-9-]+\s+){0,2}$", text[max(0, start - 80) : start]
    )
    if apposed and is_person_word(apposed.group(1)):
        return True
    if _CLAUSE_THEN_INDEFINITE.search(text[max(0, start - 40) : start]):
        return True  # "He reports that a man approached him": someone the clause introduces
    if re.search(r"(?:^|[.;:]\s*)(?:A|An)\s+(?:[a-z]+\s+)?$", text[max(0, start - 30) : start]):
        # "A woman at the bus stop saw her fall": someone placed, not a patient introduced by
        # age or condition ("A 70-year-old woman", "A woman with diabetes").
        if re.match(r"\w+\s+(?:at|in|on|outside|near|nearby|from|passing)\b", text[start:]):
            return True
    predicate = _PREDICATE.search(text[max(0, start - 80) : start])
    if predicate and is_person_word(predicate.group(1).lower()):
        return True  # "The driver was a young man"
    if before and before[-1] in ("the", "that", "this"):
        earlier = text[:start]
        word = _WORDS.match(text, start)
        assert word is not None
        mentioned = list(re.finditer(rf"\b{word.group()}\b", earlier, re.IGNORECASE))
        if any(noun_is_third_party(text, match.start()) for match in mentioned):
            return True
        if not mentioned:
            # "punched by a stranger at a bus stop. The man ran away", "He was mugged. The
            # man took his wallet": the first "man" of the text, after someone met at a scene
            # or harm done to someone in its sentence or the one before.
            lo, _ = sentence_bounds(text, start)
            back, _ = sentence_bounds(text, max(0, lo - 2))
            return bool(_MET.search(text, back, start) or _HARMED.search(text, back, start))
    return False


def address_is_third_party(text: str, start: int, third_speaks: bool | None = None) -> bool:
    """Whether "sir"/"ma'am" at ``start`` addresses someone else.

    Inside a quote whose speaker is known (``third_speaks``: whether a third party speaks it,
    from :meth:`~climb_vllm.rewrite.referents.SentenceReader.speaker`), it does
    when the patient speaks ("When the resident asked about his smoking, he said, 'I quit,
    sir'") and not when someone else does ("The nurse said, 'Sir, ...'"). Otherwise:
    when its sentence names a clinician or staff member and is about the patient, who speaks
    ("He asked the resident, 'Are you sure, sir?'"), not about the clinician ("Sir, the nurse
    said to him, ...")."""
    if third_speaks is not None:
        return not third_speaks
    lo, hi = sentence_bounds(text, start)
    keys = [w.key for w in words(text, lo, hi) if w.key not in ("sir", "ma'am")]
    if not any(is_role(w) for w in keys):
        return False
    for word in keys:
        if word in ("patient", "pt", "he", "she", "him", "her", "his"):
            return True
        if is_role(word):
            return False
    return False


def names_a_therapist(found: list[Word], i: int) -> bool:
    """Whether word ``i`` of ``found`` is "PT" or "OT" in capitals after a determiner in lower
    case ("The PT evaluated him"): a physical or occupational therapist, where "Pt" or "pt"
    alone is the patient."""
    before = found[i - 1].text if i > 0 else ""
    return found[i].text in ("PT", "OT") and before.lower() in DETERMINERS and not before.isupper()


def words(text: str, lo: int, hi: int) -> list[Word]:
    """The words of ``text[lo:hi]`` with their offsets."""
    return [Word(m.start(), m.end(), m.group()) for m in _WORDS.finditer(text, lo, hi)]


# "He had been her caregiver": a role said of a subject pronoun, up to two words before it.
_ROLE_OF_PRONOUN = re.compile(
    r"\b(he|she)\s+(?:is|was|has\s+been|had\s+been|will\s+be|would\s+be)\s+"
    r"(?:[A-Za-z-]+\s+){0,2}$",
    re.IGNORECASE,
)


def others_role(text: str, lo: int, start: int, male_patient: bool) -> bool:
    """Whether the role word at ``start`` (its sentence starting at ``lo``) is said of a
    pronoun of the sex other than the patient's ("Her husband died. He had been her
    caregiver."), so that it names no one who may be of the patient's sex."""
    found = _ROLE_OF_PRONOUN.search(text, lo, start)
    return found is not None and (found.group(1).lower() == "she") == male_patient


# Kin words by what the patient is to a relative named as the patient's: the relative's
# "father" or "mother" is the patient when the relative is the patient's son or daughter.
_RECIPROCAL = {
    "son": ("father", "mother", "dad", "mom", "mum"),
    "daughter": ("father", "mother", "dad", "mom", "mum"),
    "father": ("son", "daughter"),
    "mother": ("son", "daughter"),
    "husband": ("wife", "husband"),
    "wife": ("husband", "wife"),
    "brother": ("brother", "sister"),
    "sister": ("brother", "sister"),
    "grandson": ("grandfather", "grandmother"),
    "granddaughter": ("grandfather", "grandmother"),
}
# A relative named as the patient's: "the patient's son", "Mr. Quinn (son)".
_PATIENTS_KIN = re.compile(
    rf"(?:\bthe\s+patient's\s+|\bpt's\s+|\(\s*)({'|'.join(_RECIPROCAL)})\b", re.IGNORECASE
)
_KIN_AFTER_POSSESSIVE = re.compile(r"\b(his|her)\s+([a-z]+)\b", re.IGNORECASE)


def sex_adjective_of_other(text: str, end: int) -> bool:
    """Whether "male"/"female" ending at ``end`` describes someone named by role or kinship
    after it ("the male nurse", "her female partner"): that person's sex, not the patient's."""
    following = re.match(r"[ \t]+([A-Za-z]+)", text[end : end + 40])
    return following is not None and is_person_word(following.group(1).lower())


def relatives_own_pronoun(text: str, possessive: int) -> int | None:
    """The subject pronoun of the relative's possessive at ``possessive`` ("She says her
    mother ...", where "her mother" is the patient): the last "he"/"she" of that possessive's
    sex before it in its sentence, which is the relative too; None when there is none."""
    lo, _ = sentence_bounds(text, possessive)
    own = "he" if text[possessive : possessive + 3].lower() == "his" else "she"
    found = [m.start() for m in re.finditer(rf"\b{own}\b", text[lo:possessive], re.IGNORECASE)]
    return lo + found[-1] if found else None


def patient_as_relatives_kin(text: str) -> list[tuple[int, int, int]]:
    """Where a relative named as the patient's speaks of the patient as their own kin ("The
    patient's son is at the bedside. He says his father has been confused"): ``(possessive,
    kin, kin_end)`` offsets of each "his father" whose possessive is the relative's and whose
    kin word is the patient, in the relative's sentence or the two after it."""
    found: list[tuple[int, int, int]] = []
    for named in _PATIENTS_KIN.finditer(text):
        relative = named.group(1).lower()
        possessive = "his" if relative in KIN_MALE else "her"
        _, hi = sentence_bounds(text, named.end())
        for _ in range(2):
            if hi < len(text):
                hi = sentence_bounds(text, min(len(text) - 1, hi + 1))[1]
        for match in _KIN_AFTER_POSSESSIVE.finditer(text, named.end(), hi):
            pair = (match.group(1).lower(), match.group(2).lower())
            if pair[0] == possessive and pair[1] in _RECIPROCAL[relative]:
                found.append((match.start(1), match.start(2), match.end(2)))
    return found


# People spoken of without a role: each may be someone besides the patient.
_PEOPLE = frozenset(
    "man woman men women gentleman lady boy girl someone somebody patient patients baby child "
    "infant toddler".split()
)
_MALE_PEOPLE = KIN_MALE | frozenset("man men gentleman boy mr".split())
_FEMALE_PEOPLE = KIN_FEMALE | frozenset("woman women lady girl mrs ms miss".split())
_NAMED = re.compile(r"\b(Dr|Mr|Mrs|Ms|Miss)\.?\s+([A-Z][A-Za-z'’-]+)")
_SUBJECT = {
    True: re.compile(r"\bshe\b", re.IGNORECASE),
    False: re.compile(r"\bhe\b", re.IGNORECASE),
}


def only_someone_of_the_other_sex(text: str, male_patient: bool) -> bool:
    """Whether ``text`` names exactly one person besides the patient, not one known to be of
    the patient's sex, and speaks of someone as "he" or "she" of the other sex: that one is of
    the other sex, so every pronoun of the patient's sex is the patient's ("She was seen by
    the pharmacist. He checked her warfarin dose. He found an interaction. She stopped the
    antibiotic"). So it is in every one of the 118 labelled excerpts of 2026-12-01 where this
    holds; two people named ("the nurse" and "Dr. Lee", who may be one) or a person unnamed
    ("a man") make it fail.

    Args:
        text: the section's text.
        male_patient: whether the patient is male in ``text`` (before the rewrite).
    """
    if not _SUBJECT[male_patient].search(text):
        return False
    found = words(text, 0, len(text))
    persons: set[str] = {f"{m.group(1)} {m.group(2)}" for m in _NAMED.finditer(text)}
    for i, word in enumerate(found):
        key = word.key
        if key in ("dr", "mr", "mrs", "ms", "miss"):
            continue  # a title, counted with its name above
        if key == "patient" and i > 0 and found[i - 1].key == "the":
            continue  # the patient themself
        if is_person_word(key) or key in _PEOPLE:
            persons.add(key)
    if len(persons) != 1:
        return False
    (person,) = persons
    own_sex = _MALE_PEOPLE if male_patient else _FEMALE_PEOPLE
    # A word ("pharmacist", "wife") or a title and name ("Mr Lee"), read by its first word.
    return person.split()[0].lower() not in own_sex
