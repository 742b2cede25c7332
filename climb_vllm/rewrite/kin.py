"""Kin words: the pairs the rewrite swaps, and when a kin word is the patient's own part ("She
is the mother of two", "He is the son of a man with hemochromatosis")."""

from __future__ import annotations

import re

from climb_vllm.rewrite import referent_words

# The patient's own part as a parent ("She is the mother of two" -> "He is the father of two").
PARENTS = {
    "mother": "father",
    "father": "mother",
    "mom": "dad",
    "dad": "mom",
    "grandmother": "grandfather",
    "grandfather": "grandmother",
}
# A relative's kin word that is the patient ("the patient's son ... his father"), as the other
# sex's.
KIN_SWAP = {
    **PARENTS,
    "mum": "dad",
    "son": "daughter",
    "daughter": "son",
    "husband": "wife",
    "wife": "husband",
    "brother": "sister",
    "sister": "brother",
}
# Kin words of the two sexes beyond those above, as (male, female).
KIN_PAIRS = (
    ("uncle", "aunt"),
    ("nephew", "niece"),
    ("grandson", "granddaughter"),
    ("boyfriend", "girlfriend"),
    ("stepfather", "stepmother"),
    ("stepson", "stepdaughter"),
    ("grandpa", "grandma"),
    ("brothers", "sisters"),
    ("sons", "daughters"),
)
PARENT_BEFORE = re.compile(
    r"\b(?:he|she|patient|pt)\s+(?:is|was)\s+(?:a|the)\s+(?:[a-z-]+\s+)?$", re.IGNORECASE
)
KIN_SWAP.update(KIN_PAIRS)
KIN_SWAP.update((female, male) for male, female in KIN_PAIRS)
# The kin words of each sex that the rewrite can swap.
KIN_MALE_ALL = frozenset(w for w in referent_words.KIN_MALE if w in KIN_SWAP)
KIN_FEMALE_ALL = frozenset(w for w in referent_words.KIN_FEMALE if w in KIN_SWAP)
KIN_MALE = frozenset(
    "father dad brother son grandfather uncle nephew husband boyfriend stepfather".split()
)
KIN_FEMALE = frozenset(
    "mother mom sister daughter grandmother aunt niece wife girlfriend stepmother".split()
)
KIN_ADJECTIVES = frozenset(
    "maternal paternal older younger elder oldest youngest late twin".split()
)


def patient_parent(text: str, start: int, end: int, key: str, to: str) -> bool:
    """Whether the kin word ``key`` at ``start`` is the patient's own part ("she is the
    mother of two", "He is the son of a man with hemochromatosis"), of the sex the rewrite
    changes from."""
    if (key in KIN_MALE_ALL) != (to == "female"):
        return False
    return bool(
        PARENT_BEFORE.search(text[max(0, start - 60) : start])
        and re.match(r"\s+(?:of|to)\b", text[end : end + 5])
    )
