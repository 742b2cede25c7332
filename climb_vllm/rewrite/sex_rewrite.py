"""Rewriting a clinical note as if the patient were of the other sex, changing nothing else.

:func:`swap_sex` edits the words that state the patient's sex and returns an edit log (offset in
the original text, before, after, whether the referent may not be the patient). The rules:

- **Pronouns**: he/she, him/her, himself/herself, his/her/hers, also in contractions
  ("He's" -> "She's"). Female -> male, "her" is a possessive ("her chest" -> "his chest") or an
  object ("gave her magnesium" -> "him"), as :mod:`~climb_vllm.rewrite.possessive`
  reads it.
- **Honorifics**: Mr/Ms/Mrs/Miss only in title case and before a name ("Mr. A", "Ms ___");
  sir/ma'am.
- **Nouns** for the patient: man/woman, gentleman/lady, boy/girl, male/female (and plurals);
  mother/father where the patient is one ("She is the mother of two").
- **Note abbreviations**: "45 y/o M", "45-year-old F", "Sex: M", and a bare "72M" only where it
  reads as an age (after "a", "is", a sentence start; or before "with", "w/", "who",
  "presents"...), never after a temperature ("Tmax 101F") or in a decimal.

Never touched: words in capitals inside a line that has lower-case letters ("moderate MR" is
mitral regurgitation, "MS" mitral stenosis or multiple sclerosis, "HE" hepatic encephalopathy),
"MEN" and the honorifics in capitals anywhere, words glued to digits ("MEN2A", "100m"), and
clinical terms that hold a sex word ("male pattern baldness", "female factor infertility").
In an all-capitals line the pronouns and nouns change, except before a colon or inside brackets.

**Referents.** A pronoun, a title, "man"/"woman" or "sir"/"ma'am" can mean someone other than
the patient ("His father had an MI; he had a CABG", "her brother, Mr. Cole", "the nurse reports
that he gave him ..."). In a family-history line ("FH:", "Family history:") and in a sentence
whose subject is a relative of the same sex ("Father died when he was 60") the pronouns after
the relative are left alone, except a possessive right before a relative ("his father" is the
patient's). Every other such word goes through :mod:`~climb_vllm.rewrite.
referents`, which keeps a clinician's, a relative's or a stranger's when a rule of its says
whose it is. Where it falls back on a default while another person of the patient's sex is in
the sentence, the word is edited as the patient's and the edit marked ``uncertain`` in the
log, so a reader can review exactly those. That holds for a default that points at the third
party too (the sentence is about them, or their report says nothing of the patient's state):
on sets of excerpts no rule had read, keeping those words was wrong more often than right, and
editing them raised the correct edits by 2-4 points (NOTES.md). Before that default is
applied, a pronoun that no firm rule decides, after someone of the patient's sex named before
it in its sentence or in the three sentences before ("Dr. Burke saw him. He ordered a CT"), or
opening a sentence after one that opens with a pronoun kept as someone else's ("... He ordered
a CT. He found a stone"), goes to the learned referee
(:mod:`~climb_vllm.rewrite.referee`), a sentence encoder fine-tuned to read
whose it is (``referee=False`` leaves the rules alone); along a chain of such sentences it
reads from where the chain's first kept pronoun read, so the one named stays in view (a
sentence that speaks of no one, "It came back high.", does not end a chain). First, though, a
subject pronoun with no one named before it in its sentence whose verb is an act of care ("He
recommends aspirin", "He lasered it") is the person named up to two sentences back, if someone
is (:func:`~climb_vllm.rewrite.clause_states.acts_after_someone`), and one that
opens a report on someone of its sex right after a companion of its sex came with the patient
("His son drove him in. He says he has been confused") is the companion
(:func:`~climb_vllm.rewrite.clause_states.reports_after_companion`). Where the
text names one person besides the patient and calls someone "he" or "she" of the other sex,
every pronoun of the patient's sex is the patient's, and none is asked
(:func:`~climb_vllm.rewrite.mentions.only_someone_of_the_other_sex`); a relative
named as the patient's who speaks of the patient as their kin ("The patient's son ... his
father") has the kin word changed and the possessive kept
(:func:`~climb_vllm.rewrite.mentions.patient_as_relatives_kin`).
Last, a subject and an object pronoun of one clause that were both edited ("Fine-needle
aspiration was done. He will call him with the results") cannot both be the patient's: a
pronoun object is never its clause's subject, so the referee keeps the one it finds likelier
someone else's. The labelled sentences in ``tests/golden/counterfactual/`` measure all of it.

**Certainty.** Whatever the rules and the referee decide, each word is then marked certain or
uncertain from the text alone (:mod:`~climb_vllm.rewrite.certainty`): certain only where no one
but the patient can take it. :func:`rewrite` returns the edits and the words it kept as someone
else's, each so marked, and applies a person's decisions on the uncertain ones
(:mod:`~climb_vllm.rewrite.review`).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Mapping

from climb_vllm.rewrite import kin, mentions, referents
from climb_vllm.rewrite.clause_states import (
    acts_after_someone,
    opens_act_of_care,
    reports_after_companion,
)
from climb_vllm.rewrite.edits import Edit, Rewrite, match_case, settle
from climb_vllm.rewrite.possessive import his_or_him, next_word
from climb_vllm.rewrite.referee import (
    Judge,
    default_referee,
    speaks_of_someone,
    window,
)
from climb_vllm.rewrite.referents import SentenceReader

#: Sentences before a pronoun in which someone named makes the referee read it: three, where
#: one (the sentence before alone) left a chain broken by a sentence of no one ("It was
#: 80/40.") to the default (NOTES.md, "Six tuned layers", point 3).
NEAR_SENTENCES = 3

_MALE_TO_FEMALE = {
    "he": "she",
    "him": "her",
    "himself": "herself",
    "man": "woman",
    "men": "women",
    "male": "female",
    "males": "females",
    "gentleman": "lady",
    "gentlemen": "ladies",
    "boy": "girl",
    "boys": "girls",
    "mr": "ms",
    "sir": "ma'am",
}
_FEMALE_TO_MALE = {
    "she": "he",
    "herself": "himself",
    "woman": "man",
    "women": "men",
    "female": "male",
    "females": "males",
    "lady": "gentleman",
    "ladies": "gentlemen",
    "girl": "boy",
    "girls": "boys",
    "ms": "mr",
    "mrs": "mr",
    "miss": "mr",
    "ma'am": "sir",
    "hers": "his",
}
_HONORIFICS = frozenset({"mr", "ms", "mrs", "miss"})
_PRONOUNS = frozenset({"he", "him", "himself", "his", "she", "her", "herself", "hers"})
_PEOPLE = frozenset(
    "man men woman women gentleman gentlemen lady ladies boy boys girl girls".split()
)
# Words, "ma'am" whole; not glued to digits or letters ("MEN2A", "100m", the "s" of "He's").
# A quote mark opens a word ("'Sir, ...") unless it follows a letter ("He's").
_WORD = re.compile(r"(?<![A-Za-z0-9’])(?<![A-Za-z0-9]['’])(?:[Mm]a['’]am|[A-Za-z]+)(?![A-Za-z0-9])")
_AGE_SEX = re.compile(
    r"(\b\d{1,3}\s*(?:y/?o|yo|y\.o\.|-?\s?years?[- ]old|-?\s?yr[- ]old|yrs?)\s*,?\s*)([MF])\b"
    r"|(\b(?:sex|gender)\s*[:=]\s*)([MF])\b",
    re.IGNORECASE,
)
_BARE_AGE_SEX = re.compile(r"(?<![\d.,/])\b(\d{1,3})([MF])\b")
_AGE_BEFORE = re.compile(r"(?:^|[.:;!?\n(]\s*|\b(?:a|an|is|was|pt|patient|this|the)\s+)$", re.I)
_AGE_AFTER = re.compile(
    r"\s+(?:with|w/|who|presents?|presenting|presented|pmh|h/o|s/p|c/o|hx|history|admitted|"
    r"brought|here|transferred|referred)\b",
    re.IGNORECASE,
)
_TEMPERATURE = re.compile(
    r"\b(?:t|tmax|temp|temperature|febrile|fever|spiked?)\b\W*(?:to\s*)?$", re.IGNORECASE
)
_CLINICAL_TERMS = re.compile(
    r"\b(?:male|female)[- ](?:pattern|factor|predominant|to[- ]female|to[- ]male|catheter|"
    r"connector|adapter|condom)\b|\b(?:male|female)s?\s+(?:patients|subjects)\b"
    r"|\b(?:wo)?men['’]s\s+(?:health|clinic|center|centre)\b",
    re.IGNORECASE,
)
_FAMILY_LINE = re.compile(r"^\s*(?:fh|fhx|family\s+(?:history|hx))\b", re.IGNORECASE)
# A sentence ends at ; ! ? a line break, or a full stop before white space that does not close
# an abbreviation ("Dr. Patel", "E. coli").
_SENTENCE_END = re.compile(
    r"[;!?\n]|(?<!\b[A-Z])(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)(?<!\bSt)\.(?=\s)"
)


def _line_bounds(text: str, at: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return start, len(text) if end < 0 else end


@functools.lru_cache(maxsize=16)
def _sentence_ends(text: str) -> tuple[int, ...]:
    """The ends of ``text``'s sentences, found once per text (see :func:`_sentence_start`)."""
    return tuple(m.end() for m in _SENTENCE_END.finditer(text))


