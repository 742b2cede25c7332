"""Free-text diagnosis lists -> ICD-10-CM codes, by the project's rules or CliBench's.

For one model output, by the project's rules (the default protocol):

1. **Points**: :func:`~climb_vllm.icd_mapping.segmentation.split_points`.
2. **Refusals**: refusal and non-answer sentences are removed; an output left with no point is
   a refusal (:mod:`~climb_vllm.icd_mapping.refusals`), mapped to nothing.
3. **Codes in the text** (:func:`clean_point`): anything shaped like an ICD-10-CM code (with or
   without its dot) is validated against the release; valid codes are the point's prediction
   (method ``code``), invalid ones are recorded. CliBench's regex needed a dot and so missed
   "I10" and "E119".
4. **Text**: numbering, bullets, emphasis, code mentions and "ICD-10-CM code:" labels are removed;
   then the exact title after normalisation (lower case, punctuation and spacing dropped:
   ``exact``); else the nearest title by cosine similarity of all-MiniLM-L6-v2 embeddings
   (``embedding``). CliBench maps nothing below cosine 0 (``none``). There is no fuzzy
   string step: a near-exact title by edit distance swapped disease stages ("chronic kidney
   disease stage 4" -> stage 1), which the embedding keeps apart.

By CliBench's rules (``protocol="clibench"``): CliBench's segmentation and point cleaning
(:func:`~climb_vllm.icd_mapping.segmentation.clibench_points`), codes only in dotted
form, its exact key (lower case, spaces removed, punctuation kept), then the nearest title, and no
refusal screening.

Each output also records whether CliBench's scoring drops it (``dropped``): under CliBench's
rules, when no code is predicted; under the project's, when CliBench's segmentation finds no
point in it (CliBench maps every point it finds, so that is when it predicts nothing; the rare
point whose every title is at cosine below 0 is not re-checked).

Each distinct text is embedded once per call, so repeated diagnoses across variants and samples
cost nothing extra.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from climb_vllm.icd_mapping import refusals
from climb_vllm.icd_mapping.segmentation import (
    EMPHASIS,
    MARKER,
    MAX_OUTPUT_CHARS,
    clibench_point,
    clibench_points,
    split_points,
)
from climb_vllm.icd_mapping.senses import chunks
from climb_vllm.icd_mapping.text_match import Match, TextMatcher
from climb_vllm.resources.ontology import dotted_code

if TYPE_CHECKING:
    from climb_vllm.icd_mapping.title_index import TitleIndex
    from climb_vllm.resources.encoder import Encoder
    from climb_vllm.resources.ontology import Ontology

METHODS = ("code", "exact", "embedding", "negated", "none")
PROTOCOLS = ("default", "clibench")

# A code: letter, digit, digit-or-letter, then an optional extension with or without the dot.
_CODE = re.compile(
    r"(?<![A-Za-z0-9.])([A-Z][0-9][0-9A-Z](?:\.[0-9A-Z]{1,4}|[0-9A-Z]{1,4})?)(?![A-Za-z0-9])"
)
_LABEL = re.compile(
    r"\(?\s*(?:ICD[- ]?10(?:[- ]?CM)?|code)\s*(?:code)?\s*[:#-]?\s*\)?", re.IGNORECASE
)
_EMPTY_BRACKETS = re.compile(r"\(\s*[,;/]?\s*\)|\[\s*[,;/]?\s*\]")
_NORMAL = re.compile(r"[^a-z0-9]+")


def normalise(text: str) -> str:
    """The project's exact-match key of a title: lower case, only letters and digits."""
    return _NORMAL.sub("", text.lower())


def clibench_key(text: str) -> str:
    """CliBench's exact-match key: lower case with spaces removed (punctuation kept)."""
    return text.lower().replace(" ", "")


