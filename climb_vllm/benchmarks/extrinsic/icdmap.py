"""Free-text diagnosis lists -> ICD-10-CM codes, by CliBench's rules with stated repairs.

For one model output:

1. **Points** (:func:`split_points`). CliBench's segmentation: with blank lines, at most five of
   them mean "a preamble or a closing remark around one list" and more mean "one point per
   block"; otherwise one point per line, or per ``<br>``, or per inline ``1. ... 2. ...`` item.
   Repairs: CliBench keeps the second block whenever the text does not start with a list marker
   (so "Diagnoses:\\n1. ...\\n\\nNote: ..." lost the list); here the block with the most
   list-marker lines is kept (ties: the first). A one-line answer is one point (CliBench found
   none). Heading lines ("Diagnoses:") are not points.
2. **Codes in the text** (:func:`clean_point`): anything shaped like an ICD-10-CM code (with or
   without its dot) is validated against the release; valid codes are the point's prediction
   (method ``code``), invalid ones are recorded. CliBench's regex needed a dot and so missed
   "I10" and "E119".
3. **Text**: numbering, bullets, emphasis, code mentions and "ICD-10-CM code:" labels are removed;
   then the exact title after normalisation (lower case, punctuation and spacing dropped:
   ``exact``); else a near-exact title by rapidfuzz's ``ratio`` >= 90 among the 10 nearest titles
   by embedding (``fuzzy``; scanning all 95k titles costs ~7 ms a text, the neighbours hold any
   near-exact title in practice); else the nearest title by cosine similarity of
   all-MiniLM-L6-v2 embeddings (``embedding``). CliBench maps nothing below cosine 0 (``none``).

Each distinct text is embedded once per call, so repeated diagnoses across variants and samples
cost nothing extra.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from rapidfuzz import fuzz

from climb_vllm.ontology import dotted_code

if TYPE_CHECKING:
    from climb_vllm.benchmarks.extrinsic.title_index import Encoder, TitleIndex
    from climb_vllm.ontology import Ontology

METHODS = ("code", "exact", "fuzzy", "embedding", "none")
#: rapidfuzz ratio (0-100) from which a title counts as the same text with a slip.
FUZZY_CUTOFF = 90.0
#: nearest titles searched for a near-exact one.
NEIGHBOURS = 10
#: characters of one output that are parsed; the rest of an enormous output is ignored.
MAX_OUTPUT_CHARS = 20_000
#: points kept from one output.
MAX_POINTS = 200

_MARKER = re.compile(r"^\s*(?:\d{1,3}\s*[.)]|[-•*·▪–o]|\([a-zA-Z0-9]{1,3}\))\s+")
_INLINE_ITEMS = re.compile(r"\d+\.\s(.+?)(?=\d+\.\s|\Z)", re.DOTALL)
# A code: letter, digit, digit-or-letter, then an optional extension with or without the dot.
_CODE = re.compile(
    r"(?<![A-Za-z0-9.])([A-Z][0-9][0-9A-Z](?:\.[0-9A-Z]{1,4}|[0-9A-Z]{1,4})?)(?![A-Za-z0-9])"
)
_LABEL = re.compile(
    r"\(?\s*(?:ICD[- ]?10(?:[- ]?CM)?|code)\s*(?:code)?\s*[:#-]?\s*\)?", re.IGNORECASE
)
_EMPTY_BRACKETS = re.compile(r"\(\s*[,;/]?\s*\)|\[\s*[,;/]?\s*\]")
_EMPHASIS = re.compile(r"\*\*|__|`")
_NORMAL = re.compile(r"[^a-z0-9]+")


def normalise(text: str) -> str:
    """The exact-match key of a title: lower case, only letters and digits."""
    return _NORMAL.sub("", text.lower())


def _marked(line: str) -> bool:
    return bool(_MARKER.match(line))


def _heading(line: str) -> bool:
    stripped = _EMPHASIS.sub("", line).strip()
    return stripped.endswith(":") and not _marked(line) and not _CODE.search(stripped)


def split_points(text: str) -> list[str]:
    """The diagnosis points of one output (see the module docstring for the rules)."""
    text = text[:MAX_OUTPUT_CHARS].replace("\r\n", "\n").strip()
    if not text:
        return []
    if "\n\n" in text:
        blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
        if len(blocks) - 1 <= 5:
            marks = [sum(_marked(line) for line in b.split("\n")) for b in blocks]
            best = max(range(len(blocks)), key=lambda i: (marks[i], -i))
            if marks[best] == 0:
                # No list markers anywhere: CliBench's reading (first block if it is the whole
                # answer, else the block after a preamble).
                best = 0 if len(blocks) == 1 else 1
            points = blocks[best].split("\n")
        else:
            points = blocks
    elif "\n" in text:
        points = text.split("\n")
    elif "<br>" in text:
        points = text.split("<br>")
    else:
        items = _INLINE_ITEMS.findall(text)
        points = items if len(items) > 1 else [text]
    kept = [p.strip() for p in points if p.strip() and not _heading(p)]
    return kept[:MAX_POINTS]


def clean_point(point: str, ontology: Ontology) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(text, valid codes, invalid codes) of one point.

    The text has its list marker, emphasis, code mentions and code labels removed; codes are
    given in dotted form and validated against ``ontology``.
    """
    text = _EMPHASIS.sub("", point)
    text = _MARKER.sub("", text, count=1)
    found = [m.group(1) for m in _CODE.finditer(text)]
    valid: list[str] = []
    invalid: list[str] = []
    for raw in found:
        code = dotted_code(raw)
        (valid if code in ontology else invalid).append(code)
    # Only mentions that look like codes are removed; "B12" in "vitamin B12" stays text unless
    # it is a code of the release.
    for raw in found:
        if dotted_code(raw) in ontology or "." in raw:
            text = re.sub(rf"(?<![A-Za-z0-9.]){re.escape(raw)}(?![A-Za-z0-9])", " ", text)
    if found:
        text = _LABEL.sub(" ", text)
    text = _EMPTY_BRACKETS.sub(" ", text)
    text = re.sub(r"\s+", " ", text).strip(" -–:;,.")
    return text, tuple(dict.fromkeys(valid)), tuple(dict.fromkeys(invalid))