def _sentence_start(text: str, at: int) -> int:
    """Where the sentence holding offset ``at`` (the start of a word) begins."""
    ends = _sentence_ends(text)
    before = bisect.bisect_right(ends, at)
    return ends[before - 1] if before else 0


def _his(text: str, end: int) -> str:
    """ "her" or "hers" for a male -> female "his": "hers" when it stands alone."""
    following = next_word(text, end)
    return "her" if following and following not in {"and", "or", "to", "is", "was"} else "hers"


def _protected(text: str, start: int, end: int, word: str) -> bool:
    """Capitals inside a mixed-case line, and clinical terms that hold a sex word."""
    lo, hi = _line_bounds(text, start)
    if word.isupper() and len(word) > 1:
        if word.lower() in _HONORIFICS or word.lower() == "men":
            return True
        line = text[lo:hi]
        if any(c.islower() for c in line):
            return True
        # A heading ("HE:"), an abbreviation in brackets or before its expansion "HE (...)".
        if text[end : end + 1] == ":" or text[start - 1 : start] == "(":
            return True
        if re.match(r"\s*\(", text[end : end + 3]):
            return True
    for term in _CLINICAL_TERMS.finditer(text, max(lo, start - 20), min(hi, end + 30)):
        if term.start() <= start < term.end():
            return True
    return False


