"""Misspelt words in diagnosis texts, read as the nearest word of the release's names.

Clinicians and models misspell ("pnuemonia", "hypertention", "siezure"); a misspelt word is a
word the embedding model has rarely seen, so the nearest name of a misspelt text is often far
off ("psoraisis" -> elevated PSA). A word is read as misspelt when all of these hold:

- it has at least :data:`MIN_LENGTH` letters and no digit;
- it is not a word of the vocabulary (the words of every name of every code, the abbreviation
  inventory's senses and the function words), ignoring case;
- it is not an abbreviation (the caller checks).

Its correction is the vocabulary word at the smallest optimal-string-alignment distance (an
insertion, deletion, substitution or swap of two neighbouring letters each count 1), at most
1 for words of up to 7 letters and 2 for longer ones, with the same first letter (misspellings
rarely change it, and requiring it keeps unrelated words apart); among equals, the word used
most often in the names, then the first in alphabetical order. A word with no such neighbour
is kept as written. The distance is :mod:`rapidfuzz`'s ``OSA``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from rapidfuzz import process
from rapidfuzz.distance import OSA

#: Shorter words are never corrected (too many neighbours).
MIN_LENGTH = 5
#: Words longer than this may be two edits away from their correction.
LONG_WORD = 7

_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_LETTERS = re.compile(r"[a-z]+")


class Speller:
    """Corrects misspelt words against a vocabulary.

    Args:
        names: texts whose words make the vocabulary, counted for ties (every name of every
            code).
        known: further words that are never corrected (lower case), such as the
            abbreviation inventory's senses and function words.
    """

    def __init__(self, names: Iterable[str], known: Iterable[str] = ()) -> None:
        counts: Counter[str] = Counter()
        for name in names:
            counts.update(_LETTERS.findall(name.lower()))
        self.counts = counts
        self.known = frozenset(counts) | frozenset(w.lower() for w in known)
        by_letter: dict[str, list[str]] = {}
        for word in sorted(counts):
            if len(word) >= MIN_LENGTH - 1:
                by_letter.setdefault(word[0], []).append(word)
        self._by_letter = by_letter
        self._cache: dict[str, str | None] = {}

    def correction(self, word: str) -> str | None:
        """The correction of one word (lower case), or None when it is kept as written."""
        lower = word.lower()
        if len(lower) < MIN_LENGTH or not lower.isalpha() or lower in self.known:
            return None
        if lower not in self._cache:
            limit = 1 if len(lower) <= LONG_WORD else 2
            found = process.extract(
                lower,
                self._by_letter.get(lower[0], []),
                scorer=OSA.distance,
                score_cutoff=limit,
                limit=None,
            )
            ranked = sorted(found, key=lambda m: (m[1], -self.counts[m[0]], m[0]))
            self._cache[lower] = ranked[0][0] if ranked else None
        return self._cache[lower]

    def correct(self, text: str, skip: frozenset[str] = frozenset()) -> str:
        """``text`` with each misspelt word replaced by its correction.

        Args:
            text: the text.
            skip: words left as written whatever they are (the text's abbreviations).
        """

        def replace(match: re.Match[str]) -> str:
            word = match.group(0)
            if word in skip:
                return word
            return self.correction(word) or word

        return _WORD.sub(replace, text)
