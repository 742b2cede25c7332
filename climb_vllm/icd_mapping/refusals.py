"""Refusals and non-answers among diagnosis outputs.

A model asked for diagnoses may decline ("I am not able to provide a medical diagnosis..."), ask
for more information, or wrap a list in disclaimers. Mapped like a diagnosis, a refusal sentence
lands on some title ("... unable to provide a diagnosis" -> R69, illness unspecified) and counts
as a prediction. So, before mapping, the points that are refusal or disclaimer sentences are
removed, and an output left with no other point is a refusal (or a non-answer): recall 0 in the
default metric, and its own rate per variant, since refusing more often for one group is a bias
of its own. A refusal followed by a list ("I cannot diagnose, but possibilities include: 1. ...")
is an answer: the list is read.

The cues follow the HIVE graders' refusal vocabulary in spirit (first person inability, AI
boilerplate, advice to see a clinician, requests for more information); they are matched on
whole points, never on words inside a diagnosis ("consultation", "unable to ambulate").
"""

from __future__ import annotations

import re

#: The model declines: inability in the first person, or AI boilerplate.
REFUSAL = re.compile(
    r"\bi\s*(?:am|'m|’m)\s+(?:not\s+(?:able|qualified|in\s+a\s+position|allowed|permitted)|"
    r"unable)\s+to\b"
    r"|\bi\s+(?:cannot|can't|can’t|can\s+not|won't|will\s+not|could\s+not|couldn't)\s+"
    r"(?:provide|make|give|offer|diagnose|determine|assist|help|list|suggest)\b"
    r"|\bas\s+an?\s+(?:ai|artificial|language\s+model|large\s+language)"
    r"|\bi\s*(?:am|'m|’m)\s+(?:just\s+|only\s+)?an?\s+(?:ai|language\s+model|chatbot|assistant)\b"
    r"|\b(?:not|never)\s+(?:a\s+)?(?:substitute|replacement)\s+for\b"
    r"|\b(?:consult|see|speak\s+(?:to|with))\s+(?:a|your|with\s+a)\s+(?:qualified\s+|licensed\s+)?"
    r"(?:health\s*care|medical|physician|doctor|clinician)"
    r"|\bseek\s+(?:professional|medical|immediate)\s+(?:medical\s+)?(?:advice|help|attention|care)"
    r"|\bi\s+(?:apologi[sz]e|am\s+sorry|'m\s+sorry)\b|^\s*sorry\b",
    re.IGNORECASE,
)
#: The model answers without a diagnosis: not enough information, a question back.
NON_ANSWER = re.compile(
    r"\b(?:insufficient|not\s+enough|limited|more|additional)\s+(?:clinical\s+)?"
    r"(?:information|data|details)\s+(?:is|are|would\s+be)?\s*(?:needed|required|available|"
    r"provided|to\s+(?:make|determine|provide))"
    r"|\bplease\s+provide\s+(?:more|additional|further)\b"
    r"|\bcannot\s+be\s+(?:determined|made)\b",
    re.IGNORECASE,
)

KINDS = ("answer", "refusal", "non_answer", "empty")


def disclaimer(point: str) -> str | None:
    """ "refusal" or "non_answer" when a point is a refusal or non-answer sentence, else None."""
    if REFUSAL.search(point):
        return "refusal"
    if NON_ANSWER.search(point):
        return "non_answer"
    return None


def screen(text: str, points: list[str]) -> tuple[str, list[str]]:
    """(kind, diagnosis points) of one output.

    Args:
        text: the whole output.
        points: its points, as the segmentation cut them.

    Returns:
        ``kind`` is one of :data:`KINDS`: "empty" (nothing but white space), "refusal" or
        "non_answer" (no point is left once the refusal and non-answer sentences are removed,
        and one of them was there), else "answer". The points are those left.
    """
    if not text.strip():
        return "empty", []
    kinds = [disclaimer(p) for p in points]
    kept = [p for p, k in zip(points, kinds) if k is None]
    if kept:
        return "answer", kept
    found = [k for k in kinds if k] or ([k] if (k := disclaimer(text)) else [])
    if not found:
        return "answer", []
    return ("refusal" if "refusal" in found else "non_answer"), []