@dataclass(frozen=True)
class Match:
    """The mapping of one text.

    Attributes:
        method: "exact", "fuzzy", "embedding" or "none".
        code: the mapped code (None for "none").
        similarity: cosine similarity of the text to the mapped title (nan for "none"; 1.0 for
            exact matches, which are not embedded).
    """

    method: str
    code: str | None
    similarity: float


@dataclass(frozen=True)
class Point:
    """One diagnosis point of an output and what it maps to.

    Attributes:
        text: the cleaned text.
        codes: the predicted codes (the valid codes in the text, else the mapped title's code).
        method: one of :data:`METHODS`.
        similarity: cosine similarity of the text to the mapped title (1.0 for "code" and
            "exact"; nan for "none").
        invalid_codes: code-shaped strings that are not codes of the release.
    """

    text: str
    codes: tuple[str, ...]
    method: str
    similarity: float
    invalid_codes: tuple[str, ...] = ()


class Mapper:
    """Maps texts to codes over one
    :class:`~climb_vllm.benchmarks.extrinsic.title_index.TitleIndex`.

    Args:
        ontology: the release; codes in texts are validated against it.
        index: the titles that texts map to (every code of the release, or a subset).
        encoder: embeds the texts; must be the encoder the index was built with.
    """

    def __init__(self, ontology: Ontology, index: TitleIndex, encoder: Encoder) -> None:
        self.ontology = ontology
        self.index = index
        self.encoder = encoder
        self._exact: dict[str, int] = {}
        # The first code of a title wins, as CliBench's list.index does.
        for row, title in enumerate(index.titles):
            self._exact.setdefault(normalise(title), row)
        self._normal_titles = [normalise(t) for t in index.titles]

    def map_texts(self, texts: Sequence[str]) -> list[Match]:
        """The match of each text; each distinct text is looked up and embedded once."""
        distinct = list(dict.fromkeys(texts))
        found: dict[str, Match] = {}
        to_embed: list[str] = []
        for text in distinct:
            key = normalise(text)
            if not key:
                found[text] = Match("none", None, math.nan)
            elif key in self._exact:
                found[text] = Match("exact", self.index.codes[self._exact[key]], 1.0)
            else:
                to_embed.append(text)
        if to_embed:
            k = min(NEIGHBOURS, len(self.index.codes))
            sims, rows = self.index.search(self.encoder.encode(to_embed), k)
            for text, sim_row, index_row in zip(to_embed, sims, rows):
                found[text] = self._choose(text, sim_row, index_row)
        return [found[t] for t in texts]

    def _choose(
        self, text: str, sims: npt.NDArray[np.float32], rows: npt.NDArray[np.int64]
    ) -> Match:
        valid = rows >= 0
        sims, rows = sims[valid], rows[valid]
        if rows.size == 0 or float(sims[0]) < 0.0:
            return Match("none", None, math.nan)
        key = normalise(text)
        scores = [fuzz.ratio(key, self._normal_titles[r]) for r in rows]
        best = int(np.argmax(scores))
        if scores[best] >= FUZZY_CUTOFF:
            return Match("fuzzy", self.index.codes[int(rows[best])], float(sims[best]))
        return Match("embedding", self.index.codes[int(rows[0])], float(sims[0]))

    def map_outputs(self, outputs: Sequence[str]) -> list[list[Point]]:
        """The points of each output, mapped; texts of all outputs are mapped in one call."""
        cleaned = [[clean_point(p, self.ontology) for p in split_points(o or "")] for o in outputs]
        needs_text = [text for points in cleaned for text, codes, _ in points if not codes]
        matches = iter(self.map_texts(needs_text))
        result: list[list[Point]] = []
        for points in cleaned:
            mapped: list[Point] = []
            for text, codes, invalid in points:
                if codes:
                    mapped.append(Point(text, codes, "code", 1.0, invalid))
                    continue
                match = next(matches)
                chosen = (match.code,) if match.code else ()
                mapped.append(Point(text, chosen, match.method, match.similarity, invalid))
            result.append(mapped)
        return result
