"""The project's text -> code matching: qualifiers, abbreviations, every name of a code, and
leaf-aware codes.

For one diagnosis text (a point with no code in it):

1. **Qualifier** (:mod:`~climb_vllm.benchmarks.extrinsic.qualifiers`): a negated text maps to
   nothing (method ``negated``); a past, family or post-procedure text is searched as
   "personal history of X" (or an exact "old X"), "family history of X", "presence of X" /
   "acquired absence of X" / "X status" among the Z codes only; an uncertain one as X.
2. **Readings** (:mod:`~climb_vllm.benchmarks.extrinsic.abbreviations`): shorthand read and each
   sense of each abbreviation; the text as written is kept as the last reading. A reading that
   names a cancer or metastases of a site also gets ICD-10-CM's wording (the Alphabetic Index's
   "Cancer - see Neoplasm, malignant, by site"): "breast cancer" -> "malignant neoplasm of
   breast", "liver mets" -> "secondary malignant neoplasm of liver".
3. **Exact name**: the first reading whose key (lower case, letters and digits only) equals the
   key of a title or another name of a code (an inclusion term, an Includes note, either with
   or without its nonessential modifiers and "NOS") takes that code; titles come first, then in
   release order.
4. **Nearest name**: else every reading is embedded and the code of the most similar name
   across readings wins (nothing below cosine 0), among the names that fit the text
   (:func:`fits`, from the 32 nearest of each reading; the nearest when none fits): codes of the
   pregnancy (O) and newborn (P) chapters need a pregnancy or newborn word in the text, and
   external causes (V00-Y99) an accident word, as ICD-10-CM's chapter rules say; "personal /
   family history of" names need a past or family qualifier; a text that names one side (right
   or left) does not take a name of the other side.
5. **Leaf**: a non-billable header found by 3 or 4 is replaced by its default billable code
   (:meth:`~climb_vllm.resources.ontology.Ontology.default_leaf`); a header without one stays
   as it is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from climb_vllm.benchmarks.extrinsic import qualifiers
from climb_vllm.benchmarks.extrinsic.abbreviations import Expander, title_words
from climb_vllm.benchmarks.extrinsic.title_index import CANDIDATES

if TYPE_CHECKING:
    from climb_vllm.benchmarks.extrinsic.title_index import Encoder, TitleIndex
    from climb_vllm.resources.ontology import Ontology


_PREGNANCY = re.compile(
    r"pregnan|gestation|obstetric|deliver|labou?r\b|partum|puerper|trimester|eclampsia|"
    r"abortion|miscarriage|ectopic|placent|fetal|fetus|amniotic|uterine inertia|breech|"
    r"lactation|cesarean|caesarean|premature rupture|perineal laceration",
    re.IGNORECASE,
)
_NEWBORN = re.compile(r"newborn|neonat|perinatal|birth|preterm|prematur", re.IGNORECASE)
_EXTERNAL = re.compile(
    r"\bfall|\bfell\b|accident|collision|crash|exposure|struck|assault|\bbit(?:e|ten)\b|"
    r"sting|drown|fire\b|burn|poison|overdose|self-harm|suicide attempt|event",
    re.IGNORECASE,
)
_HISTORY_NAME = re.compile(r"^\s*(?:personal |family )?history of", re.IGNORECASE)
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


def fits(text: str, qualifier: str, code: str, name: str) -> bool:
    """Whether a code's name fits a text (the rules of step 4 in the module docstring).

    Args:
        text: the reading searched (shorthand read, so "R" is "right").
        qualifier: the text's qualifier.
        code / name: the candidate code and the name of it that matched.
    """
    if code[0] == "O" and not _PREGNANCY.search(text):
        return False
    if code[0] == "P" and not _NEWBORN.search(text):
        return False
    if code[0] in "VWXY" and not _EXTERNAL.search(text):
        return False
    if _HISTORY_NAME.match(name) and qualifier not in ("history", "family"):
        return False
    sides = {s for s in ("right", "left") if re.search(rf"\b{s}\b", text, re.IGNORECASE)}
    if len(sides) == 1:
        other = "left" if "right" in sides else "right"
        if re.search(rf"\b{other}\b", name, re.IGNORECASE):
            return False
    return True


@dataclass(frozen=True)
class Match:
    """The mapping of one text.

    Attributes:
        method: "exact", "embedding", "negated" or "none".
        code: the mapped code (None for "negated" and "none").
        similarity: cosine similarity of the text to the mapped name (nan for "negated" and
            "none"; 1.0 for exact matches, which are not embedded).
        qualifier: how the text qualifies its diagnosis
            (:data:`~climb_vllm.benchmarks.extrinsic.qualifiers.KINDS`; always "none" under
            CliBench's rules).
    """

    method: str
    code: str | None
    similarity: float
    qualifier: str = "none"


@dataclass
class _Plan:
    """What to look up for one text."""

    qualifier: str
    general: list[str] = field(default_factory=list)  # searched among every name
    within_z: list[str] = field(default_factory=list)  # searched among Z codes' names
    exact_only: list[str] = field(default_factory=list)  # count only as exact names


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
        self.expander = Expander(title_words(index.titles[: index.title_rows]))
        self.z_rows = np.array(
            [row for row, code in enumerate(index.codes) if code.startswith("Z")], dtype=np.int64
        )
        self._leaf: dict[str, str] = {}

    def _plan(self, text: str) -> _Plan:
        read = qualifiers.read(text)
        if read.kind == "negated":
            return _Plan("negated")
        readings = self.expander.expand(read.core)
        readings += [w for r in readings for w in icd_wordings(r)]
        if read.core not in readings:
            readings.append(read.core)
        within_z, exact_only = qualifiers.queries(read, readings)
        if within_z or exact_only:
            return _Plan(read.kind, within_z=within_z, exact_only=exact_only)
        return _Plan(read.kind, general=readings)

    def _accept(self, reading: str, qualifier: str) -> Callable[[int], bool]:
        """Whether a row's name fits ``reading`` (:func:`fits`)."""
        return lambda row: fits(reading, qualifier, self.index.codes[row], self.index.titles[row])

    def leaf(self, code: str) -> str:
        """``code``, or its default billable code when it is a header that has one."""
        if code not in self._leaf:
            self._leaf[code] = self.ontology.default_leaf(code) or code
        return self._leaf[code]

    def match(self, texts: Sequence[str]) -> list[Match]:
        """The match of each text; each distinct reading is embedded once per call."""
        distinct = list(dict.fromkeys(texts))
        plans: dict[str, _Plan] = {}
        found: dict[str, Match] = {}
        for text in distinct:
            if not self.key(text):
                found[text] = Match("none", None, math.nan)
                continue
            plan = self._plan(text)
            if plan.qualifier == "negated":
                found[text] = Match("negated", None, math.nan, "negated")
                continue
            for reading in [*plan.exact_only, *plan.within_z, *plan.general]:
                row = self.exact.get(self.key(reading))
                if row is not None:
                    code = self.leaf(self.index.codes[row])
                    found[text] = Match("exact", code, 1.0, plan.qualifier)
                    break
            else:
                plans[text] = plan
        general = list(dict.fromkeys(r for p in plans.values() for r in p.general))
        within_z = list(dict.fromkeys(r for p in plans.values() for r in p.within_z))
        best: dict[tuple[bool, str], tuple[float, int]] = {}
        qualifier_of = {r: p.qualifier for p in plans.values() for r in p.general}
        if general:
            # The nearest name that fits the reading among its CANDIDATES nearest, else the nearest.
            accepts = [self._accept(r, qualifier_of[r]) for r in general]
            answers = self.index.nearest_accepted(self.encoder.encode(general), accepts, CANDIDATES)
            for reading, answer in zip(general, answers):
                best[(False, reading)] = answer
        if within_z:
            sims_z, rows_z = self.index.search_rows(self.encoder.encode(within_z), self.z_rows)
            for reading, sim, row in zip(within_z, sims_z, rows_z):
                best[(True, reading)] = (float(sim), int(row))
        for text, plan in plans.items():
            candidates = [best[(False, r)] for r in plan.general]
            candidates += [best[(True, r)] for r in plan.within_z]
            # The first reading wins ties (max keeps the first maximum).
            sim, row = max(candidates, key=lambda c: c[0]) if candidates else (-math.inf, -1)
            if row < 0 or sim < 0.0:
                found[text] = Match("none", None, math.nan, plan.qualifier)
            else:
                code = self.leaf(self.index.codes[row])
                found[text] = Match("embedding", code, sim, plan.qualifier)
        return [found[t] for t in texts]
