"""What the words after a subject pronoun say about who it is: a state or an act only a
patient has or does, an act of care, or a part a third party plays
(:mod:`~climb_vllm.rewrite.referents` applies them in order); and, read in the
text, whether a pronoun opens an act of care after someone named or a report after a
companion (:mod:`~climb_vllm.rewrite.sex_rewrite` applies these)."""

from __future__ import annotations

from climb_vllm.rewrite.mentions import sentence_bounds, words
from climb_vllm.rewrite.referee import LOOKBACK, names_someone
from climb_vllm.rewrite.referent_words import (
    AUXILIARY,
    BE,
    CARE_VERBS,
    DEGREE,
    DETERMINERS,
    FEEL,
    HAVE,
    KIN_FEMALE,
    KIN_MALE,
    PARTS,
    PASSIVE_CARE,
    PATIENT_STATES,
    PATIENT_VERBS,
    SELF_CARE,
)


def state_after(rest: list[str], reflexive: str, asked: bool) -> str | None:
    """What the clause after a subject pronoun says: "strong" for a verb only a patient
    does ("tolerated", "needs", "had missed", "felt dizzy"), "weak" for a state ("has gout",
    "was febrile", "has been falling"), else None.

    Args:
        rest: the lower-case words after the pronoun (a few suffice).
        reflexive: "himself" or "herself", the patient's reflexive in the text.
        asked: whether something was asked of someone earlier in the sentence, so that
            "she agreed" answers it.
    """
    if any(a in SELF_CARE and b == reflexive for a, b in zip(rest, rest[1:])):
        return "strong"  # "she can dress herself", "he hurt himself"
    k = 0
    while k < len(rest) and rest[k] in AUXILIARY:
        k += 1
    if k >= len(rest):
        return None
    verb = rest[k]
    if rest[0] in ("can", "cannot", "may") and verb not in CARE_VERBS:
        return "weak"  # what the patient can or may do: "says she can climb stairs"
    following = rest[k + 1] if k + 1 < len(rest) else ""
    if verb in ("agree", "agrees", "agreed", "consent", "consents", "consented"):
        if following in ("", "to") and asked:
            return "weak"  # an answer to what was asked: "asked her to ..., and she agreed"
    if verb in HAVE:
        k += 1
        while k < len(rest) and rest[k] in AUXILIARY:
            k += 1
        following = rest[k] if k < len(rest) else ""
        if following == "to":
            return None  # "had to suction her"
        if following == "been":
            return None if is_part(rest[k + 1 :]) else "weak"  # "has been falling"
        if following.endswith(("ed", "en")) or following in ("seen", "done", "made", "told"):
            return "strong" if following in PATIENT_VERBS else None  # "had missed"
        return "weak"  # possession: "has gout", "had a stroke", "has had ..."
    if verb in BE:
        if following in ("told", "informed", "advised", "counseled", "counselled"):
            return "strong"  # "she was told she may carry ..."
        if following in PASSIVE_CARE:
            return "strong"  # "she was referred for counselling"
        state = next((w for w in rest[k + 1 :] if w not in DEGREE), "")
        if state in PATIENT_STATES:
            return "strong"  # "he was hypotensive", "she was more drowsy"
        return None if is_part(rest[k + 1 :]) else "weak"
    if verb in ("smell", "smells", "smelled", "smelt") and following == "of":
        return "strong"  # "he smelled of alcohol"
    if verb in ("walk", "walks", "walked") and following not in ("him", "her"):
        return "strong"  # "she walked 200 feet" (but "he walked him to the bathroom")
    if verb in FEEL:
        return None if following in DETERMINERS or following in ("that", "it") else "strong"
    return "strong" if verb in PATIENT_VERBS else None


def is_part(rest: list[str]) -> bool:
    """Whether "is/was ..." followed by ``rest`` names a part a third party plays ("is the
    HCP")."""
    return any(w in PARTS for w in rest[:4])


def main_verb(rest: list[str]) -> str:
    """The first of ``rest`` (the words after a subject pronoun) that is not an auxiliary or a
    form of "have" ("will call" -> "call"; "" when there is none)."""
    k = 0
    while k < len(rest) and rest[k] in AUXILIARY | HAVE:
        k += 1
    return rest[k] if k < len(rest) else ""


