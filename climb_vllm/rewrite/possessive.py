"""Whether a female -> male "her" becomes "his" (a possessive) or "him" (an object).

"her" is an object before punctuation, a preposition, particle or conjunction ("about", "on",
"up", "until"), a determiner ("gave her a dose"), after a verb of seeing before a verb ("saw
her fall", "watched her feed the baby", "found her slurring"), or after a verb that takes two
objects or a bare infinitive ("gave", "told", "let", "helped") unless the next word is one a
person has (a relative, a body part, a clinician: "gave her husband"); "on her back", "at her
home", "visited her home", "her back pain", "her blood pressure", "found her glucose", "found
her speech slurred" are possessive, and "her" before a verb of report ("who delivered her noted
...") or a dose, distance or score ("walked her 50 meters", "scored her 22 of 30") an object.

A well-kept part-of-speech tagger would tell the two apart in general, but none installs
offline from the package registry with its model from the authors (the spaCy and NLTK models
are downloaded from their own hosts; the registry copies are third-party re-uploads), so these
rules are measured on the labelled sentences in ``tests/golden/counterfactual/`` instead
(NOTES.md).
"""

from __future__ import annotations

import re

from climb_vllm.rewrite.referent_words import PATIENT_VERBS

# After "her": the next word makes it an object.
_OBJECT_NEXT = frozenset(
    "about to for on in at with from that and or but again today yesterday tonight tomorrow "
    "back home up down out off over as if when while since because into onto through this "
    "well now immediately twice once daily regularly so too than of by via after before "
    "overnight every each hourly nightly weekly here there until unless although though "
    "during throughout across around toward towards under beside beforehand afterward "
    "afterwards closer nearer further farther regarding concerning including despite against "
    "without within like per "
    "a an the some any another these those no".split()
)

# Before "her": verbs of seeing, after which "her" + a verb is an object ("saw her fall", "found
# her slurring her words").
_PERCEPTION = frozenset(
    "saw see sees seen watched watch heard hear hears noticed notice found find finds felt "
    "observed witnessed caught kept left".split()
)

# Verbs that a perception verb's object goes on to do, never a noun she has ("watched her
# feed the baby", "saw her walk in").
_BARE_VERBS = frozenset(
    "feed walk stand eat drink swallow breathe try take use leave go come get climb sit wash "
    "inject struggle limp stumble grimace wince".split()
)

# Verbs whose "her home" is the place ("visited her home"), where "sent her home" is an object.
_VISIT_VERBS = frozenset("visited visit visits visiting inspected searched cleaned".split())

# After "her" and a number: a dose or a distance walked, so "her" is the object ("transfused
# her 2 units", "walked her 50 meters").
_DOSE_UNITS = frozenset(
    "mg g mcg ug units unit u l ml cc meq mmol tabs tablets tablet doses dose puffs liters "
    "litres bags amps meters metres m feet ft yards steps laps".split()
)

# Before "her" and a number: a score given, so "her" is the object ("scored her 22 of 30").
_SCORE_VERBS = frozenset("scored score scores rated rate rates graded grade grades".split())

# Words in -ly that are adjectives, so "her" before them is possessive ("her elderly mother").
_LY_ADJECTIVES = frozenset(
    "elderly early only family likely lovely friendly weekly monthly yearly nightly "
    "lonely ugly holy silly curly".split()
)

# Before "her": a verb of placing, and after it a state she is left in, so "her" is the object
# ("laid her flat", "sat her upright", "kept her warm").
_PLACING = frozenset(
    "laid lay lays laying positioned propped sat sit kept keep keeps left rolled turned "
    "nursed".split()
)
_STATES = frozenset(
    "flat upright supine prone still warm comfortable calm safe awake npo semi sideways".split()
)

# How often, after "her": an adverb ("seen her monthly since") unless a noun follows ("her
# monthly injection").
_HOW_OFTEN = frozenset("daily weekly monthly yearly nightly fortnightly".split())

# Before "her": a verb that takes two objects or a bare infinitive.
_OBJECT_VERBS = frozenset(
    "gave give gives giving given offered offer offers told tell tells telling showed show "
    "shows taught teach handed hand brought bring brings asked ask asks let lets made make "
    "helped help helps bought sent send owe promised advised instructed reassured "
    "encouraged allowed allow informed counseled counselled thanked found find finds".split()
)

# After "found her": a measurement or a function, so "her" is possessive ("found her glucose
# to be 52", "found her speech slurred"), where "found her" is otherwise an object ("found her
# confused").
_MEASURES = frozenset(
    "glucose sugar sugars potassium sodium hemoglobin haemoglobin labs pressure pulse "
    "temperature saturation sats weight inr creatinine lactate troponin ferritin platelets "
    "count speech gait voice vision hearing memory mood balance reflexes breathing rhythm "
    "heart lungs lung wound urine stool".split()
)