def clean_point(point: str, ontology: Ontology) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(text, valid codes, invalid codes) of one point, by the project's rules.

    The text has its list marker, emphasis, code mentions and code labels removed; codes are
    given in dotted form and validated against ``ontology``.
    """
    text = EMPHASIS.sub("", point)
    text = MARKER.sub("", text, count=1)
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


def clibench_clean(point: str, ontology: Ontology) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(text, valid codes, invalid codes) of one point, by CliBench's rules."""
    text, found = clibench_point(point)
    valid = [c for c in found if c in ontology]
    invalid = [c for c in found if c not in ontology]
    return text, tuple(dict.fromkeys(valid)), tuple(dict.fromkeys(invalid))


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
        qualifier / sense / by_context: see
            :class:`~climb_vllm.icd_mapping.text_match.Match` ("none", "" and False for
            points that name codes).
    """

    text: str
    codes: tuple[str, ...]
    method: str
    similarity: float
    invalid_codes: tuple[str, ...] = ()
    qualifier: str = "none"
    sense: str = ""
    by_context: bool = False


@dataclass(frozen=True)
class MappedOutput:
    """One output, read.

    Attributes:
        points: its diagnosis points, mapped.
        kind: "answer", "refusal", "non_answer" or "empty"
            (:data:`~climb_vllm.icd_mapping.refusals.KINDS`; always "answer" or
            "empty" under CliBench's rules, which do not screen refusals).
        dropped: CliBench's scoring leaves this output out (see the module docstring).
    """

    points: list[Point]
    kind: str
    dropped: bool

    @property
    def codes(self) -> list[str]:
        """The predicted codes, first mention first, each once."""
        return list(dict.fromkeys(c for p in self.points for c in p.codes))


class Mapper:
    """Maps texts to codes over one
    :class:`~climb_vllm.icd_mapping.title_index.TitleIndex`.

    Args:
        ontology: the release; codes in texts are validated against it.
        index: the titles that texts map to (every code of the release, or a subset).
        encoder: embeds the texts; must be the encoder the index was built with.
        protocol: "default" (the project's rules) or "clibench" (CliBench's).
    """

    def __init__(
        self, ontology: Ontology, index: TitleIndex, encoder: Encoder, protocol: str = "default"
    ) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {protocol!r}")
        self.ontology = ontology
        self.index = index
        self.encoder = encoder
        self.protocol = protocol
        self._key = clibench_key if protocol == "clibench" else normalise
        self._exact: dict[str, int] = {}
        self._matcher: TextMatcher | None = None
        if protocol == "clibench":
            if index.title_rows != len(index.codes):
                raise ValueError("CliBench's rules match titles only: index without names")
            # The first code of a title wins, as CliBench's list.index does.
            for row, title in enumerate(index.titles):
                self._exact.setdefault(self._key(title), row)
        else:
            self._matcher = TextMatcher(ontology, index, encoder, self._key)

    def map_texts(
        self, texts: Sequence[str], contexts: Sequence[tuple[str, ...]] | None = None
    ) -> list[Match]:
        """The match of each text; each distinct text is looked up and embedded once (by the
        project's rules, :mod:`~climb_vllm.icd_mapping.text_match`, or CliBench's:
        exact title, else the nearest title).

        Args:
            texts: the texts.
            contexts: the pieces of each text's context
                (:func:`~climb_vllm.icd_mapping.senses.chunks`), for the project's
                rules; CliBench's ignore them.
        """
        if self._matcher is not None:
            return self._matcher.match(texts, contexts)
        distinct = list(dict.fromkeys(texts))
        found: dict[str, Match] = {}
        to_embed: list[str] = []
        for text in distinct:
            key = self._key(text)
            if key in self._exact:
                found[text] = Match("exact", self.index.codes[self._exact[key]], 1.0)
            else:
                to_embed.append(text)  # CliBench embeds even an empty text
        if to_embed:
            sims, rows = self.index.search(self.encoder.encode(to_embed), 1)
            for text, sim, row in zip(to_embed, sims[:, 0], rows[:, 0]):
                if row < 0 or float(sim) < 0.0:
                    found[text] = Match("none", None, math.nan)
                else:
                    found[text] = Match("embedding", self.index.codes[int(row)], float(sim))
        return [found[t] for t in texts]

    def _read(self, output: str) -> tuple[str, list[tuple[str, tuple[str, ...], tuple[str, ...]]]]:
        """(kind, cleaned points) of one output under this mapper's protocol."""
        if self.protocol == "clibench":
            points = clibench_points(output)
            kind = "answer" if output.strip() else "empty"
            return kind, [clibench_clean(p, self.ontology) for p in points]
        kind, points = refusals.screen(output, split_points(output))
        return kind, [clean_point(p, self.ontology) for p in points]

    def _map_cleaned(
        self,
        cleaned: Sequence[tuple[str, tuple[str, ...], tuple[str, ...]]],
        contexts: Sequence[tuple[str, ...]] | None = None,
    ) -> list[Point]:
        """Cleaned points (text, valid codes, invalid codes) mapped, each with the pieces of
        its context or none; texts in one call."""
        pieces = list(contexts) if contexts is not None else [()] * len(cleaned)
        to_map = [(text, p) for (text, codes, _), p in zip(cleaned, pieces) if not codes]
        matches = iter(self.map_texts([t for t, _ in to_map], [p for _, p in to_map]))
        result: list[Point] = []
        for text, codes, invalid in cleaned:
            if codes:
                result.append(Point(text, codes, "code", 1.0, invalid))
                continue
            match = next(matches)
            chosen = (match.code,) if match.code else ()
            result.append(
                Point(
                    text,
                    chosen,
                    match.method,
                    match.similarity,
                    invalid,
                    match.qualifier,
                    match.sense,
                    match.by_context,
                )
            )
        return result

    def map_points(
        self, points: Sequence[str], contexts: Sequence[str | None] | None = None
    ) -> list[Point]:
        """Each text read as one diagnosis point (cleaned, codes in it validated, else mapped).

        Args:
            points: the texts.
            contexts: the free text each was written in (a note, or "Other diagnoses: ..."),
                or None: see :mod:`~climb_vllm.icd_mapping.senses`.
        """
        clean = clibench_clean if self.protocol == "clibench" else clean_point
        pieces = [chunks(c) for c in contexts] if contexts is not None else None
        return self._map_cleaned([clean(p, self.ontology) for p in points], pieces)

    def map_outputs(
        self, outputs: Sequence[str], notes: Sequence[str | None] | None = None
    ) -> list[MappedOutput]:
        """Every output read and mapped; texts of all outputs are mapped in one call.

        Args:
            outputs: the model outputs.
            notes: the note each output answers, or None. With notes, an abbreviation of
                several senses is read by the note and the output's other points
                (:mod:`~climb_vllm.icd_mapping.senses`).
        """
        # CliBench reads whole outputs; the project reads the first MAX_OUTPUT_CHARS.
        limit = None if self.protocol == "clibench" else MAX_OUTPUT_CHARS
        outputs = [(o or "")[:limit] for o in outputs]
        read = [self._read(o) for o in outputs]
        contexts: list[tuple[str, ...]] | None = None
        if notes is not None:
            if len(notes) != len(outputs):
                raise ValueError("one note per output")
            contexts = []
            for note, (_, points) in zip(notes, read):
                texts = [text for text, _, _ in points]
                for k in range(len(points)):
                    contexts.append(chunks(note, tuple(texts[:k] + texts[k + 1 :])))
        mapped = iter(self._map_cleaned([p for _, points in read for p in points], contexts))
        result: list[MappedOutput] = []
        for output, (kind, points) in zip(outputs, read):
            mine = [next(mapped) for _ in points]
            if self.protocol == "clibench":
                dropped = not any(p.codes for p in mine)
            else:
                dropped = not clibench_points(output)
            result.append(MappedOutput(mine, kind, dropped))
        return result
