"""Who a word of the patient's sex refers to: the patient, or another person in the sentence.

A note names clinicians, staff, relatives and strangers; when one may be of the patient's sex,
a pronoun may be theirs, and the sex rewrite must leave it alone. The rules read one sentence
(up to . ! ? or a line break) and call such a person a *third party*:

- **Titles, "man"/"woman", "sir"/"ma'am"** and "PT"/"OT": :mod:`~climb_vllm.rewrite.mentions`
  says when they name a third party.
- **Subject pronouns** ("he", "she") are resolved in order, the first rule that applies:
  1. "<pronoun> is/was the patient's <relative or role>": the third party;
  2. no third party before it in the sentence: the patient;
  3. "when/since <pronoun> was <age>": the patient for a child ("when she was 10", "since
     he was a teenager"), else whoever the clause before is about ("Father died when he was
     60", "his father had a stroke when he was in his sixties");
  4. after "asked (him) whether/if/how ...": the patient ("the nurse asked if she was in
     pain"), except "whether she could stay", which asks leave for the one asking;
     4b. a verb of answering ("she said no", "he told him ...") after a question in the
     sentence: whoever did not ask (whoever was asked, after "was asked");
  5. right after a reporting verb whose subject is the patient ("he told the doctor that
     he ...", "she was told she ...", "she told him he ..."): the patient;
  6. a verb only a patient does ("tolerated", "fainted", "walked 200 feet") or a state only a
     patient is in ("was hypotensive") follows: the patient; an act of care ("ordered", "will
     examine") instead: the third party (:mod:`~climb_vllm.rewrite.clause_states`);
  7. in a third party's report ("the nurse reports that he ...", "noticed that she ...", "Dr.
     Osei, who thinks she ...", or "and he ..." going on with such a report): the third party
     when they do something to the patient in it ("he gave him") or stress themselves ("she
     herself"); else the patient when a state follows ("has been falling", "was febrile");
     else the third party;
     7a. what became of the patient after a third party acted on them ("brought him in after
     he was seen walking"), why a third party was worried, or "but <pronoun>" after a third
     party's clause: the patient, unless a motive or finding follows ("because he was worried");
     7b. after "and" that follows a clause whose subject is a third party ("the technician
     left and she will return"), with no state after it: the third party;
     7c. a state that lasts "since" ("his brother died, and he has been depressed since"):
     the patient;
  8. the sentence is about a third party (its first person is one: "Dr. Jensen saw the
     patient; he ordered ...", "His son found him and he called 911"): the third party, unless
     rule 9 finds a verb of help ("he gave him nitroglycerin" decides by that);
  9. its clause has a pronoun object of the same sex: one of them is the patient, the one
     helped when a verb of help comes between ("he gave him aspirin", "she drove her to urgent
     care", "he came to pick him up"), else the one who acts ("she says she trusts her");
  10. a state follows ("has gout", "is alone"): the patient;
  11. otherwise the patient, marked uncertain.
- **Object pronouns and possessives** are the patient's, except that a pronoun object names
  the other one of its clause's subject ("the resident examined him"); "his/her own"
  and "in his sixties" follow their subject; "in his opinion" the sentence's first person;
  "his advice" (or recommendation, guidance) after someone else is named is theirs; and a
  possessive after "is/was" before a role ("she is her only caregiver", "the patient is his
  caregiver") is not the subject's.

A decision resting on rule 11, on the default for an object or possessive while a third
party is in the sentence, on rule 8 or on rule 7's last default (and an object whose subject
is such a choice) is uncertain. Those third parties still steer the rules that follow, but the
rewrite asks its referee about such words or, without it, edits them and marks them: kept, they
were wrong more often than right on excerpts no rule had read. The rules were written on the
labelled third-party sets, each read only after it was measured untouched (NOTES.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from climb_vllm.rewrite import referent_words as vocab
from climb_vllm.rewrite.clause_states import is_act_of_care, main_verb, state_after
from climb_vllm.rewrite.mentions import (
    names_a_therapist,
    noun_is_third_party,
    others_role,
    sentence_bounds,
    titled_names,
    words,
)


@dataclass(frozen=True)
class Decision:
    """What a word refers to: ``third`` when a third party (keep the word), ``uncertain`` when
    the rule that decided is a default while a third party is in the sentence, ``firm`` when a
    rule read it from the words (rules 1 and 3-7c, and what follows from them) rather than
    from the sentence's shape (rules 7's default, 7b and 8-11), which the rewrite's referee
    may overrule."""

    third: bool
    uncertain: bool = False
    firm: bool = False


def _firm(decision: Decision) -> Decision:
    return Decision(decision.third, decision.uncertain, True)


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
        self.words = words(text, self.lo, self.hi)
        self.subjects = {"he"} if male_patient else {"she"}
        self.objects = {"him"} if male_patient else {"her"}
        self.possessives = {"his"} if male_patient else {"her", "hers"}
        self.reflexive = "himself" if male_patient else "herself"
        self.kin = vocab.KIN_MALE if male_patient else vocab.KIN_FEMALE
        third, patient = titled_names(text)
        self.third_titles = third - patient
        self.decisions: dict[int, Decision] = {}
        self.reported: dict[int, bool] = {}  # subject pronoun -> opens a third party's report
        self._third = [self._is_third(i) for i in range(len(self.words))]
        self._resolve()

    def decision(self, start: int) -> Decision:
        """The decision for the pronoun starting at ``start`` (the patient when unknown)."""
        return self.decisions.get(start, Decision(False))

    def clause_subject_pronoun(self, start: int) -> int | None:
        """Where the subject pronoun of the object pronoun at ``start``'s clause starts ("he
        will call him"), unless someone else is named before it (the rules read those); else
        None. A pronoun object is never its clause's subject: one of the two is someone else."""
        i = next((k for k, w in enumerate(self.words) if w.start == start), None)
        found = None if i is None or self._pronoun_kind(i) != "object" else self._back(i)
        if found is None or found[0] != "subject" or self._third_before(found[1]):
            return None
        return self.words[found[1]].start

    def third_party_before(self, start: int) -> bool:
        """Whether someone who may be of the patient's sex is named before ``start`` in the
        sentence (where the rewrite asks its referee)."""
        return any(self._third[k] for k, w in enumerate(self.words) if w.start < start)

    # -- mentions ------------------------------------------------------------------------

    def _is_third(self, i: int) -> bool:
        """Whether word ``i`` names a third party who may be of the patient's sex."""
        word = self.words[i]
        key = word.key
        role = vocab.is_role(key) and not others_role(self.text, self.lo, word.start, self.male)
        if key in self.kin or role or names_a_therapist(self.words, i):
            return True
        if key in ("mr", "ms", "mrs", "miss") and i + 1 < len(self.words):
            same_sex = (key == "mr") == self.male  # "Mrs. Baker" is no "he"
            return same_sex and self.words[i + 1].text in self.third_titles
        if key in ("man", "men", "woman", "women", "gentleman", "lady"):
            return noun_is_third_party(self.text, word.start)
        return False

    def _is_patient_noun(self, i: int) -> bool:
        patient = self.words[i].key in ("patient", "pt", "patient's", "pt's")
        return patient and not names_a_therapist(self.words, i)

    def _pronoun_kind(self, i: int) -> str | None:
        word, key = self.words[i], self.words[i].key
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
            if vocab.CLAUSE_BREAK.search(between) or vocab.CLAUSE_BREAK.fullmatch(
                self.words[k].key
            ):
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
            return Decision(True, firm=True)  # rule 1
        if not self._third_before(i):
            return Decision(False)  # rule 2
        before = [w.key for w in self.words[max(0, i - 1) : i]]
        if before in (["when"], ["since"]) and after[:1] in (["was"], ["were"]):
            rest = self.text[self.words[i].end : self.words[i].end + 40]
            age = re.match(r"\s+\w+\s+(\d+)", rest)
            decade = re.match(r"\s+\w+\s+in\s+(?:his|her|their)\s+\w+ties\b", rest)
            if vocab.CHILDHOOD.match(rest) or (age and int(age.group(1)) < 18):
                return Decision(False, firm=True)  # rule 3: "when she was 10", "as a child"
            if (age or decade) and before == ["when"]:
                # Rule 3: "Father died when he was 60", "he reports that his father had a
                # pacemaker when he was in his sixties": whoever the clause before is about.
                nearest = self.subject_of(i - 1)
                return _firm(nearest or Decision(bool(self._first_person())))
        if before and before[0] in ("whether", "if", "how", "what", "why") and i >= 2:
            if self._pronoun_kind(i - 2) == "object":
                return Decision(False, firm=True)  # rule 4: "asked him whether he had chest pain"
            asked = [j for j in range(max(0, i - 6), i) if self.words[j].key in vocab.ASK]
            if asked:
                # "the nurse asked if she was in pain", "she asked Dr. Cohen whether she could
                # stop ...": one asks about the patient, or the patient about themselves; but
                # "asked whether she could stay" asks leave for the one asking.
                if after[:1] and after[0] in ("could", "can", "may", "might"):
                    return _firm(self.subject_of(asked[-1]) or Decision(False))
                return Decision(False, firm=True)
        answer = self._answerer(i)
        if answer is not None:
            return _firm(answer)  # rule 4b: "she asked ..., and she said no"
        reporter = self._reporter(i)
        self.reported[i] = bool(reporter)
        if reporter is False:
            return Decision(False, firm=True)  # rule 5: what the patient says or is told
        state = self._states(i)
        if state == "strong":
            return Decision(False, firm=True)  # rule 6: "tolerated", "needs", "was hypotensive"
        if self._acts(i):
            return Decision(True, firm=True)  # rule 6b: an act of care ("he ordered")
        if reporter:
            # Rule 7, what a third party reports: about themselves when they do something to the
            # patient or stress themselves ("he gave him", "she herself"), else a state of
            # the patient ("says she has been falling"), else what they will do.
            if self._object_follows(i) or self._emphatic(i):
                return Decision(True, firm=True)
            # No state after it: a default, the third party, uncertain. A state: the patient's,
            # but for the referee to weigh ("the owner says she has had the cat for a week").
            return Decision(state is None, uncertain=state is None)
        if self._after_care(i, state):
            return Decision(False, firm=True)  # rule 7a: "brought him in after he was seen ..."
        if state is None and self._after_third_clause(i):
            return Decision(True)  # rule 7b: "the phlebotomist left and he will try again"
        if state == "weak" and self._since(i):
            return Decision(False, firm=True)  # rule 7c: "his brother died, and he has been low"
        if self._object_follows(i) and self._helps(i):
            return Decision(True)  # rule 9 before 8: "he gave him nitroglycerin"
        if self._first_person():
            # Rule 8, the sentence is about the third party: a default, so uncertain.
            return Decision(True, uncertain=True)
        if self._object_follows(i):
            # Rule 9: one of the two is the patient: the one helped ("he gave him aspirin",
            # "she drove her to urgent care"), else the one who acts ("she trusts her").
            return Decision(self._helps(i))
        if state:
            return Decision(False)  # rule 10
        return Decision(False, uncertain=True)  # rule 11

    def _states(self, i: int) -> str | None:
        """What the clause after subject pronoun ``i`` says (:func:`clause_states.state_after`)."""
        asked = any(w.key in vocab.REQUESTS for w in self.words[:i])
        return state_after([w.key for w in self.words[i + 1 : i + 8]], self.reflexive, asked)

    def _acts(self, i: int) -> bool:
        """Whether the main verb after subject pronoun ``i`` is an act of care ("he ordered",
        "she will examine", "he had reviewed"), not in the passive ("he was treated")."""
        return is_act_of_care([w.key for w in self.words[i + 1 : i + 8]])

    def _main_verb(self, i: int) -> str:
        """The first word after subject pronoun ``i`` that is not an auxiliary or a form of
        "have" ("he will call" -> "call"; "" at the sentence's end)."""
        return main_verb([w.key for w in self.words[i + 1 : i + 8]])

    def _helps(self, i: int) -> bool:
        """Whether a verb of help comes between subject pronoun ``i`` and its clause's object
        pronoun ("he gave him", "he came to pick him up")."""
        for k in range(i + 1, len(self.words)):
            if self._pronoun_kind(k) == "object":
                return False
            if self.words[k].key in vocab.HELPS:
                return True
        return False

    def _since(self, i: int) -> bool:
        """Whether subject pronoun ``i``'s clause ends in "since" ("he has been depressed
        since"): a state that followed what the sentence first says happened to someone."""
        for k in range(i + 1, len(self.words)):
            if self.words[k].key == "since":
                gap = self.text[self.words[k].end : self.words[k].end + 2]
                return not gap.strip() or gap.lstrip()[:1] in ".;,"
        return False

    def _answerer(self, i: int) -> Decision | None:
        """Subject pronoun ``i`` answers ("she said no", "he replied") a question asked earlier
        in the sentence: the one who did not ask (the one asked, when "was asked")."""
        if self._main_verb(i) not in vocab.ANSWERS:
            return None
        for j in range(i - 1, -1, -1):
            if self.words[j].key not in ("asked", "asks"):
                continue
            passive = j > 0 and self.words[j - 1].key in vocab.BE
            asker = self.subject_of(j - 1 if passive else j)
            if asker is None:
                return None
            return Decision(asker.third if passive else not asker.third)
        return None

    def subject_of(self, j: int, first: bool = False) -> Decision | None:
        """Who does the verb at word ``j``: the nearest person before it ("the resident
        asked" -> a third party; "she asked" -> her decision; a pronoun of the other sex -> a
        third party; "the patient" -> the patient), or with ``first`` the first person of the
        sentence."""
        for k in range(0, j) if first else range(j - 1, -1, -1):
            person = self._person_at(k)
            if person is not None:
                return person
        return None

    def _person_at(self, k: int) -> Decision | None:
        """Who word ``k`` names, when it names someone: a third party (by role, kinship, a
        third party's title or a pronoun of the other sex), the patient ("the patient", the
        patient's title) or whoever a subject pronoun was decided to be."""
        if self.words[k].key in ("he", "she") and self._pronoun_kind(k) != "subject":
            return Decision(True)
        if self._third[k]:
            return Decision(True)
        if self._pronoun_kind(k) == "subject":
            return self.decisions.get(self.words[k].start, Decision(False))
        if self._is_patient_noun(k):
            return Decision(False)
        if self.words[k].key in ("mr", "ms", "mrs", "miss") and self._titled(k):
            return Decision(self.words[k + 1].text in self.third_titles)
        return None

    def _patient_mark(self, m: int) -> bool:
        """Whether word ``m`` is an object pronoun or a possessive of something the patient
        has ("into her apartment"), not of a person ("his father")."""
        kind = self._pronoun_kind(m)
        if kind == "object":
            return True
        return kind == "possessive" and not (m + 1 < len(self.words) and self._third[m + 1])

    def _previous_clause(self, i: int) -> range:
        """The words of the clause before word ``i - 1`` (a connective such as "and" or
        "because"), back to the previous punctuation, connective or subordinator."""
        k = i - 2
        while k > 0:
            between = self.text[self.words[k - 1].end : self.words[k].start]
            if vocab.CLAUSE_BREAK.search(between) or self.words[k - 1].key in vocab.SUBORDINATORS:
                break
            if vocab.CLAUSE_BREAK.fullmatch(self.words[k - 1].key):
                break
            k -= 1
        return range(max(k, 0), i - 1)

    def _third_subject(self, clause: range) -> bool:
        """Whether ``clause`` opens with a third party as its subject ("the technician left",
        "his son visits", "she ordered ..." for a "she" decided to be a third party)."""
        for m in list(clause)[:4]:
            if self._third[m]:
                return True
            if self._pronoun_kind(m) == "possessive" and m + 1 in clause and self._third[m + 1]:
                continue  # "his son visits weekly and he brings ..."
            if self._pronoun_kind(m) == "subject":
                return self.decisions.get(self.words[m].start, Decision(False)).third
            if self._pronoun_kind(m) is not None or self._is_patient_noun(m):
                return False
        return False

    def _after_third_clause(self, i: int) -> bool:
        """Whether subject pronoun ``i`` follows "and" after a clause whose subject is a third
        party ("the technician left and she will return"; "when the resident examined him, and
        he called security"; "he adjusted her insulin and he will see her")."""
        if i < 2 or self.words[i - 1].key != "and":
            return False
        return self._third_subject(self._previous_clause(i))

    def _after_care(self, i: int, state: str | None) -> bool:
        """Whether subject pronoun ``i`` says what became of the patient after a third party
        acted on them: a clause with a third party's subject and the patient as object, then
        "after/when/because ... <pronoun>" ("the officer brought him in after he was seen
        walking") or "and <pronoun>" with a state ("the nurse checked on her, and she was
        resting"); not a motive ("because she was worried"), which is the actor's; "but
        <pronoun>" after a third party's clause answers it ("recommended an MRI, but he
        refused")."""
        if i < 2:
            return False
        link = self.words[i - 1].key
        clause = self._previous_clause(i)
        if link == "but":
            return self._third_subject(clause)
        if link not in vocab.AFTER_CARE or (link == "and" and state != "weak"):
            return False
        if link == "because" and any(self.words[m].key in vocab.MOTIVES for m in clause):
            return self._third_subject(clause)  # "the resident was concerned because she ..."
        if not any(self._patient_mark(m) for m in clause):
            return False
        if any(w.key in vocab.MOTIVES for w in self.words[i + 1 : i + 4]) or self._object_follows(
            i
        ):
            return False
        return self._third_subject(clause)

    def _emphatic(self, i: int) -> bool:
        """Whether subject pronoun ``i``'s clause stresses its subject ("she herself had ...",
        "he has a history of seizures himself")."""
        for k in range(i + 1, len(self.words)):
            between = self.text[self.words[k - 1].end : self.words[k].start]
            if vocab.CLAUSE_BREAK.search(between) or vocab.CLAUSE_BREAK.fullmatch(
                self.words[k].key
            ):
                return False
            if self.words[k].key == self.reflexive:
                previous = self.words[k - 1].key
                return k == i + 1 or previous not in vocab.PREPOSITIONS | vocab.SELF_CARE | {"to"}
        return False

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
                if self.words[k].key in vocab.REPORTING | {"told", "tell", "tells"}
            ]
            j = verbs[-1] if verbs else j - 1
        elif j >= 1 and self.words[j - 1].key in ("told", "tell", "tells"):
            j -= 1  # "she told him he drinks ...": what the one who tells says
        if j < 0 or self.words[j].key not in vocab.REPORTING | {"told", "tell", "tells", "say"}:
            return self._continued_report(i)
        if self.words[j].key == "told" and j > 0 and self.words[j - 1].key in vocab.BE:
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
            return subject or Decision(False)  # firm when the subject's decision is
        if kind == "possessive" and following.endswith("ties") and subject is not None:
            return subject  # "when he was in his sixties"
        if kind == "possessive" and self._copular(i):
            # "she is her only caregiver": whoever "is" someone's caregiver is not that someone.
            if subject is not None:
                return Decision(not subject.third, firm=True)
            if i >= 2 and self._is_patient_noun(i - 2):
                return Decision(True, firm=True)  # "the patient is his caregiver"
        if kind == "possessive" and following in vocab.COUNSEL and third_before:
            return Decision(True, firm=True)  # "he trusts his oncologist and follows his advice"
        if kind == "possessive" and following in vocab.OPINIONS and third_before:
            # "evaluated him; in his opinion ...": the evaluator's.
            return Decision(bool(self._first_person()), firm=True)
        if kind == "object" and subject is not None and third_before:
            # A pronoun object is never its clause's subject: the other one of the two.
            return Decision(not subject.third, subject.third and subject.uncertain, subject.firm)
        return Decision(False, uncertain=third_before)

    def speaker(self, at: int) -> Decision | None:
        """Who speaks the quote holding offset ``at``: the subject of the verb of speech before
        its opening quote ("he said, '...") or the person right after it ("'...,' she said");
        None when there is no quote or no such person."""
        openings = list(vocab.OPENING_QUOTE.finditer(self.text, self.lo, at + 1))
        if not openings:
            return None
        opening = openings[-1].start()
        verbs = [j for j, w in enumerate(self.words) if w.end <= opening and w.key in vocab.SPEECH]
        if verbs and verbs[-1] > 0 and self.words[verbs[-1] - 1].key == "and":
            # "The patient thanked the nurse and said, '...'": the sentence's subject speaks.
            return self.subject_of(verbs[-1], first=True)
        if verbs:
            return self.subject_of(verbs[-1])
        closing = re.search(r"['\"’”](?=[\s,.;:]|$)", self.text[at : self.hi])
        if closing is None:
            return None
        after = [j for j, w in enumerate(self.words) if w.start > at + closing.end()][:2]
        for j in after:
            person = self._person_at(j)
            if person is not None:
                return person
        return None

    def _copular(self, i: int) -> bool:
        """Whether possessive ``i`` names what its clause's subject is ("he is her only
        caregiver", "she was his proxy"): a role or a part after "is/was his/her"."""
        if i == 0 or self.words[i - 1].key not in vocab.BE:
            return False
        for word in self.words[i + 1 : i + 4]:
            if word.key in ("only", "primary", "main", "sole", "usual", "regular", "legal"):
                continue
            return vocab.is_role(word.key) or word.key in vocab.PARTS
        return False

    def _back(self, i: int) -> tuple[str, int] | None:
        """Back from word ``i`` to its clause's start, the first of: ("subject", k) a subject
        pronoun, ("third", k) a third party, ("and", 0) the sentence's opening subject pronoun
        when an "and" or "but" comes right before ``i``'s verb; None past a subordinator."""
        for k in range(i - 1, -1, -1):
            key = self.words[k].key
            between = self.text[self.words[k].end : self.words[k + 1].start]
            if vocab.CLAUSE_BREAK.search(between) or vocab.CLAUSE_BREAK.fullmatch(key):
                opening = key in ("and", "but") and k + 2 == i and self._pronoun_kind(0)
                return ("and", 0) if opening == "subject" else None
            if self._pronoun_kind(k) == "subject":
                return "subject", k
            if self._third[k]:
                return "third", k
            if key in vocab.SUBORDINATORS - {"that", "who"}:
                return None
        return None

    def _clause_subject(self, i: int) -> Decision | None:
        """The decision for the subject pronoun of word ``i``'s clause, if it has one; for
        "..., and told her" (a verb right after "and"), the sentence's opening subject."""
        found = self._back(i)
        if found is not None and found[0] == "third":
            # "when the resident examined him": the resident's clause, so him is not the
            # resident; uncertain when someone else named before may be meant instead.
            return Decision(True, sum(self._third[:i]) > 1)
        return None if found is None else self.decisions.get(self.words[found[1]].start)
