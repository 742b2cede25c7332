"""The project's text -> code matching: qualifiers, abbreviations, every name of a code, and
leaf-aware codes.

For one diagnosis text (a point with no code in it):

1. **Qualifier** (:mod:`~climb_vllm.icd_mapping.qualifiers`): a negated text maps to
   nothing (method ``negated``); a past, family or post-procedure text is searched as
   "personal history of X" (or an exact "old X"), "family history of X", "presence of X" /
   "acquired absence of X" / "X status" among the Z codes only (a family point among the
   family history codes Z80-Z84, the others among the rest); an uncertain one as X.
2. **Readings**: misspelt words corrected (:mod:`~climb_vllm.icd_mapping.spelling`),
   then shorthand read and each sense of each abbreviation
   (:mod:`~climb_vllm.icd_mapping.abbreviations`); the text as written is kept as the
   last reading. With a context, the senses are chosen by it
   (:mod:`~climb_vllm.icd_mapping.senses`). A reading that
   names a cancer or metastases of a site also gets ICD-10-CM's wording (the Alphabetic Index's
   "Cancer - see Neoplasm, malignant, by site"): "breast cancer" -> "malignant neoplasm of
   breast", "liver mets" -> "secondary malignant neoplasm of liver".
3. **Exact name**: the first reading whose key (lower case, letters and digits only) equals the
   key of a title or another name of a code (an inclusion term, an Includes note, either with
   or without its nonessential modifiers and "NOS") takes that code; titles come first, then in
   release order; last, a title "X, unspecified [organism, ear, ...]" or "Unspecified X" also
   names X. A text with an abbreviation of several senses and a context skips this step: its
   exact names compete in step 4 at similarity 1.
4. **Nearest name**: else every reading is embedded and the code of the most similar name
   across readings wins (nothing below cosine 0), among the names that fit the text
   (:func:`~climb_vllm.icd_mapping.name_fit.fits`, from the 32 nearest of each reading;
   the nearest when none fits): codes of the pregnancy (O) and newborn (P) chapters need a
   pregnancy or newborn word in the text, and external causes (V00-Y99) an accident word, as
   ICD-10-CM's chapter rules say; a name saying "congenital" needs the text to say so or to be
   about a newborn, unless no name without the word holds all the text's words; "personal /
   family history of" names need a past or family qualifier; a text that names one side (right
   or left) takes neither a name of the other side nor one that leaves the side open; a title
   "Other X" needs "other" in the text where the release also has "Unspecified X"; the
   qualifier, contradiction, diabetes, hypertension, stage, severity and encounter rules of
   ``fits``. With a context, the sense is chosen by
   :func:`~climb_vllm.icd_mapping.senses.choose` among the readings that chose one.
5. **Leaf**: a non-billable header found by 3 or 4 is replaced by its default billable code
   (:meth:`~climb_vllm.resources.ontology.Ontology.default_leaf`, with the tabular list's
   "NOS" inclusion terms), on the side the text names in any reading, each level's child
   chosen first by the words the reading says that tell the children apart; a header without
   one stays as it is. Then a code found by the search (not by an exact name, nor among the Z
   codes) yields to a sibling that says strictly more of those words and fits the reading
   (:meth:`~climb_vllm.resources.ontology.Ontology.refine`: "dislocation of the hip" takes
   the dislocation, not the subluxation; "intentional overdose" the intentional poisoning).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from climb_vllm.icd_mapping import qualifiers, senses
from climb_vllm.icd_mapping.abbreviations import (
    Expander,
    diagnosis_senses,
    title_words,
)
from climb_vllm.icd_mapping.name_fit import (
    congenital,
    fits,
    named_side,
    plain_postings,
)
from climb_vllm.icd_mapping.spelling import Speller
from climb_vllm.icd_mapping.title_index import CANDIDATES
from climb_vllm.resources.icd_terms import nos_codes
from climb_vllm.resources.words import content_words

if TYPE_CHECKING:
    from climb_vllm.icd_mapping.title_index import TitleIndex
    from climb_vllm.resources.encoder import Encoder
    from climb_vllm.resources.ontology import Ontology


# "Unspecified X" and "X, unspecified [organism / ear / site ...]" name X itself.
_UNSPECIFIED_NAME = re.compile(r"^unspecified\s+|,\s*unspecified(?:\s+[a-z]+)?$", re.IGNORECASE)
_OTHER_NAME = re.compile(r"^other\s+(.+)$", re.IGNORECASE)
_OTHER_WORD = re.compile(r"\bother\b", re.IGNORECASE)
_CANCER = (
    (
        re.compile(r"^(?P<site>.+?)\s+(?:cancer|carcinoma|malignancy)$", re.IGNORECASE),
        "malignant neoplasm of {site}",
    ),
    (
        re.compile(
            r"^(?:cancer|carcinoma|malignancy)\s+of\s+(?:the\s+)?(?P<site>.+)$", re.IGNORECASE
        ),
        "malignant neoplasm of {site}",
    ),
    (
        re.compile(
            r"^(?P<site>.+?)\s+(?:metastases|metastasis|metastatic disease)$", re.IGNORECASE
        ),
        "secondary malignant neoplasm of {site}",
    ),
    (
        re.compile(
            r"^(?:metastases|metastasis|metastatic disease)\s+(?:to|of|in)\s+(?:the\s+)?"
            r"(?P<site>.+)$",
            re.IGNORECASE,
        ),
        "secondary malignant neoplasm of {site}",
    ),
)


def icd_wordings(reading: str) -> list[str]:
    """ICD-10-CM's wording of a cancer or metastases reading (see the module docstring)."""
    return [
        form.format(site=m.group("site"))
        for pattern, form in _CANCER
        if (m := pattern.match(reading.strip()))
    ]


