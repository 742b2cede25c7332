"""Mirrored excerpts for the referee's training: every word that carries a sex swapped, so
that each labelled pronoun is also seen with the other sex ("His brother drove him in; he was
worried" gives "Her sister drove her in; she was worried", the labels unchanged).

The labelled third-party sets hold about half their excerpts in each direction, but a pattern
written once is seen with one sex only; mirroring doubles the examples the referee is tuned
on (NOTES.md, "A fine-tuned referee", measures what it gains). Only the training data
is mirrored: the rewrite never calls this.
"""

from __future__ import annotations

import re

from climb_vllm.rewrite.possessive import his_or_him

#: Male word -> female word; "his" and "him" both become "her", and "her" goes back by the
#: rewrite's own reading of it (:func:`his_or_him`).
MALE_TO_FEMALE = {
    "he": "she",
    "him": "her",
    "his": "her",
    "himself": "herself",
    "mr": "ms",
    "sir": "ma'am",
    "mister": "miss",
    "man": "woman",
    "men": "women",
    "gentleman": "lady",
    "gentlemen": "ladies",
    "boy": "girl",
    "father": "mother",
    "dad": "mom",
    "brother": "sister",
    "brothers": "sisters",
    "son": "daughter",
    "sons": "daughters",
    "stepson": "stepdaughter",
    "uncle": "aunt",
    "nephew": "niece",
    "grandfather": "grandmother",
    "grandpa": "grandma",
    "grandson": "granddaughter",
    "husband": "wife",
    "boyfriend": "girlfriend",
    "stepfather": "stepmother",
    "widower": "widow",
    "landlord": "landlady",
}
FEMALE_TO_MALE = {f: m for m, f in MALE_TO_FEMALE.items() if m not in ("his", "him")}
FEMALE_TO_MALE["mrs"] = "mr"

_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


def mirror(text: str) -> str:
    """``text`` with every word of :data:`MALE_TO_FEMALE` and :data:`FEMALE_TO_MALE` swapped
    for its counterpart, keeping a capital first letter."""
    parts: list[str] = []
    cursor = 0
    for match in _WORD.finditer(text):
        word = match.group()
        key = word.lower()
        if key == "her":
            other = his_or_him(text, match.start(), match.end())
        elif key in MALE_TO_FEMALE:
            other = MALE_TO_FEMALE[key]
        elif key in FEMALE_TO_MALE:
            other = FEMALE_TO_MALE[key]
        else:
            continue
        parts += [text[cursor : match.start()], other.capitalize() if word[0].isupper() else other]
        cursor = match.end()
    parts.append(text[cursor:])
    return "".join(parts)
