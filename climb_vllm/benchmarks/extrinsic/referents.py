"""Who a word of the patient's sex refers to: the patient, or another person in the sentence.

A note names other people: clinicians ("Dr. Webb", "the resident"), staff ("the nurse", "the
social worker"), relatives ("his son") and others ("her roommate, Mr. Diaz", "a man outside a
bar"). When one of them may be of the patient's sex, "he"/"she", a title or "man"/"woman" may be
theirs, and the sex rewrite must leave it alone. The rules here read one sentence (up to . ! ?
or a line break) and call such a person a *third party*:

- **Titles**: "Mr./Ms./Mrs. Name" is a third party's when it follows a role or relative and a
  comma ("her brother, Mr. Cole"), is followed by one in brackets or after a comma ("Mrs. Lopez
  (mother)", "Ms. Ford, his case worker"), or repeats such a name; "the patient, Mrs. Ahmed" is
  the patient's. "sir"/"ma'am" is a third party's in a sentence that names a clinician or staff
  member and whose first person is the patient (the speaker).
- **"man"/"woman"** after a preposition or "another" ("assaulted by a man", "a room with an
  older man"), or "the man" after such a one, is a third party.
- **Subject pronouns** ("he", "she") are resolved in order, the first rule that applies:
  1. "<pronoun> is/was the patient's <relative or role>": the third party;
  2. no third party before it in the sentence: the patient;
  3. "when <pronoun> was <age>": whoever the sentence is about (its first person);
  4. "asked him whether he ...": the one asked, the patient;
  5. right after a reporting verb whose subject is the patient ("he told the doctor that
     he ...", "she was told she ..."): the patient;
  6. a verb only a patient does follows ("tolerated", "needs", "signed", "had missed", "felt
     dizzy"), or a state only a patient is in ("was hypotensive", "was more drowsy"): the
     patient; an act of care follows instead ("ordered", "drained", "will examine",
     "had reviewed"): the third party;
  7. in a third party's report ("the nurse reports that he ...", "Dr. Osei, who thinks
     she ...", or "and he ..." going on with such a report): the third party when they do
     something to the patient in it ("he gave him") or stress themselves ("she herself");
     else the patient when a state follows ("has been falling", "was febrile"); else the third
     party;
  8. the sentence is about a third party (its first person is one: "Dr. Jensen saw the
     patient; he ordered ...", "His son found him and he called 911"): the third party;
  9. its clause has a pronoun object of the same sex ("she says she trusts her"): the
     patient, and the object is the other person;
  10. a state follows ("has gout", "is alone"): the patient;
  11. otherwise the patient, marked uncertain.
- **Object pronouns and possessives** are the patient's, except that a pronoun object of a
  clause whose subject pronoun is of the same sex names the other person (a pronoun object is
  never its own subject: "the nurse reports that he gave him ..." - one of them is the
  patient, the other is not); "his/her own" follows its subject, and "in his opinion" the
  sentence's first person.

Every decision that rests on rule 11, or on the default for an object or possessive while a
third party is in the sentence, is uncertain. The rules were written on
``tests/golden/counterfactual/third_parties_development.jsonl``, measured once on
``third_parties_held_out.jsonl`` (written before them) and revised on its errors, then measured
on ``third_parties_held_out_2.jsonl``, written before that revision, and on
``third_parties_held_out_3.jsonl``, written after it (PERFORMANCE.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from climb_vllm.benchmarks.extrinsic.referent_words import (
    AUXILIARY,
    BE,
    CARE_VERBS,
    DEGREE,
    DETERMINERS,
    FEEL,
    HAVE,
    KIN_FEMALE,
    KIN_MALE,
    OPINIONS,
    PARTS,
    PATIENT_STATES,
    PATIENT_VERBS,
    PREPOSITIONS,
    REPORTING,
    ROLES,
)

_SPECIALIST = re.compile(r"[a-z]+(?:ologist|iatrist|ician)$")
_WORDS = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")
_SENTENCE = re.compile(
    r"(?<!\b[A-Z])(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)(?<!\bSt)[.!?](?=\s)|\n"
    r"|(?<=/o [MF])\.(?=\s)|(?<=yo [MF])\.(?=\s)"  # "a 61 y/o M. The fellow ..."
)
_CLAUSE_BREAK = re.compile(r"[,;:()]|\b(?:and|but|so|because|while|whereas|then)\b")
_TITLE = re.compile(r"\b(Mrs|Mr|Ms|Miss)\.?\s+([A-Z][A-Za-z'’-]+|_{2,})")


@dataclass(frozen=True)
class Decision:
    """What a word refers to: ``third`` when a third party (keep the word), ``uncertain`` when
    the rule that decided is a default while a third party is in the sentence."""

    third: bool
    uncertain: bool = False


@dataclass(frozen=True)
class _Word:
    start: int
    end: int
    text: str

    @property
    def key(self) -> str:
        return self.text.lower().replace("’", "'")


def sentence_bounds(text: str, at: int) -> tuple[int, int]:
    """(start, end) of the sentence holding offset ``at``."""
    start = 0
    for match in _SENTENCE.finditer(text, 0, at):
        start = match.end()
    following = _SENTENCE.search(text, at)
    return start, following.end() if following else len(text)


def _title_context(text: str, match: re.Match[str]) -> str | None:
    """ "third" or "patient" for one "Title Name" by what stands around it, else None."""
    before = text[max(0, match.start() - 40) : match.start()].lower()
    after = text[match.end() : match.end() + 40].lower()
    if re.search(r"\b(?:patient|pt)['’]?,?\s*$", before):
        return "patient"
    role = re.search(r"([a-z-]+)\s*,\s*$", before)
    if role and _person_word(role.group(1)):
        return "third"  # "her brother, Mr. Cole"
    bracket = re.match(r"\s*\(([a-z-]+)", after)
    if bracket and _person_word(bracket.group(1).split("-")[0]):
        return "third"  # "Mrs. Lopez (mother)", "(daughter-in-law)"
    apposed = re.match(r"\s*,\s*(?:his|her|the|their)\s+(?:[a-z]+\s+)?([a-z]+)", after)
    if apposed and _person_word(apposed.group(1)):
        return "third"  # "Ms. Ford, his case worker"
    return None


def titled_names(text: str) -> tuple[set[str], set[str]]:
    """(third parties', patient's) surnames after a title in ``text``, by what stands around
    each (a surname may be in both: "Mrs. Ahmed (daughter-in-law) ... the patient, Mrs.
    Ahmed")."""
    third: set[str] = set()
    patient: set[str] = set()
    for match in _TITLE.finditer(text):
        context = _title_context(text, match)
        if context == "third":
            third.add(match.group(2))
        elif context == "patient":
            patient.add(match.group(2))
    return third, patient


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


def noun_is_third_party(text: str, start: int) -> bool:
    """Whether "man"/"woman"/"gentleman"/"lady" at ``start`` is someone other than the
    patient: after a preposition or "another" within three words, or "the man" after one."""
    before = [w.lower() for w in _WORDS.findall(text[max(0, start - 40) : start])][-3:]
    if any(w in PREPOSITIONS or w == "another" for w in before):
        return True
    if before and before[-1] == "the":
        earlier = text[:start]
        word = _WORDS.match(text, start)
        assert word is not None
        for match in re.finditer(rf"\b{word.group()}\b", earlier, re.IGNORECASE):
            if noun_is_third_party(text, match.start()):
                return True
    return False


def address_is_third_party(text: str, start: int) -> bool:
    """Whether "sir"/"ma'am" at ``start`` addresses someone else: its sentence names a
    clinician or staff member and is about the patient, who speaks ("He asked the resident,
    'Are you sure, sir?'"), not about the clinician ("Sir, the nurse said to him, ...")."""
    lo, hi = sentence_bounds(text, start)
    words = [w.key for w in _words(text, lo, hi) if w.key not in ("sir", "ma'am")]
    if not any(_role(w) for w in words):
        return False
    for word in words:
        if word in ("patient", "pt", "he", "she", "him", "her", "his"):
            return True
        if _role(word):
            return False
    return False


def _role(word: str) -> bool:
    return word in ROLES or bool(_SPECIALIST.match(word))


def _person_word(word: str) -> bool:
    return _role(word) or word in KIN_MALE or word in KIN_FEMALE


def _words(text: str, lo: int, hi: int) -> list[_Word]:
    return [_Word(m.start(), m.end(), m.group()) for m in _WORDS.finditer(text, lo, hi)]


class SentenceReader:
    """Resolves every word of the patient's sex in one sentence (see the module docstring).

    Args:
        text: the whole note section.
        at: an offset inside the sentence.
        male_patient: the patient's sex in ``text`` (the sex of the words to resolve).
        object_her: whether the "her" at (start, end) is an object (else a possessive).
    """

    def __init__(
        self, text: str, at: int, male_patient: bool, object_her: Callable[[int, int], bool]
    ) -> None:
        self.text = text
        self.lo, self.hi = sentence_bounds(text, at)
        self.male = male_patient
        self.object_her = object_her
        self.words = _words(text, self.lo, self.hi)
        self.subjects = {"he"} if male_patient else {"she"}
        self.objects = {"him"} if male_patient else {"her"}
        self.possessives = {"his"} if male_patient else {"her", "hers"}
        self.reflexive = "himself" if male_patient else "herself"
        self.kin = KIN_MALE if male_patient else KIN_FEMALE
        third, patient = titled_names(text)
        self.third_titles = third - patient
        self.decisions: dict[int, Decision] = {}
        self.reported: dict[int, bool] = {}  # subject pronoun -> opens a third party's report
        self._third = [self._is_third(i) for i in range(len(self.words))]
        self._resolve()

    def decision(self, start: int) -> Decision:
        """The decision for the pronoun starting at ``start`` (the patient when unknown)."""
        return self.decisions.get(start, Decision(False))

    # -- mentions ------------------------------------------------------------------------

    def _is_third(self, i: int) -> bool:
        """Whether word ``i`` names a third party who may be of the patient's sex."""
        word = self.words[i]
        key = word.key
        if key in self.kin or _role(key):
            return True
        if key in ("mr", "ms", "mrs", "miss") and i + 1 < len(self.words):
            same_sex = (key == "mr") == self.male  # "Mrs. Baker" is no "he"
            return same_sex and self.words[i + 1].text in self.third_titles
        if key in ("man", "men", "woman", "women", "gentleman", "lady"):
            return noun_is_third_party(self.text, word.start)
        return False

    def _is_patient_noun(self, i: int) -> bool:
        return self.words[i].key in ("patient", "pt", "patient's", "pt's")

    def _pronoun_kind(self, i: int) -> str | None:
        word = self.words[i]
        key = word.key
        if key in self.subjects:
            return "subject"
        if key == self.reflexive:
            return "reflexive"
        if key in self.objects and not self.male and key == "her":
            return "object" if self.object_her(word.start, word.end) else "possessive"
        if key in self.objects:
            return "object"
        if key in self.possessives:
            return "possessive"
        return None

    def _first_person(self) -> bool | None:
        """Whether the sentence is about a third party (its first person is one), else False;
        None when it names nobody."""
        # "Per her mother, she ...", "Per the physician, Dr. Ruiz, she ...": the source.
        source = -1
        if self.words and self.words[0].key == "per":
            comma = self.text.find(",", self.words[0].end, self.hi)
            named = re.match(r",\s*(?:Dr|Mr|Ms|Mrs|Miss)\.?\s+[A-Z][\w'’-]*\s*,", self.text[comma:])
            source = comma + (named.end() if named else 0) if comma >= 0 else -1
        for i, word in enumerate(self.words):
            if word.start < source:
                continue
            kind = self._pronoun_kind(i)
            if kind == "possessive" and i + 1 < len(self.words):
                # "His son ...", "Her nephrologist, Dr. Cho, ...": the possessed person.
                if self._third[i + 1] or (
                    i + 2 < len(self.words) and self._third[i + 2] and self._adjacent(i, i + 2)
                ):
                    return True
            if kind in ("subject", "object", "possessive"):
                return self.decisions.get(word.start, Decision(False)).third
            if self._is_patient_noun(i):
                # "The patient's son": the son.
                return i + 1 < len(self.words) and self._third[i + 1]
            if self._third[i]:
                return True
            if word.key in ("mr", "ms", "mrs", "miss") and self._titled(i):
                name = self.words[i + 1]
                # "Ms. Green's daughter, ...": the daughter.
                return name.key.endswith("'s") and i + 2 < len(self.words) and self._third[i + 2]
        return None

    def _titled(self, i: int) -> bool:
        return i + 1 < len(self.words) and self.words[i + 1].text[:1].isupper()

    def _object_follows(self, i: int) -> bool:
        """Whether subject pronoun ``i``'s clause has an object pronoun of the same sex."""
        for k in range(i + 1, len(self.words)):
            between = self.text[self.words[k - 1].end : self.words[k].start]
            if _CLAUSE_BREAK.search(between) or _CLAUSE_BREAK.fullmatch(self.words[k].key):
                return False
            if self._pronoun_kind(k) == "object":
                return True
        return False

    def _adjacent(self, i: int, j: int) -> bool:
        return not re.search(r"[,;:.]", self.text[self.words[i].end : self.words[j].start])

    def _third_before(self, i: int) -> bool:
        return any(self._third[:i])

    # -- rules ---------------------------------------------------------------------------

    def _resolve(self) -> None:
        for i, word in enumerate(self.words):
            kind = self._pronoun_kind(i)
            if kind == "subject":
                self.decisions[word.start] = self._subject(i)
        for i, word in enumerate(self.words):
            kind = self._pronoun_kind(i)
            if kind in ("object", "possessive", "reflexive"):
                self.decisions[word.start] = self._other(i, kind)

    def _subject(self, i: int) -> Decision:
        after = [w.key for w in self.words[i + 1 : i + 5]]
        if after[:3] in (["is", "the", "patient's"], ["was", "the", "patient's"]):
            return Decision(True)  # rule 1
        if not self._third_before(i):
            return Decision(False)  # rule 2
        before = [w.key for w in self.words[max(0, i - 1) : i]]
        if before == ["when"] and after[:1] in (["was"], ["were"]):
            if re.match(r"\s+\w+\s+\d", self.text[self.words[i].end : self.words[i].end + 12]):
                return Decision(bool(self._first_person()))  # rule 3
        if before and before[0] in ("whether", "if") and i >= 2:
            if self._pronoun_kind(i - 2) == "object":
                return Decision(False)  # rule 4: "asked him whether he had chest pain"
        reporter = self._reporter(i)
        self.reported[i] = bool(reporter)
        if reporter is False:
            return Decision(False)  # rule 5: what the patient says or is told
        state = self._states(i)
        if state == "strong":
            return Decision(False)  # rule 6: "tolerated", "needs", "was hypotensive"
        if self._acts(i):
            return Decision(True)  # rule 6b: an act of care ("he ordered", "she drained")
        if reporter:
            # Rule 7, what a third party reports: about themselves when they do something to the
            # patient or stress themselves ("he gave him", "she herself"), else a state of
            # the patient ("says she has been falling"), else what they will do.
            if self._object_follows(i) or self._emphatic(i):
                return Decision(True)
            return Decision(state is None)
        if self._first_person():
            return Decision(True)  # rule 8: the sentence is about the third party
        if self._object_follows(i):
            return Decision(False)  # rule 9: the patient does something to the third party
        if state:
            return Decision(False)  # rule 10
        return Decision(False, uncertain=True)  # rule 11

    def _states(self, i: int) -> str | None:
        """What the clause after subject pronoun ``i`` says: "strong" for a verb only a
        patient does ("tolerated", "needs", "had missed", "felt dizzy"), "weak" for a state
        ("has gout", "was febrile", "has been falling"), else None."""
        rest = [w.key for w in self.words[i + 1 : i + 8]]
        k = 0
        while k < len(rest) and rest[k] in AUXILIARY:
            k += 1
        if k >= len(rest):
            return None
        verb = rest[k]
        following = rest[k + 1] if k + 1 < len(rest) else ""
        if verb in HAVE:
            k += 1
            while k < len(rest) and rest[k] in AUXILIARY:
                k += 1
            following = rest[k] if k < len(rest) else ""
            if following == "to":
                return None  # "had to suction her"
            if following == "been":
                return None if self._part(rest[k + 1 :]) else "weak"  # "has been falling"
            if following.endswith(("ed", "en")) or following in ("seen", "done", "made", "told"):
                return "strong" if following in PATIENT_VERBS else None  # "had missed"
            return "weak"  # possession: "has gout", "had a stroke", "has had ..."
        if verb in BE:
            if following in ("told", "informed", "advised", "counseled", "counselled"):
                return "strong"  # "she was told she may carry ..."
            state = next((w for w in rest[k + 1 :] if w not in DEGREE), "")
            if state in PATIENT_STATES:
                return "strong"  # "he was hypotensive", "she was more drowsy"
            return None if self._part(rest[k + 1 :]) else "weak"
        if verb in FEEL:
            return None if following in DETERMINERS or following in ("that", "it") else "strong"
        return "strong" if verb in PATIENT_VERBS else None

    def _acts(self, i: int) -> bool:
        """Whether the main verb after subject pronoun ``i`` is an act of care ("he ordered",
        "she will examine", "he had reviewed"), not in the passive ("he was treated")."""
        rest = [w.key for w in self.words[i + 1 : i + 8]]
        k = 0
        while k < len(rest) and rest[k] in AUXILIARY | HAVE:
            k += 1
        return k < len(rest) and rest[k] in CARE_VERBS

    def _emphatic(self, i: int) -> bool:
        """Whether subject pronoun ``i``'s clause stresses its subject ("she herself had ...",
        "he has a history of seizures himself")."""
        for k in range(i + 1, len(self.words)):
            between = self.text[self.words[k - 1].end : self.words[k].start]
            if _CLAUSE_BREAK.search(between) or _CLAUSE_BREAK.fullmatch(self.words[k].key):
                return False
            if self.words[k].key == self.reflexive:
                previous = self.words[k - 1].key
                return k == i + 1 or previous not in PREPOSITIONS | {"to"}
        return False

    @staticmethod
    def _part(rest: list[str]) -> bool:
        """Whether "is/was ..." names a part a third party plays ("is the HCP")."""
        return any(w in PARTS for w in rest[:4])

    def _reporter(self, i: int) -> bool | None:
        """Whether subject pronoun ``i`` opens what a third party reports (True: "the nurse
        reports that he ...", "Dr. Osei, who thinks she ...") or what the patient says or is
        told (False: "he told the doctor that he ...", "she was told she ..."); None when no
        reporting verb comes right before it."""
        j = i - 1
        if j >= 0 and self.words[j].key == "that":
            # "notified the team that she ...": the reporting verb may have an object.
            verbs = [
                k
                for k in range(max(0, j - 4), j)
                if self.words[k].key in REPORTING | {"told", "tell", "tells"}
            ]
            j = verbs[-1] if verbs else j - 1
        if j < 0 or self.words[j].key not in REPORTING | {"told", "tell", "tells", "say"}:
            return self._continued_report(i)
        if self.words[j].key == "told" and j > 0 and self.words[j - 1].key in BE:
            j -= 1  # "she was told she ...": the subject of "was told"
        for k in range(j - 1, -1, -1):
            if self.words[k].key == "who":
                continue
            if self._third[k]:
                return True
            kind = self._pronoun_kind(k)
            if kind == "subject" or self._is_patient_noun(k):
                return self.decisions.get(self.words[k].start, Decision(False)).third
            if self.words[k].key in ("mr", "ms", "mrs", "miss") and self._titled(k):
                return False
        return None

    def _continued_report(self, i: int) -> bool | None:
        """A subject pronoun after "and" in a third party's report goes on with that report
        ("the nurse reports that she checked his glucose and he was hypoglycemic")."""
        if i == 0 or self.words[i - 1].key != "and":
            return None
        for k in range(i - 2, -1, -1):
            if self._pronoun_kind(k) == "subject":
                return True if self.reported.get(k) else None
            if re.search(r"[;:]", self.text[self.words[k].end : self.words[k + 1].start]):
                return None
        return None

    def _other(self, i: int, kind: str) -> Decision:
        """Objects, possessives and reflexives (after the subjects are decided)."""
        third_before = self._third_before(i)
        subject = self._clause_subject(i)
        following = self.words[i + 1].key if i + 1 < len(self.words) else ""
        if kind == "reflexive" or (kind == "possessive" and following == "own"):
            return subject or Decision(False)
        if kind == "possessive" and following in OPINIONS and third_before:
            # "evaluated him; in his opinion ...": the evaluator's.
            return Decision(bool(self._first_person()))
        if kind == "object" and subject is not None and third_before:
            # A pronoun object is never its clause's subject: the other one of the two.
            return Decision(not subject.third)
        return Decision(False, uncertain=third_before)

    def _clause_subject(self, i: int) -> Decision | None:
        """The decision for the subject pronoun of word ``i``'s clause, if it has one; for
        "..., and told her" (a verb right after "and"), the sentence's opening subject."""
        start = self.words[i].start
        for k in range(i - 1, -1, -1):
            between = self.text[self.words[k].end : start]
            if _CLAUSE_BREAK.search(between) or _CLAUSE_BREAK.fullmatch(self.words[k].key):
                if self.words[k].key in ("and", "but") and k + 2 == i:
                    opening = self._pronoun_kind(0) if self.words else None
                    if opening == "subject":
                        return self.decisions.get(self.words[0].start)
                return None
            if self._pronoun_kind(k) == "subject":
                return self.decisions.get(self.words[k].start)
            start = self.words[k].start
        return None