def is_act_of_care(rest: list[str]) -> bool:
    """Whether the main verb of ``rest`` (the words after a subject pronoun) is an act of care
    ("ordered", "will examine", "had reviewed"), not in the passive ("was treated"); "added"
    only before a determiner ("she added a second agent", not "she added that ..."), "weighed"
    only before someone or something weighed ("he weighed the baby", not "he weighed 80 kg")."""
    verb = main_verb(rest)
    if verb in ("add", "adds", "added"):
        k = rest.index(verb)
        return k + 1 < len(rest) and rest[k + 1] in DETERMINERS - {"that", "this"}
    if verb in ("weigh", "weighs", "weighed"):
        # "She weighed the baby", "he weighed him", not "she weighed 50 kg" or "her baby".
        k = rest.index(verb)
        return k + 1 < len(rest) and rest[k + 1] in ("the", "a", "an", "him", "them")
    return verb in CARE_VERBS


def opens_act_of_care(text: str, start: int, end: int) -> bool:
    """Whether the pronoun ``text[start:end]`` opens an act of care ("He removed it")."""
    _, hi = sentence_bounds(text, start)
    return is_act_of_care([w.key for w in words(text, end, hi)[:7]])


def acts_after_someone(text: str, start: int, end: int) -> bool:
    """Whether the subject pronoun ``text[start:end]``, with no one named before it in its
    sentence, opens an act of care ("He recommends aspirin") after a sentence of the
    :data:`~climb_vllm.rewrite.referee.LOOKBACK` before it that names someone
    ("Dr. Marsh reviewed the MRI. He sees no infarct. He recommends aspirin"): a patient does
    not order, examine or recommend in a note, so the pronoun is the one named."""
    if not opens_act_of_care(text, start, end):
        return False
    lo, _ = sentence_bounds(text, start)
    first = lo
    for _ in range(LOOKBACK):
        if first == 0:
            break
        first, _ = sentence_bounds(text, max(0, first - 2))
    return first < lo and names_someone(text, first, lo)


# What someone does who comes with the patient and then gives the history ("His son drove him
# in", "She came with her wife", "His nephew translated").
_COMPANY = frozenset(
    "brought brings drove driven drives accompanied accompanies escorted came comes translated "
    "translates interpreted interprets found".split()
)
# Who comes with a patient, beyond kin: clinicians are left out, since "He came to see Dr. Lee.
# He says he ..." is the patient's own report.
_COMPANIONS = (
    KIN_MALE
    | KIN_FEMALE
    | frozenset(
        "partner spouse friend roommate flatmate housemate neighbor neighbour carer caregiver "
        "guardian fiance fiancee colleague coworker".split()
    )
)
# Verbs of a report on someone else ("he says he has", "she noticed his face"); "asks" and
# "requests" are left out, since a patient asks for himself.
_REPORTS = frozenset(
    "says said reports reported states stated thinks thought notes noted noticed notices "
    "explains explained tells told mentions mentioned describes described confirms confirmed "
    "believes believed".split()
)


def reports_after_companion(text: str, start: int, end: int) -> bool:
    """Whether the subject pronoun ``text[start:end]``, opening its sentence, reports on someone
    of its own sex ("He says he has been confused", "She noticed her face had dropped") right
    after a sentence in which a relative or companion, not of the other sex, came with,
    brought or found the patient ("His son drove him in."): the companion gives the history,
    as in every such pair of the labelled excerpts."""
    lo, hi = sentence_bounds(text, start)
    if lo == 0 or words(text, lo, start):
        return False
    pronoun = text[start:end].lower()
    same = ("he", "his", "him") if pronoun == "he" else ("she", "her")
    rest = [w.key for w in words(text, end, hi)[:7]]
    k = 0
    while k < len(rest) and rest[k] in AUXILIARY:
        k += 1
    if k < len(rest) and rest[k] in BE and rest[k + 1 : k + 2] in (["worried"], ["concerned"]):
        k += 1
    elif k >= len(rest) or rest[k] not in _REPORTS:
        return False
    after = [w for w in rest[k + 1 : k + 4] if w != "that"][:2]
    if not any(w in same for w in after):
        return False
    back, _ = sentence_bounds(text, lo - 2)
    before = [w.key for w in words(text, back, lo)]
    other_sex = KIN_FEMALE if pronoun == "he" else KIN_MALE
    companion = any(w in _COMPANIONS and w not in other_sex for w in before)
    return companion and any(w in _COMPANY for w in before)
