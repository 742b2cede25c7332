"""Qualified diagnoses: negated, uncertain, past, family or post-procedure points.

A diagnosis list may say that a diagnosis is absent ("no evidence of PE"), uncertain ("r/o
PE"), past ("h/o PE"), a relative's ("FHx of colon cancer") or a status after a procedure ("s/p
CABG"). The mapper must not read any of these silently as the diagnosis itself. The rules
(documented in the README, "Mapping diagnoses to codes"):

========  ===================================================  ==================================
kind      written as                                           mapped to
========  ===================================================  ==================================
negated   no, not, denies, negative for, without (evidence     nothing (method ``negated``)
          of), absence of, free of, ruled out; "... ruled out",
          "... excluded", "not consistent with ..."
uncertain r/o, rule out, possible, probable, likely,           the diagnosis, marked uncertain:
          suspected, suspicion of, concern for, presumed,      ICD-10-CM's inpatient guideline
          questionable, "?" before or after                    (Section II.H) codes an uncertain
                                                               diagnosis as if established
history   h/o, hx (of), history of, PMH (of), past medical      "personal history of X" among
          history of, prior, previous, former                  the Z codes, or an exact "old X"
                                                               title (old myocardial infarction)
family    FHx (of), FH of, family history of                   "family history of X" among the
                                                               Z codes
status    s/p, status post                                     "presence of X", "acquired
                                                               absence of X" or "X status" among
                                                               the Z codes
========  ===================================================  ==================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("none", "negated", "uncertain", "history", "family", "status")


def _prefix(words: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*(?:{words})(?:\s*[:\-]\s*|\s+|(?<=[/?])\s*)", re.IGNORECASE)


_NEGATED_PREFIX = _prefix(
    r"(?:not\s+consistent\s+with|inconsistent\s+with|no|not|denies|denied|negative\s+for|"
    r"neg\s+for|without|w/o|absence\s+of|free\s+of|ruled\s+out)"
    r"(?:\s+(?:evidence|signs?|sign|findings?|symptoms?)\s+(?:of|for))?"
    r"(?:\s+(?:acute|active|current))?"
)
_NEGATED_SUFFIX = re.compile(
    r"\s*[-,:(]?\s*(?:(?:was|has\s+been|is|been)\s+)?(?:ruled\s+out|excluded|negative|"
    r"unlikely|not\s+(?:seen|found|present|identified))\s*\)?\s*\.?$",
    re.IGNORECASE,
)
_UNCERTAIN_PREFIX = _prefix(
    r"r/o|rule\s+out|ruling\s+out|to\s+rule\s+out|possible|possibly|probable|probably|likely|"
    r"suspected|suspect|suspicion\s+(?:of|for)|concern\s+(?:for|of)|concerning\s+for|"
    r"presumed|presumptive|questionable|query|\?"
)
_UNCERTAIN_SUFFIX = re.compile(
    r"\s*(?:\?+|\((?:suspected|possible|probable|likely|r/o|rule\s+out)\))\s*$", re.IGNORECASE
)
_FAMILY_PREFIX = _prefix(r"f/?hx?(?:\s+of)?|fh\s+of|family\s+(?:history|hx)(?:\s+of)?")
_HISTORY_PREFIX = _prefix(
    r"h/o|hx(?:\s+of)?|history\s+of|pmh(?:x)?(?:\s+of)?|past\s+medical\s+history\s+of|"
    r"personal\s+history\s+of|prior|previous|remote|former"
)
_STATUS_PREFIX = _prefix(r"s/p|status\s+post|status-post")


@dataclass(frozen=True)
class Qualified:
    """One diagnosis text with its qualifier read off.

    Attributes:
        kind: one of :data:`KINDS`.
        core: the diagnosis without the qualifying words.
    """

    kind: str
    core: str


def read(text: str) -> Qualified:
    """The qualifier of ``text`` (the first rule of the module table that applies)."""
    for pattern in (_NEGATED_PREFIX, _NEGATED_SUFFIX):
        stripped = pattern.sub("", text, count=1)
        if stripped != text and stripped.strip():
            return Qualified("negated", stripped.strip())
    for kind, pattern in (
        ("family", _FAMILY_PREFIX),
        ("history", _HISTORY_PREFIX),
        ("status", _STATUS_PREFIX),
        ("uncertain", _UNCERTAIN_PREFIX),
        ("uncertain", _UNCERTAIN_SUFFIX),
    ):
        stripped = pattern.sub("", text, count=1)
        if stripped != text and stripped.strip():
            return Qualified(kind, stripped.strip())
    return Qualified("none", text)


def queries(qualified: Qualified, readings: list[str]) -> tuple[list[str], list[str]]:
    """(texts to search among Z codes, texts that count only as exact titles) for a past,
    family or status point, made from the readings of its core; ``([], [])`` otherwise."""
    if qualified.kind == "history":
        return [f"personal history of {r}" for r in readings], [f"old {r}" for r in readings]
    if qualified.kind == "family":
        return [f"family history of {r}" for r in readings], []
    if qualified.kind == "status":
        forms = ("presence of {}", "acquired absence of {}", "{} status")
        return [form.format(r) for r in readings for form in forms], []
    return [], []