@dataclass(frozen=True)
class Match:
    """The mapping of one text.

    Attributes:
        method: "exact", "embedding", "negated" or "none".
        code: the mapped code (None for "negated" and "none").
        similarity: cosine similarity of the text to the mapped name (nan for "negated" and
            "none"; 1.0 for exact matches, which are not embedded).
        qualifier: how the text qualifies its diagnosis
            (:data:`~climb_vllm.icd_mapping.qualifiers.KINDS`; always "none" under
            CliBench's rules).
        sense: the sense chosen for each abbreviation of several senses in the text that
            decided the match ("CAP: community acquired pneumonia", several joined by "; "),
            "" when none did.
        by_context: whether the text's context chose among its senses
            (:mod:`~climb_vllm.icd_mapping.senses`).
    """

    method: str
    code: str | None
    similarity: float
    qualifier: str = "none"
    sense: str = ""
    by_context: bool = False


@dataclass
class _Plan:
    """What to look up for one text."""

    qualifier: str
    general: list[str] = field(default_factory=list)  # searched among every name
    within_z: list[str] = field(default_factory=list)  # searched among Z codes' names
    exact_only: list[str] = field(default_factory=list)  # count only as exact names
    senses: dict[str, str] = field(default_factory=dict)  # reading -> the senses it chose

    @property
    def ambiguous(self) -> bool:
        """Whether the general readings chose among an abbreviation's senses."""
        return len({self.senses.get(r, "") for r in self.general}) > 1

    @property
    def sides(self) -> str:
        """Every reading, joined: the side a header descends to is the one the text names in
        any reading ("R ankle sprain" names the right side only once "R" is read)."""
        return " ".join([*self.exact_only, *self.within_z, *self.general])


def _z_rows(codes: Sequence[str]) -> dict[str, npt.NDArray[np.int64]]:
    """The index rows of Z codes: ``family`` (family history, Z80-Z84) and ``other``."""
    family = [code.startswith("Z8") and code[2] in "01234" for code in codes]
    return {
        kind: np.array(
            [
                row
                for row, code in enumerate(codes)
                if code.startswith("Z") and family[row] == (kind == "family")
            ],
            dtype=np.int64,
        )
        for kind in ("family", "other")
    }