# After "her": a word a person has, so "her" is possessive even after such a verb.
_POSSESSED = frozenset(
    "husband wife son sons daughter daughters mother father parents family children child kids "
    "sister brother partner friend friends pcp doctor physician cardiologist oncologist surgeon "
    "nurse caregiver own arm arms leg legs chest abdomen head back hip knee hand hands foot "
    "feet eyes eye skin home house name insurance medications meds mouth face".split()
)

# Nouns in -ing, so "her" before them is possessive even after "saw" ("noticed her swelling").
_ING_NOUNS = frozenset(
    "morning evening swelling dressing dressings wedding building clothing bedding thing "
    "things ring sibling siblings stocking stockings filling lining".split()
)

_PREPOSITIONS = frozenset(
    "on in at to from of with into onto over under behind near for about".split()
)

# After "her": a verb that reports, so "her" is the object of a clause before it ("the
# obstetrician who delivered her noted heavy bleeding"); never a possessed thing.
_REPORTED_NEXT = frozenset(
    "said says noted notes thought thinks believes believed wrote writes decided agreed "
    "explained added".split()
)

# "her blood pressure" is possessive; "gave her blood" is not.
_BLOOD_NEXT = re.compile(
    r"[ \t]+blood[ \t]+(?:pressures?|sugars?|glucose|counts?|cultures?|work|tests?|levels?)\b",
    re.IGNORECASE,
)

_BACK_NEXT = re.compile(
    r"[ \t]+back[ \t]+(?:pain|surgery|injury|spasms?|brace|problems?)\b", re.IGNORECASE
)


def next_word(text: str, end: int) -> str | None:
    """The word after ``end`` (lower case), or None before punctuation or the end."""
    following = re.match(r"[ \t]+([A-Za-z0-9/]+)", text[end : end + 40])
    return following.group(1).lower() if following else None


def previous_word(text: str, start: int) -> str | None:
    """The word before ``start`` (lower case), or None after punctuation or the start."""
    before = re.search(r"([A-Za-z]+)\s+$", text[max(0, start - 40) : start])
    return before.group(1).lower() if before else None


def his_or_him(text: str, start: int, end: int) -> str:
    """ "his" or "him" for the female -> male rewrite of the "her" at ``text[start:end]``
    (the module note says how it is read)."""
    following = next_word(text, end)
    # The text before "her", read from a short window (the whole prefix only when the window
    # is blank), so that a long note is not copied for every "her".
    before = text[max(0, start - 40) : start].rstrip() or text[:start].rstrip()
    if not before or before[-1] in ".;:!?(":
        return "his"  # a sentence does not open with an object: "Her home nurse says ..."
    if following == "home" and re.match(
        r"[ \t]+home[ \t]+(?:health|med|oxygen|o2|dose|care|nurse|aide|visit)",
        text[end : end + 20],
        re.I,
    ):
        return "his"  # "her home health nurse", "her home medications"
    previous = previous_word(text, start)
    if following in ("back", "home") and previous in _PREPOSITIONS:
        return "his"  # "on her back", "at her home", "for her back pain"
    if following == "home" and previous in _VISIT_VERBS:
        return "his"  # "visited her home" (but "sent her home")
    if _BACK_NEXT.match(text, end) or _BLOOD_NEXT.match(text, end):
        return "his"  # "examined her back pain", "found her blood pressure elevated"
    if following is None or following in _OBJECT_NEXT or following in _REPORTED_NEXT:
        return "him"
    if previous in _PERCEPTION and (
        (following.endswith("ing") and following not in _ING_NOUNS)
        or following in PATIENT_VERBS
        or following in _BARE_VERBS
    ):
        return "him"  # "saw her grimacing", "watched her fall"
    if following in ("last", "next") and re.match(
        r"[ \t]+\w+[ \t]+(?:week|night|month|year|time|visit)\b", text[end : end + 30]
    ):
        return "him"  # "saw her last week" (but "her last dose")
    if previous in _PLACING and following in _STATES:
        return "him"  # "laid her flat", "kept her warm"
    if following in _HOW_OFTEN:
        after = re.match(r"[ \t]+[A-Za-z0-9/]+", text[end : end + 40])
        if after and next_word(text, end + after.end()) in (None, *_OBJECT_NEXT):
            return "him"  # "has seen her monthly since the admission", "sees her weekly."
    if following.endswith("ly") and following not in _LY_ADJECTIVES:
        return "him"  # an adverb: "examined her carefully"
    if following.isdigit():
        unit = re.match(r"[ \t]+\d+[ \t]*([A-Za-z]+)", text[end : end + 40])
        if (unit and unit.group(1).lower() in _DOSE_UNITS) or previous in _SCORE_VERBS:
            return "him"
    if following in _POSSESSED or (
        previous in ("found", "find", "finds") and following in _MEASURES
    ):
        return "his"
    if previous in _OBJECT_VERBS:
        return "him"
    return "his"
