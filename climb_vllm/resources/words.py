"""The words of a diagnosis text or a code's name that say what the condition is."""

from __future__ import annotations

import functools
import re

_PLAIN_WORD = re.compile(r"[a-z]+")

#: Words that say nothing about what a condition is.
FUNCTION_WORDS = frozenset(
    "a an and as at by due for from in into of on or other specified the to unspecified with "
    "without nos".split()
)


@functools.lru_cache(maxsize=1 << 16)
def plain_words(text: str) -> frozenset[str]:
    """The lower-case words of a text or name, letters only (cached: the same names recur
    across texts)."""
    return frozenset(_PLAIN_WORD.findall(text.lower()))


def singular(word: str) -> str:
    """A plural's singular, by its ending: "valves" -> valve, "arteries" -> artery; words in
    "ss", "is" and "us" are kept ("abscess", "arthritis", "fetus"). Texts and names go through
    the same rule, so a word it gets wrong ("caries" -> cary) still matches itself."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "is", "us")):
        return word[:-1]
    return word


def content_words(text: str) -> frozenset[str]:
    """A text's words that name something, lower case, singular (:func:`singular`):
    "urethral valves" -> urethral, valve."""
    return frozenset(singular(w) for w in plain_words(text) if w not in FUNCTION_WORDS)