class TextMatcher:
    """Matches diagnosis texts by the module's rules.

    Args:
        ontology: the release (for default leaves).
        index: the names to match, built with ``names=True`` for the full vocabulary.
        encoder: the encoder the index was built with.
        key: the exact-match key function.
    """

    def __init__(
        self, ontology: Ontology, index: TitleIndex, encoder: Encoder, key: Callable[[str], str]
    ) -> None:
        self.key = key
        self.ontology = ontology
        self.index = index
        self.encoder = encoder
        self.exact: dict[str, int] = {}
        for row, name in enumerate(index.titles):
            self.exact.setdefault(self.key(name), row)
        # A title's "unspecified" is what a text that says nothing more means: "gastritis" is
        # "Gastritis, unspecified". Real names keep precedence (added after all of them).
        for row, name in enumerate(index.titles[: index.title_rows]):
            bare = _UNSPECIFIED_NAME.sub("", name)
            if bare != name and self.key(bare):
                self.exact.setdefault(self.key(bare), row)
        self._leaf: dict[tuple[str, str | None, str, str, str], str] = {}
        self.nos = nos_codes(ontology)
        # An abbreviation's diagnosis sense names its code ("acute coronary syndrome" is I24.9,
        # which no title says), after every name of the release, unless that name is a header
        # without a default ("postpartum hemorrhage" is O72, whose children all say more).
        title_row: dict[str, int] = {}
        for row, code in enumerate(index.codes[: index.title_rows]):
            title_row.setdefault(code, row)
        for pairs in diagnosis_senses().values():
            for sense, code in pairs:
                said = self.key(sense)
                if code not in title_row or not said:
                    continue
                named = self.exact.get(said)
                if named is None or not ontology.is_billable(self.leaf(index.codes[named])):
                    self.exact[said] = title_row[code]
        self.expander = Expander(title_words(index.titles[: index.title_rows]))
        self.speller = Speller(index.titles, self.expander.common_words)
        # "Other X" is X specified otherwise: a text that says only X takes "Unspecified X"
        # (or "X, unspecified") where the release has that name, so "Other X" needs "other".
        titles = index.titles[: index.title_rows]
        self.other_rows = frozenset(
            row
            for row, name in enumerate(titles)
            if (rest := _OTHER_NAME.match(name))
            and (
                self._is_title(f"unspecified {rest.group(1)}")
                or self._is_title(f"{rest.group(1)}, unspecified")
            )
        )
        self.title_of = {code: titles[row] for code, row in title_row.items()}
        # Content word -> rows of the names that do not say congenital; built when first needed.
        self._plain_postings: dict[str, npt.NDArray[np.int32]] | None = None
        # Family history is Z80-Z84 and nothing else is: a family point searches those rows,
        # a personal history or status point the other Z codes.
        self.z_rows = _z_rows(index.codes)

    def _is_title(self, name: str) -> bool:
        """Whether ``name`` is a title of the index (by key)."""
        row = self.exact.get(self.key(name))
        return (
            row is not None
            and row < self.index.title_rows
            and (self.key(self.index.titles[row]) == self.key(name))
        )

    def _plan(self, text: str) -> _Plan:
        read = qualifiers.read(text)
        if read.kind == "negated":
            return _Plan("negated")
        abbreviations = frozenset(
            w for w in re.findall(r"[A-Za-z]+", read.core) if self.expander.readings(w)
        )
        core = self.speller.correct(read.core, skip=abbreviations)
        expanded = self.expander.expand_senses(core)
        senses = {reading: "; ".join(chosen) for reading, chosen in expanded}
        for reading, chosen in expanded:
            for wording in icd_wordings(reading):
                senses.setdefault(wording, "; ".join(chosen))
        readings = list(senses)
        if read.core not in readings:
            readings.append(read.core)
        within_z, exact_only = qualifiers.queries(read, readings)
        if within_z or exact_only:
            return _Plan(read.kind, within_z=within_z, exact_only=exact_only, senses=senses)
        return _Plan(read.kind, general=readings, senses=senses)

    def _accept(self, reading: str, qualifier: str) -> Callable[[int], bool]:
        """Whether a row's name fits ``reading`` (:func:`fits`)."""
        says_other = bool(_OTHER_WORD.search(reading))
        inborn: list[bool] = []  # decided once, the first time a congenital name comes near

        def accept(row: int) -> bool:
            if row in self.other_rows and not says_other:
                return False
            code, name = self.index.codes[row], self.index.titles[row]
            if not inborn and congenital(name):
                inborn.append(not self._said_plainly(reading))
            return fits(
                reading,
                qualifier,
                code,
                name,
                self.title_of.get(code, ""),
                bool(inborn and inborn[0]),
            )

        return accept

    def _said_plainly(self, reading: str) -> bool:
        """Whether some name that does not say congenital holds every content word of
        ``reading`` (:func:`~climb_vllm.resources.words.content_words`); True
        for a reading without content words."""
        words = content_words(reading)
        if not words:
            return True
        if self._plain_postings is None:
            self._plain_postings = plain_postings(self.index.titles)
        plain = self._plain_postings
        rows: npt.NDArray[np.int32] | None = None
        for word in sorted(words, key=lambda w: len(plain.get(w, ()))):
            found = plain.get(word)
            if found is None:
                return False
            rows = found if rows is None else np.intersect1d(rows, found, assume_unique=True)
            if not rows.size:
                return False
        return True

    def leaf(
        self,
        code: str,
        text: str = "",
        reading: str = "",
        qualifier: str = "",
        name: str = "",
    ) -> str:
        """``code``, or its default billable code when it is a header that has one, on the
        side ``text`` names when it names one.

        With the ``reading`` that found ``code`` (and its ``qualifier``), each level's child is
        chosen by the words the reading says, and so is then the code's sibling, among those
        whose names fit the reading (:func:`fits`;
        :meth:`~climb_vllm.resources.ontology.Ontology.refine`); the words of the ``name``
        that found ``code``, when it is not its title, count as the code's own.
        """
        side = named_side(text)
        key = (code, side, reading, qualifier, name)
        if key not in self._leaf:
            said = content_words(reading) if reading else frozenset()
            leaf = self.ontology.default_leaf(code, side, self.nos, said) or code

            def fit(sibling: str) -> bool:
                title = self.title_of.get(sibling, "")
                return fits(reading, qualifier, sibling, title, title)

            named = content_words(name) if name else frozenset()
            self._leaf[key] = self.ontology.refine(leaf, side, self.nos, said, fit, named)
        return self._leaf[key]

    def match(
        self, texts: Sequence[str], contexts: Sequence[tuple[str, ...]] | None = None
    ) -> list[Match]:
        """The match of each text; each distinct reading is embedded once per call.

        Args:
            texts: the diagnosis texts.
            contexts: for each text, the pieces of the context it was written in
                (:func:`~climb_vllm.icd_mapping.senses.chunks`); a text with an
                abbreviation of several senses chooses among them by its context
                (:mod:`~climb_vllm.icd_mapping.senses`). None: no context.
        """
        pieces_of = list(contexts) if contexts is not None else [()] * len(texts)
        if len(pieces_of) != len(texts):
            raise ValueError("one context per text")
        plans: dict[str, _Plan] = {}
        keys: list[tuple[str, tuple[str, ...]]] = []
        for text, pieces in zip(texts, pieces_of):
            if text not in plans:
                plans[text] = self._plan(text) if self.key(text) else _Plan("none")
            # Only a text whose senses differ is matched once per context.
            keys.append((text, pieces if pieces and plans[text].ambiguous else ()))
        found: dict[tuple[str, tuple[str, ...]], Match] = {}
        pending: list[tuple[str, tuple[str, ...]]] = []
        for key in dict.fromkeys(keys):
            text, pieces = key
            plan = plans[text]
            if not self.key(text):
                found[key] = Match("none", None, math.nan)
            elif plan.qualifier == "negated":
                found[key] = Match("negated", None, math.nan, "negated")
            elif not pieces and (exact := self._exact_match(plan)) is not None:
                found[key] = exact
            else:
                pending.append(key)
        general = list(
            dict.fromkeys(
                r
                for text, pieces in pending
                for r in plans[text].general
                if not (pieces and self.key(r) in self.exact)
            )
        )
        within_z = list(dict.fromkeys(r for text, _ in pending for r in plans[text].within_z))
        best: dict[tuple[bool, str], tuple[float, int]] = {}
        qualifier_of = {r: plans[t].qualifier for t, _ in pending for r in plans[t].general}
        if general:
            # The nearest name that fits the reading among its CANDIDATES nearest, else the nearest.
            accepts = [self._accept(r, qualifier_of[r]) for r in general]
            answers = self.index.nearest_accepted(self.encoder.encode(general), accepts, CANDIDATES)
            for reading, answer in zip(general, answers):
                best[(False, reading)] = answer
        for reading in {r for t, p in pending if p for r in plans[t].general} - set(general):
            best[(False, reading)] = (1.0, self.exact[self.key(reading)])
        family_of = {
            r: plans[t].qualifier == "family" for t, _ in pending for r in plans[t].within_z
        }
        for kind in ("family", "other"):
            readings = [r for r in within_z if family_of[r] == (kind == "family")]
            if readings:
                sims_z, rows_z = self.index.search_rows(
                    self.encoder.encode(readings), self.z_rows[kind]
                )
                for reading, sim, row in zip(readings, sims_z, rows_z):
                    best[(True, reading)] = (float(sim), int(row))
        by_context = self._by_context([k for k in pending if k[1]], plans, best)
        for key in pending:
            plan = plans[key[0]]
            candidates = [(best[(False, r)], r) for r in plan.general]
            candidates += [(best[(True, r)], r) for r in plan.within_z]
            if key in by_context:
                (sim, row), reading = by_context[key]
            elif candidates:
                # The first reading wins ties (max keeps the first maximum).
                (sim, row), reading = max(candidates, key=lambda c: c[0][0])
            else:
                (sim, row), reading = (-math.inf, -1), ""
            if row < 0 or sim < 0.0:
                found[key] = Match("none", None, math.nan, plan.qualifier)
            else:
                # A Z-code reading ("personal history of X") adds words of its own: the
                # search among Z codes decides alone.
                said = reading if reading in plan.general else ""
                found_code, name = self.index.codes[row], self.index.titles[row]
                if name == self.title_of.get(found_code):
                    name = ""
                code = self.leaf(found_code, plan.sides, said, plan.qualifier, name)
                method = "exact" if sim == 1.0 and self.key(reading) in self.exact else "embedding"
                found[key] = Match(
                    method,
                    code,
                    sim,
                    plan.qualifier,
                    plan.senses.get(reading, ""),
                    key in by_context,
                )
        return [found[k] for k in keys]

    def _exact_match(self, plan: _Plan) -> Match | None:
        """The match of the first reading that is exactly a name, if any."""
        for reading in [*plan.exact_only, *plan.within_z, *plan.general]:
            row = self.exact.get(self.key(reading))
            if row is not None:
                code = self.leaf(self.index.codes[row], plan.sides)
                return Match("exact", code, 1.0, plan.qualifier, plan.senses.get(reading, ""))
        return None

    def _by_context(
        self,
        keys: list[tuple[str, tuple[str, ...]]],
        plans: dict[str, _Plan],
        best: dict[tuple[bool, str], tuple[float, int]],
    ) -> dict[tuple[str, tuple[str, ...]], tuple[tuple[float, int], str]]:
        """For each (text, context pieces): the best (similarity, row) and its reading by
        :func:`~climb_vllm.icd_mapping.senses.choose`."""
        if not keys:
            return {}
        readings = list(dict.fromkeys(r for text, _ in keys for r in plans[text].general))
        pieces = list(dict.fromkeys(p for _, context in keys for p in context))
        reading_vectors = self.encoder.encode(readings)
        piece_vectors = self.encoder.encode(pieces)
        reading_row = {r: k for k, r in enumerate(readings)}
        piece_row = {p: k for k, p in enumerate(pieces)}
        chosen: dict[tuple[str, tuple[str, ...]], tuple[tuple[float, int], str]] = {}
        for key in keys:
            text, context = key
            # Only readings that chose a sense compete: the text as written is as ambiguous
            # as the abbreviation ("PCP" is a name of F16, phencyclidine, in the release).
            mine = [r for r in plans[text].general if plans[text].senses.get(r)]
            answers = [best[(False, r)] for r in mine]
            near = senses.context_similarity(
                reading_vectors[[reading_row[r] for r in mine]],
                piece_vectors[[piece_row[p] for p in context]],
            )
            pick = senses.choose(np.array([sim for sim, _ in answers]), near)
            chosen[key] = (answers[pick], mine[pick])
        return chosen