def _referent(
    text: str,
    start: int,
    key: str,
    male_patient: bool,
    reader: SentenceReader,
    referee: bool = True,
    third_near: bool = False,
    since: int | None = None,
    judge: Judge | None = None,
) -> tuple[bool, bool]:
    """(keep, uncertain) for a pronoun at ``start``: keep it when it refers to a relative of
    the patient's sex (family-history line, relative as the sentence's subject) or when a firm
    rule of :mod:`~climb_vllm.rewrite.referents` says it is a third party's; where
    no firm rule decides and ``third_near`` (someone who may be of the patient's sex is named
    before it in its sentence or in the :data:`NEAR_SENTENCES` before), what the referee decides
    (:mod:`~climb_vllm.rewrite.referee`; skipped when ``referee`` is False); else
    the rules' default, edited and marked uncertain while another person is in the
    sentence."""
    same_kin = kin.KIN_MALE if male_patient else kin.KIN_FEMALE
    sentence = text[_sentence_start(text, start) : start]
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", sentence)]
    following = next_word(text, start + len(key))
    skip = re.match(r"[ \t]+[A-Za-z]+", text[start + len(key) :])
    if following in kin.KIN_ADJECTIVES and skip:
        # "her maternal aunt", "his older brother": the relative after the adjective.
        following = next_word(text, start + len(key) + skip.end())
    possessive_of_kin = key in ("his", "her") and following in (kin.KIN_MALE | kin.KIN_FEMALE)
    if possessive_of_kin:
        return False, False
    lo, _ = _line_bounds(text, start)
    if _FAMILY_LINE.match(text[lo:start]) and any(w in same_kin for w in words):
        return True, False
    # A relative as the sentence's subject, not the patient's possessive before it: "Father
    # died when he was 60", "The patient's brother ... he" (but "His son ... him" is the patient).
    lead = [w for w in words[:3] if w not in ("the", "patient", "pt", "s")]
    if lead and lead[0] in same_kin and key not in ("him", "her", "his"):
        return True, False
    decision = reader.decision(start)
    if referee and not decision.firm and third_near:
        return (judge or default_referee()).decide(text, start, start + len(key), since)
    # Only a rule keeps a word; a default's third party is edited and marked, as the module
    # note says.
    return decision.third and not decision.uncertain, decision.uncertain


