"""Choosing an abbreviation's sense by the context it was written in.

An abbreviation with several senses in the inventory ("CAP": community acquired pneumonia or
prostate cancer; "MS": multiple sclerosis, mitral stenosis or mental status) gives one reading
per sense (:meth:`~climb_vllm.icd_mapping.abbreviations.Expander.expand_senses`).
Without context, the reading whose best name is the most similar wins. With context (the
clinical note the answer was written about, and the answer's other diagnoses), each reading is
scored by

    score = name similarity + WEIGHT x context similarity,

where the name similarity is the cosine similarity of the reading to the name it matches (1 for
an exact name) and the context similarity is the largest cosine similarity of the reading to
one piece of the context (:func:`chunks`: its sentences, clauses and list items). The context
thus moves the choice only where it favours one sense over another: when it says nothing about
any sense, every reading gains about the same and the names decide, as without context.

The counterfactual variants of one case share one context (the case's note as given, not the
rewritten one), so the sense chosen for a text never depends on the demographic change.
"""

from __future__ import annotations

import re

import numpy as np

#: The weight of the context similarity against the name similarity (chosen on the
#: development half of the abbreviations in context; see the performance page).
WEIGHT = 2.0
#: At most this many pieces of one context are used (the first ones).
MAX_CHUNKS = 96
#: Pieces shorter than this many characters say nothing.
MIN_CHUNK = 3

# Sentence ends, semicolons, line breaks and bullets split a context into pieces; a list
# number or dash opening a piece is dropped.
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])|[;\n]+|\s*[•·]\s*")
_MARKER = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*])\s+")


def chunks(context: str | None, others: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The pieces of a context.

    Args:
        context: the note (or any free text); None or "" for none.
        others: further pieces taken as they are (the answer's other diagnoses).
    """
    # The answer's other diagnoses first: a long note must not crowd them out.
    pieces = [o.strip() for o in others]
    pieces += [_MARKER.sub("", p).strip(" \t-–:,") for p in _SPLIT.split(context or "")]
    kept = [p for p in dict.fromkeys(pieces) if len(p) >= MIN_CHUNK]
    return tuple(kept[:MAX_CHUNKS])


def context_similarity(readings: np.ndarray, pieces: np.ndarray) -> np.ndarray:
    """The largest cosine similarity of each reading to one piece (0 with no pieces).

    Args:
        readings: unit vectors of the readings, (n, d).
        pieces: unit vectors of the context's pieces, (m, d).
    """
    if pieces.size == 0:
        return np.zeros(len(readings), dtype=np.float32)
    return np.asarray((readings @ pieces.T).max(axis=1), dtype=np.float32)


def choose(name_similarity: np.ndarray, context: np.ndarray, weight: float | None = None) -> int:
    """The index of the reading with the highest score (the first on ties).

    Args:
        name_similarity: each reading's similarity to the name it matches.
        context: each reading's :func:`context_similarity`.
        weight: the context's weight (default :data:`WEIGHT`).
    """
    return int(np.argmax(name_similarity + (WEIGHT if weight is None else weight) * context))
