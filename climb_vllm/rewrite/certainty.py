"""Whether a note leaves one reading of a sex word: the rewrite's *certain* and *uncertain*.

The rewrite decides every word that may state the patient's sex (:mod:`~climb_vllm.rewrite.
sex_rewrite`), and its rules and referee read well on text like the text they were fitted to.
On text others wrote they err where a second person could take the word, and those are exactly
the words a reader should look at. So certainty is not the rules' confidence; it is a property
of the text, read here apart from the decision:

- a word is **certain** only when no one but the patient can take it: no other person who may
  be of the word's sex is named before it in its sentence or in the :data:`NEAR_SENTENCES`
  sentences before (in a fronted clause, "When she arrived, the nurse ...", the rest of the
  sentence too), and the pronoun before it of the same sex along that window is certain (the
  chain of mentions: "The nurse came in. She checked his drip. She called ..." leaves the
  second "She" open however far the chain runs);
- an object pronoun whose only such person is its own clause's subject ("Dr. Burke saw him",
  "The nurse gave her morphine") is certain: a pronoun object is never its clause's subject;
- "sir"/"ma'am" (said to whoever is spoken to) and a relative's kin word for the patient ("the
  patient's son ... his father") are never certain;
- one other person in the text, and a pronoun of the other sex there, is that person: they
  take no word of the patient's sex;
- "man"/"woman", "boy"/"girl", "gentleman"/"lady" are certain only as the patient's own
  description ("a 61-year-old man", "He is a pleasant gentleman");
- an age-sex abbreviation ("45 y/o M", "Sex: F") is always certain.

A person is any word naming someone by role, kinship or title (:func:`~climb_vllm.rewrite.
referent_words.is_person_word`; "Dr. Lee", "Mr. Cole"), a noun after a determiner that names a
doer ("the technician", "an accountant", "the other driver"), "man"/"woman" and their kind not
said of the patient, and "someone". Their sex is known only from the word (kin, "man", "Mr.").
Reading more persons than there are only marks more words uncertain, never changes an edit: the
list of words that name no one (:data:`NOT_PEOPLE`) keeps that cost down.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

from climb_vllm.rewrite import mentions
from climb_vllm.rewrite.referent_words import KIN_FEMALE, KIN_MALE, is_person_word

#: Sentences before a word whose persons can take it (as the rewrite's referee reads).
NEAR_SENTENCES = 3

MALE_WORDS = frozenset("he him himself his man men gentleman gentlemen boy boys mr sir".split())
FEMALE_WORDS = frozenset(
    "she her herself hers woman women lady ladies girl girls ms mrs miss ma'am".split()
)
PRONOUNS = frozenset("he him himself his she her herself hers".split())
PEOPLE_NOUNS = frozenset(
    "man men woman women gentleman gentlemen lady ladies boy boys girl girls".split()
)
ADDRESS = frozenset(("sir", "ma'am"))
TITLES = frozenset("mr ms mrs miss".split())

# A doer named by its ending after a determiner ("the technician", "an appraiser"); the words of
# that shape that name no one are below.
_DOER = re.compile(r"[a-z]{3,}(?:er|or|ist|ian|ant|ent|eer|ee|man|woman|person|ic|ive)s?$")
_DETERMINERS = frozenset(
    "the a an his her their this that these those another other our your my its each every "
    "one".split()
)
#: Words of a doer's shape that name no person in a note (anatomy, devices, measures, events).
NOT_PEOPLE = frozenset(
    """
    patient patients pt inpatient outpatient center centre monitor ventilator catheter order
    orders number letter water shower counter chamber meter filter cancer tumor tumour disorder
    ulcer fever liver bladder shoulder finger other others floor door color colour factor
    factors sensor inhaler dinner paper weather corner border marker manner matter power answer
    error chapter quarter november october september december winter summer after under over
    never ever either neither whether rather together however later earlier
    cover river layer layers register transfer transfers computer printer timer holder
    cylinder spacer pacer pacemaker container heater cooler trigger stapler blister splinter
    blocker blockers inhibitor inhibitors agonist antagonist receptor receptors vector donor
    tremor tremors stridor pallor rigor rigors vapor vapour razor mirror rumor odor odour anchor
    interior exterior posterior anterior inferior superior major minor prior senior junior
    behavior behaviour motor flavor favor favour honor honour labor labour humor list wrist
    cyst mist fist twist assist exist median medium meridian event percent moment segment
    treatment management incident accident content component element statement assessment
    department apartment appointment placement arrangement document instrument supplement
    complement sediment argument equipment environment improvement development movement
    requirement measurement replacement impairment involvement attachment adjustment
    enlargement engagement current recent present patent extent intent consent
    dependent independent implant plant restaurant pregnant variant constant instant distant
    relevant significant important abundant redundant dominant resistant clinic topic music
    logic traffic antibiotic antibiotics panic colic tonic chronic public republic epidemic
    pandemic ethic drive five live give olive native motive narrative positive negative
    sensitive effective objective subjective alternative perspective initiative committee
    coffee fee knee degree guarantee dinner diaper blender
    """.split()
)
#: Occupations and roles whose word has no doer's ending (general English, beyond the clinical
#: roles of :data:`~climb_vllm.rewrite.referent_words.ROLES`).
OCCUPATIONS = frozenset(
    """
    architect chef cook clerk paralegal secretary attorney judge juror maid nanny pilot sheriff
    deputy clergy rabbi imam monk nun vet host hostess waitress actress poet analyst diplomat
    mayor senator captain lieutenant colonel sergeant cop detective agent athlete astronaut
    farmer rancher miner sailor aide orderly babysitter housekeeper landlord landlady tenant
    roommate neighbor neighbour friend client customer guest stylist barista surgeon dentist
    staff member members boss chief clinician physician plumber mechanic electrician technician
    cousin cousins sibling siblings child children kid kids baby toddler grandchild
    grandchildren relatives parent parents stepparent godparent sponsor police ems
    """.split()
)
#: Groups that act through a person ("Speech therapy saw her; she thinks ..."): people only
#: after a determiner or as a sentence's first word, where "Family history" names no one.
GROUPS = frozenset(
    "family relative twin security team therapy service services consult consults nursing "
    "surgery anesthesia pharmacy rehab hospice psychiatry".split()
)
# A department or service as a doer ("Cardiology recommends", "Neurology saw him").
_SERVICE = re.compile(r"[a-z]+(?:ology|iatry|iatrics)$")
# What may follow an object "her" ("called her to return it", "saw her today"); before any other
# word "her" may be a possessive ("found her wallet").
_AFTER_OBJECT = frozenset(
    "to a an the some any with for at in on up down out back home again and or that this if "
    "about from as by into over off when because before after today yesterday tomorrow now "
    "then".split()
)
_PEOPLE_SEX = {
    **{w: "male" for w in "man men gentleman gentlemen boy boys".split()},
    **{w: "female" for w in "woman women lady ladies girl girls".split()},
    **{w: "male" for w in KIN_MALE},
    **{w: "female" for w in KIN_FEMALE},
    "policeman": "male",
    "policewoman": "female",
}
_SOMEONE = frozenset("someone somebody anyone anybody".split())
_TITLE = re.compile(r"\b(Dr|Mr|Mrs|Ms|Miss|Prof)\.?\s+([A-Z][A-Za-z'’-]+|_{2,})")
_TITLE_SEX = {"Mr": "male", "Mrs": "female", "Ms": "female", "Miss": "female"}
# Role abbreviations read as a person only after a determiner ("the PA", not "PA and lateral").
_SHORT_ROLES = frozenset("pa np ot pt rn cna lpn emt pcp gp sho crna md do tech".split())
# The patient's own description: an age before the noun, or "he is a (pleasant) man".
_AGE_BEFORE = re.compile(
    r"\b\d{1,3}\s*(?:-|\s)?\s*(?:years?|yrs?|y/?o|yo|y\.o\.|months?|mos?|weeks?|wks?|days?)"
    r"(?:[- ]old)?[\s,-]+(?:[A-Za-z-]+\s+){0,3}$",
    re.IGNORECASE,
)
_SAID_OF = re.compile(
    r"\b(?:he|she|patient|pt|this|who|which)\s+(?:is|was|has\s+been)\s+(?:a|an)\s+"
    r"(?:[A-Za-z0-9-]+\s+){0,3}$"
    r"|^\s*(?:this|our)\s+(?:[A-Za-z0-9-]+\s+){0,3}$"
    # A sentence that opens with the description: "Pleasant gentleman in no distress".
    r"|^\s*(?!(?:a|an|the|that|another|one)\s)(?:[A-Za-z-]+\s+){1,2}$",
    re.IGNORECASE,
)
_FRONTED = re.compile(
    r"\s*(?:when|whenever|after|before|while|once|because|although|though|if|since|until|as)\b",
    re.IGNORECASE,
)
# Between a subject and its own object pronoun: no clause may open ("The nurse said that she
# gave him ..." reads "him" in another clause than "nurse").
_CLAUSE_OPENS = frozenset(
    "that who whom which whose and but or because when after before while if so as since until "
    "then said says told tells reports reported states stated thinks thought felt feels "
    "believes notes noted asked asks".split()
)


@dataclass(frozen=True)
class Person:
    """Someone other than the patient named in a note.

    Attributes:
        start: offset of the word that names them.
        sex: "male" or "female" when the word says it ("son", "Mrs."), else None.
    """

    start: int
    sex: str | None


def sex_of(key: str) -> str | None:
    """The sex a lower-case sex word states ("his" -> "male"), or None for another word."""
    if key in MALE_WORDS:
        return "male"
    if key in FEMALE_WORDS:
        return "female"
    return None


def patient_noun(text: str, start: int) -> bool:
    """Whether "man"/"woman"/... at ``start`` describes the patient: an age before it ("a
    61-year-old man") or said of the patient ("He is a pleasant gentleman", "This lady") in
    its sentence, and not a third party by :func:`~climb_vllm.rewrite.mentions.
    noun_is_third_party`."""
    lo, _ = mentions.sentence_bounds(text, start)
    before = text[lo:start]
    said = bool(_AGE_BEFORE.search(before) or _SAID_OF.search(before))
    return said and not mentions.noun_is_third_party(text, start)


@functools.lru_cache(maxsize=16)
def people(text: str) -> tuple[Person, ...]:
    """Every person other than the patient named in ``text``, in order (found once per text)."""
    found: dict[int, Person] = {}
    titles = list(_TITLE.finditer(text))
    titled = {(m.group(1), m.group(2)) for m in titles if m.group(1) in _TITLE_SEX}
    for match in titles:
        # "Mr. Jones" is the patient when the note names one titled person and nothing marks
        # them as someone else; two ("Mrs. Lopez ... Mr. Lopez") leave each open.
        patient = (
            match.group(1) in _TITLE_SEX
            and len(titled) == 1
            and not mentions.title_is_third_party(text, match.start(), match.end())
        )
        if not patient:
            found[match.start()] = Person(match.start(), _TITLE_SEX.get(match.group(1)))
    words = mentions.words(text, 0, len(text))
    for i, word in enumerate(words):
        key = word.key
        before = words[i - 1].key if i else ""
        if key in TITLES or key in ("dr", "prof") or _TITLE.match(text, word.start):
            continue
        # A determiner up to two words before a doer: "his AA sponsor", "the night nurse".
        determined = any(w.key in _DETERMINERS for w in words[max(0, i - 3) : i])
        if word.text in ("PT", "OT") and any(c.islower() for c in text):
            named = True  # therapy or a therapist ("PT worked with him"); "pt" is the patient
        elif key in _SHORT_ROLES:
            named = before in _DETERMINERS and (key != "pt" or mentions.names_a_therapist(words, i))
        elif key in ("patient", "patients"):
            named = before in ("a", "another", "other", "an")  # "bitten by a patient"
        elif key in ("male", "female", "males", "females"):
            after = words[i + 1].key if i + 1 < len(words) else ""
            named = is_person_word(after) or after in OCCUPATIONS  # "the male nurse"
        elif key in GROUPS:
            # "Speech therapy saw her": a group among its sentence's first two words.
            lo = mentions.sentence_bounds(text, word.start)[0]
            opens = i < 2 or words[i - 2].end <= lo
            named = determined or opens
        elif key in PEOPLE_NOUNS:
            named = not patient_noun(text, word.start)
        else:
            named = (
                key in _SOMEONE
                or key in OCCUPATIONS
                or (is_person_word(key) and key not in ("patient", "pt"))
                or bool(_SERVICE.match(key))
                or (determined and key not in NOT_PEOPLE and bool(_DOER.match(key)))
            )
        if named:
            found[word.start] = Person(word.start, _PEOPLE_SEX.get(key))
    return tuple(sorted(found.values(), key=lambda p: p.start))


# Words after "her" that read both as a noun and as a verb or adverb: "makes her work late"
# (object) or "her work" (possessive), "examined her back", "sent her home".
_EITHER_AFTER_HER = frozenset(
    "back home work walk rest sleep eat dress feel go down off over up out in round around "
    "drink stand sit talk move cough breathe swallow shower bath bathe lie wait stay run fall "
    "fast best better worse first last turn call check place try push".split()
)


def her_is_open(text: str, end: int) -> bool:
    """Whether "her" ending at ``end`` may be an object or a possessive: the word after it
    reads both as a noun and otherwise ("makes her work late", "examined her back")."""
    following = re.match(r"\s*([A-Za-z]+)", text[end:])
    return following is not None and following.group(1).lower() in _EITHER_AFTER_HER


def plain_object(text: str, end: int) -> bool:
    """Whether an object reading of "her" ending at ``end`` is the only one: punctuation or a
    word that opens no noun phrase follows ("called her to return it", "saw her."), where
    before a noun it may be a possessive ("found her wallet")."""
    following = re.match(r"\s*([A-Za-z]+|[^\sA-Za-z]|$)", text[end:])
    word = following.group(1).lower() if following else ""
    return not word.isalpha() or word in _AFTER_OBJECT


class Reading:
    """The certainty of each sex word of one text, for a patient of sex ``sex`` (the sex the
    text states before the rewrite).

    Args:
        text: the section's original text.
        sex: "male" or "female": the patient's sex in ``text``.
    """

    def __init__(self, text: str, sex: str) -> None:
        self.text = text
        self.sex = sex
        self.people = people(text)
        other = "he|him|his|himself" if sex == "female" else "she|her|hers|herself"
        if len(self.people) == 1 and re.search(rf"\b(?:{other})\b", text, re.IGNORECASE):
            # One other person, and someone called by the other sex's pronoun: that is them
            # ("She was seen by the pharmacist. He checked her dose."), so they take no word
            # of the patient's sex.
            self.people = (Person(self.people[0].start, "male" if sex == "female" else "female"),)
        self._starts = [p.start for p in self.people]
        self._chain: dict[int, bool] = {}  # pronoun offset -> certain, in reading order

    def _window(self, start: int) -> tuple[int, int]:
        """(lo, hi) of the text whose persons can take the word at ``start``."""
        lo, hi = mentions.sentence_bounds(self.text, start)
        fronted = _FRONTED.match(self.text, lo) and "," in self.text[start:hi]
        if fronted and "," not in self.text[lo:start]:
            hi = self.text.index(",", start)  # "When she arrived, the nurse checked ..."
        else:
            hi = start
        for _ in range(NEAR_SENTENCES):
            if lo == 0:
                break
            lo, _ = mentions.sentence_bounds(self.text, max(0, lo - 2))
        return lo, hi

    def rivals(self, start: int, sex: str | None) -> list[Person]:
        """The persons who can take a word of ``sex`` at ``start``: named in its window, of
        that sex or of no known sex, the word itself left out."""
        lo, hi = self._window(start)
        first = bisect.bisect_left(self._starts, lo)
        last = bisect.bisect_left(self._starts, hi)
        return [
            p
            for p in self.people[first:last]
            if p.start != start and (p.sex is None or sex is None or p.sex == sex)
        ]

    def _own_subject(self, person: Person, start: int) -> bool:
        """Whether ``person`` is the subject of the clause whose object is the pronoun at
        ``start``: in its sentence, with at most four words and no clause opening between."""
        lo, _ = mentions.sentence_bounds(self.text, start)
        if person.start < lo:
            return False
        between = self.text[person.start : start]
        if re.search(r"[,;:()\"“”]", between):
            return False
        found = [w.key for w in mentions.words(self.text, person.start, start)][1:]
        if _TITLE.match(self.text, person.start):
            found = found[1:]  # the name after "Dr."
        return 1 <= len(found) <= 4 and not any(w in _CLAUSE_OPENS for w in found)

    def certain(self, start: int, key: str, kind: str = "", object_: bool = False) -> bool:
        """Whether the sex word ``key`` (lower case) at ``start`` has one reading.

        Args:
            start: the word's offset.
            key: the word, lower case ("he", "mr", "woman", "mother", "m").
            kind: "age" for an age-sex abbreviation, "kin" for a relative's kin word said of
                the patient, "parent" for the patient's own part as a parent ("She is the
                mother of two"); empty for the rest, read from ``key``.
            object_: the word is a pronoun object ("him", "her" as in "gave her aspirin").
        """
        if kind == "age":
            return True
        if kind == "kin" or key in ADDRESS:
            return False
        if key not in PRONOUNS and self._starts[bisect.bisect_left(self._starts, start) :][:1] == [
            start
        ]:
            return False  # the word itself names someone else ("the male nurse", "a man")
        sex = sex_of(key) or _PEOPLE_SEX.get(key)
        rivals = self.rivals(start, sex)
        if key in PEOPLE_NOUNS:
            return not rivals and patient_noun(self.text, start)
        if key in PRONOUNS:
            if object_ and len(rivals) == 1 and self._own_subject(rivals[0], start):
                rivals = []
            certain = not rivals and self._chain_certain(start, key)
            self._chain[start] = certain
            return certain
        return not rivals

    def kept(self, start: int, key: str) -> None:
        """Note that the pronoun ``key`` at ``start`` was kept as someone else's: the chain of
        pronouns after it is open."""
        if key in PRONOUNS:
            self._chain[start] = False

    def _chain_certain(self, start: int, key: str) -> bool:
        """Whether the nearest pronoun of ``key``'s sex before ``start`` in the window, if any,
        was certain (a word read before this one: words are read in order)."""
        lo, _ = self._window(start)
        before = [at for at in self._chain if lo <= at < start]
        if not before:
            return True
        last = max(before)
        mention = re.search(r"\b(?:patient|pt)\b", self.text[last:start], re.IGNORECASE)
        return mention is not None or self._chain[last]