def swap_sex(
    text: str,
    to: str = "female",
    section: str = "note",
    referee: bool = True,
    judge: Judge | None = None,
) -> tuple[str, list[Edit]]:
    """Rewrite ``text`` as if the patient were of sex ``to`` ("female" or "male").

    Args:
        text: the section's text.
        to: the sex to write the patient as.
        section: the section's name, recorded in each edit.
        referee: ask the learned referee about pronouns after another person of the
            patient's sex (False: the referent rules alone, as before it existed).
        judge: what answers in the referee's place (the packaged referee when None; the
            referee's training passes the labels, :mod:`~climb_vllm.rewrite.
            write_referee`).

    Returns:
        The new text and the edits made, in order of their offset in ``text`` (the words left
        as they were are in :func:`rewrite`'s answer).
    """
    done = rewrite(text, to, section, referee, judge)
    return done.text, list(done.edits)


def rewrite(
    text: str,
    to: str = "female",
    section: str = "note",
    referee: bool = True,
    judge: Judge | None = None,
    decisions: Mapping[tuple[int, str], str] | None = None,
) -> Rewrite:
    """Rewrite ``text`` as if the patient were of sex ``to``, with every sex word's decision.

    Args:
        text, to, section, referee, judge: as for :func:`swap_sex`.
        decisions: a person's decisions on words the rewrite marks uncertain: ``(offset,
            word) -> sex`` ("female" or "male"), the sex the word is to state in the new text
            (:mod:`~climb_vllm.rewrite.review`). A decided word is certain.

    Returns:
        The new text, its edits and the words of the patient's sex it left as they were, each
        marked certain or uncertain (:mod:`~climb_vllm.rewrite.certainty`).
    """
    if to not in ("female", "male"):
        raise ValueError(f"unknown sex {to!r}")
    done = _Rewriter(text, to, section, referee, judge)
    done.fixed_words()
    for match in _WORD.finditer(text):
        done.word(match)
    done.one_of_two()
    return settle(text, to, section, done.edits, done.kept, decisions)


class _Rewriter:
    """One text's rewrite in progress: the edits and kept words so far, and what reading the
    text once per sentence has learnt (:func:`rewrite` drives it).

    Args:
        text, to, section, referee, judge: as for :func:`swap_sex`.
    """

    def __init__(
        self, text: str, to: str, section: str, referee: bool, judge: Judge | None
    ) -> None:
        self.text, self.to, self.section = text, to, section
        self.referee, self.judge = referee, judge
        self.female = to == "female"
        self.mapping = _MALE_TO_FEMALE if self.female else _FEMALE_TO_MALE
        self.edits: list[Edit] = []
        self.kept: list[Edit] = []  # words of the patient's sex left as someone else's
        self.taken: set[int] = set()  # offsets already edited by a fixed pattern
        self.readers: dict[int, SentenceReader] = {}
        # Subject pronouns kept as someone else's: a sentence that opens with a pronoun after
        # one that opened with such a one may go on about that person ("The surgeon saw him.
        # He did an endoscopy. He found an ulcer"), so the referee is asked there too.
        self.kept_leads: set[int] = set()
        # One other person, of the other sex: each pronoun of the patient's sex is the
        # patient's.
        self.one_other_person = mentions.only_someone_of_the_other_sex(text, self.female)

    def reader(self, at: int) -> SentenceReader:
        """The referent reader of the sentence holding ``at`` (one per sentence)."""
        lo, _ = mentions.sentence_bounds(self.text, at)
        if lo not in self.readers:
            text = self.text
            self.readers[lo] = referents.SentenceReader(
                text, at, self.female, lambda s, e: his_or_him(text, s, e) == "him"
            )
        return self.readers[lo]

    def sentence_before(self, here: SentenceReader) -> SentenceReader | None:
        """The reader of the sentence before ``here``'s (None for the text's first)."""
        before = self.reader(max(0, here.lo - 2))
        return before if before.lo < here.lo else None

    def third_party_near(self, at: int) -> bool:
        """Whether someone who may be of the patient's sex is named before ``at`` in its
        sentence or anywhere in the :data:`NEAR_SENTENCES` before ("Dr. Burke saw him. He
        ordered a CT", "The nurse found her pale. She checked her pressure. It was 80/40. She
        called a rapid response")."""
        here = self.reader(at)
        if here.third_party_before(at):
            return True
        before = self.sentence_before(here)
        for _ in range(NEAR_SENTENCES):
            if before is None:
                return False
            if before.third_party_before(before.hi):
                return True
            before = self.sentence_before(before)
        return False

    def kept_lead_before(self, at: int) -> int | None:
        """Where the sentence before opens with a kept subject pronoun, when ``at`` opens its
        own sentence (else None); a sentence before that speaks of no one is passed over."""
        here = self.reader(at)
        if self.text[here.lo : at].strip():
            return None
        before = self.sentence_before(here)
        if before is not None and not speaks_of_someone(self.text, before.lo, before.hi):
            # A sentence of no one between ("He ordered a rheumatoid factor. It came back high.
            # He started methotrexate") does not end the chain.
            before = self.sentence_before(before)
        if before is None:
            return None
        gap = self.text[before.lo : here.lo]
        lead = before.lo + len(gap) - len(gap.lstrip())
        return lead if lead in self.kept_leads else None

    def after_kept_lead(self, at: int) -> bool:
        """Whether ``at`` opens its sentence and the sentence before opens with a kept
        subject pronoun."""
        return self.kept_lead_before(at) is not None

    def chain_start(self, at: int) -> int | None:
        """Where the referee starts reading for a pronoun along a chain of sentences that open
        with kept pronouns: where the chain's first pronoun's reading started, so the one
        named before the chain stays in view ("The ENT surgeon saw her. He looked at her cords.
        He found a polyp. He removed it"); None off a chain."""
        first, lead = at, self.kept_lead_before(at)
        while lead is not None and lead < first:
            first, lead = lead, self.kept_lead_before(lead)
        return None if first == at else window(self.text, first)[0]

    def fixed_words(self) -> None:
        """Edit what fixed patterns decide before any word is read: the kin word of a relative
        who speaks of the patient, and the sex letter of "45 y/o M" and of a bare "72M"."""
        text, section = self.text, self.section
        letter = "F" if self.female else "M"
        for possessive, kin_at, kin_end in mentions.patient_as_relatives_kin(text):
            word = text[kin_at:kin_end]
            if (word.lower() in kin.KIN_MALE) == self.female:
                # "The patient's son ... his father": the father is the patient, "his" the son's.
                swapped = match_case(word, kin.KIN_SWAP[word.lower()])
                self.edits.append(Edit(section, kin_at, word, swapped))
                self.taken.update((possessive, kin_at))
                # "She says her mother ...": whoever owns the possessive is the relative.
                speaker = mentions.relatives_own_pronoun(text, possessive)
                if speaker is not None:
                    self.taken.add(speaker)
        for match in _AGE_SEX.finditer(text):
            group = 2 if match.group(2) is not None else 4
            if match.group(group).upper() != letter and match.group(group).isupper():
                self.edits.append(Edit(section, match.start(group), match.group(group), letter))
                self.taken.add(match.start(group))
        for match in _BARE_AGE_SEX.finditer(text):
            at = match.start(2)
            if match.group(2) == letter or at in self.taken or int(match.group(1)) > 120:
                continue
            head = text[max(0, match.start() - 30) : match.start()]
            if _TEMPERATURE.search(head):
                continue
            if _AGE_BEFORE.search(head) or _AGE_AFTER.match(text, match.end()):
                self.edits.append(Edit(section, at, match.group(2), letter))
                self.taken.add(at)

    def replacement(self, key: str, start: int, end: int) -> str | None:
        """The word of sex ``to`` that replaces ``key`` (the lower-cased word at ``start``),
        or None for a word that states no sex."""
        if self.female and key == "his":
            return _his(self.text, end)
        if not self.female and key == "her":
            return his_or_him(self.text, start, end)
        if key in kin.KIN_SWAP and kin.patient_parent(self.text, start, end, key, self.to):
            return kin.KIN_SWAP[key]
        return self.mapping.get(key)

    def someone_elses(self, key: str, start: int, end: int) -> bool:
        """Whether a rule of its own kind keeps the title, noun or form of address ``key`` at
        ``start`` as someone else's (pronouns are read by :meth:`pronoun_kept`)."""
        text = self.text
        if key in _HONORIFICS:
            return mentions.title_is_third_party(text, start, end)
        if key in _PEOPLE:
            return mentions.noun_is_third_party(text, start)
        if key in ("male", "female", "males", "females"):
            return mentions.sex_adjective_of_other(text, end)
        if key in ("sir", "ma'am"):
            speaker = self.reader(start).speaker(start)
            third_speaks = None if speaker is None else speaker.third
            return mentions.address_is_third_party(text, start, third_speaks)
        return False

    def pronoun_kept(self, key: str, start: int, end: int) -> tuple[bool, bool]:
        """Whether the pronoun ``key`` at ``start`` is kept as someone else's, and whether its
        edit is uncertain."""
        text = self.text
        near = self.referee and (self.third_party_near(start) or self.after_kept_lead(start))
        if key in ("he", "she") and not self.reader(start).third_party_before(start):
            # An act of care goes to whoever was named, or along a chain of sentences that
            # open with kept pronouns ("He found a polyp. He removed it"), to them.
            chained = self.after_kept_lead(start) and opens_act_of_care(text, start, end)
            if (
                chained
                or acts_after_someone(text, start, end)
                or reports_after_companion(text, start, end)
            ):
                self.kept_leads.add(start)
                return True, False
        # Only a pronoun the referee may be asked about reads along a chain (off one, near
        # is False and chain_start None), so the rules alone never pay for the window.
        since = self.chain_start(start) if near else None
        keep, uncertain = _referent(
            text,
            start,
            key,
            self.female,
            self.reader(start),
            self.referee,
            near,
            since,
            self.judge,
        )
        if keep and key in ("he", "she"):
            self.kept_leads.add(start)
        return keep, uncertain

    def word(self, match: re.Match[str]) -> None:
        """Edit, keep or pass over the word ``match`` found."""
        word, start, end = match.group(), match.start(), match.end()
        if start in self.taken:
            return
        key = word.lower().replace("’", "'")
        replacement = self.replacement(key, start, end)
        if replacement is None or _protected(self.text, start, end, word):
            return
        if key in _HONORIFICS and (
            word != word.capitalize() or not re.match(r"\.?\s+[A-Z_\[]", self.text[end : end + 4])
        ):
            return  # "mr" in prose, or no name after it: not a title
        swapped = Edit(self.section, start, word, match_case(word, replacement))
        if self.someone_elses(key, start, end):
            self.kept.append(swapped)
            return
        uncertain = False
        if key in _PRONOUNS and not self.one_other_person:
            keep, uncertain = self.pronoun_kept(key, start, end)
            if keep:
                self.kept.append(swapped)
                return
        self.edits.append(Edit(self.section, start, word, swapped.after, uncertain))

    def one_of_two(self) -> None:
        """Keep one of a clause's edited subject and object pronouns (:func:`_one_of_two`)."""
        if self.referee and not self.one_other_person:
            paired = _one_of_two(
                self.text, self.edits, self.reader, self.judge or default_referee()
            )
            self.kept += [e for e in self.edits if e not in paired]
            self.edits = paired


def _one_of_two(
    text: str, edits: list[Edit], reader: Callable[[int], SentenceReader], judge: Judge
) -> list[Edit]:
    """``edits`` without one of each subject and object pronoun of one clause that were both
    edited ("He will call him with the results"): a pronoun object is never its clause's
    subject, so one is someone else's: the one the referee finds likelier to be. (Such a pair
    is found only where no one is named before the subject in its sentence, so no firm rule
    has read it.)"""
    edited = {e.offset: e for e in edits}
    dropped: set[int] = set()
    for edit in edits:
        here = reader(edit.offset)
        subject = here.clause_subject_pronoun(edit.offset)
        if subject is None or subject not in edited or {subject, edit.offset} & dropped:
            continue
        p_subject = judge.third_party_probability(
            text, subject, subject + len(edited[subject].before)
        )
        p_object = judge.third_party_probability(text, edit.offset, edit.offset + len(edit.before))
        dropped.add(subject if p_subject >= p_object else edit.offset)
    return [e for e in edits if e.offset not in dropped]
