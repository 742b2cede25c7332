"""Cutting a model's free-text diagnosis list into points, by the project's rules and by
CliBench's.

**The project's rules** (:func:`split_points`, the default protocol). With blank lines, at most
five of them mean "a list with a preamble, a closing remark or other sections around it" and more
mean "one point per block"; otherwise one point per line, or per ``<br>``, or per inline
``1. ... 2. ...`` item; a one-line answer is one point. Departures from CliBench, each for a
measured failure:

- CliBench keeps the first block when the text starts with a list marker and the second block
  otherwise, so "Diagnoses:\\n1. ...\\n\\nNote: ..." lost the list and "1. A\\n\\n2. B\\n\\n3. C"
  kept only A. Here every block that holds list-marker lines is kept, except blocks under a
  heading that names something other than diagnoses ("Recommendations:", "Plan:",
  "Treatment:", "Workup:"...); a heading that names diagnoses ("Assessment and plan:",
  "Differential diagnoses:") wins over such words. Blocks of prose are left out when any list
  block exists. Without list markers anywhere, CliBench's reading stays (the first block when it
  is the whole answer, else the block after a preamble).
- More than five blank lines: one point per block, skipping the blocks under a non-diagnosis
  heading up to the next diagnosis heading.
- Heading lines ("Diagnoses:") are not points.

**CliBench's rules** (:func:`clibench_points`, ``--protocol clibench``), a re-implementation of
``segment_seq`` in CliBench's ``score_clibench.ipynb``, including its quirks: a point keeps its
bullet ("- Sepsis"), "1) Sepsis" loses its text, and a one-line answer without inline numbering
has no points (CliBench then drops the output).
"""

from __future__ import annotations

import re

#: characters of one output that are parsed; the rest of an enormous output is ignored.
MAX_OUTPUT_CHARS = 20_000
#: points kept from one output.
MAX_POINTS = 200

MARKER = re.compile(r"^\s*(?:\d{1,3}\s*[.)]|[-•*·▪–o]|\([a-zA-Z0-9]{1,3}\))\s+")
_INLINE_ITEMS = re.compile(r"\d+\.\s(.+?)(?=\d+\.\s|\Z)", re.DOTALL)
EMPHASIS = re.compile(r"\*\*|__|`|^#+\s*")
# Code-shaped text: a heading that holds a code ("I10:") is a point, not a heading.
_CODE_SHAPE = re.compile(r"(?<![A-Za-z0-9.])[A-Z][0-9][0-9A-Z]")
_DIAGNOSIS_HEADING = re.compile(
    r"diagnos|impression|assessment|problem|condition|icd|differential|finding", re.IGNORECASE
)
_OTHER_HEADING = re.compile(
    r"recommend|plan\b|treat|manag|next step|follow|work-?up|test|investigat|evaluat|note\b|"
    r"disclaimer|medication|therap|risk factor|procedure|intervention|\blab|imaging|reason|"
    r"rationale|explanation|consideration|advice|monitor|education|prognosis|discussion|"
    r"symptom|history|summary|order|referral|consult",
    re.IGNORECASE,
)


def marked(line: str) -> bool:
    """Whether a line starts with a list marker (number, bullet, "(a)")."""
    return bool(MARKER.match(line))


def heading(line: str) -> bool:
    """Whether a line is a heading: it ends with a colon, has no list marker and no code."""
    stripped = EMPHASIS.sub("", line).strip()
    return stripped.endswith(":") and not marked(line) and not _CODE_SHAPE.search(stripped)


def heading_kind(line: str) -> str:
    """ "diagnosis", "other" or "none" (not a heading)."""
    if not heading(line):
        return "none"
    if _DIAGNOSIS_HEADING.search(line):
        return "diagnosis"
    return "other" if _OTHER_HEADING.search(line) else "diagnosis"


def _lines(block: str) -> list[str]:
    return block.split("\n")


def _list_blocks(blocks: list[str]) -> list[str] | None:
    """The lines of every list block not under a non-diagnosis heading, or None when no block
    holds a list marker. A heading governs the blocks after it until the next heading."""
    if not any(marked(line) for block in blocks for line in _lines(block)):
        return None
    kept: list[str] = []
    under_other = False
    for block in blocks:
        lines = _lines(block)
        kind = heading_kind(lines[0])
        if kind != "none":
            under_other = kind == "other"
        if not under_other and any(marked(line) for line in lines):
            kept += lines
    return kept


def split_points(text: str) -> list[str]:
    """The diagnosis points of one output by the project's rules (see the module docstring)."""
    text = text[:MAX_OUTPUT_CHARS].replace("\r\n", "\n").strip()
    if not text:
        return []
    if "\n\n" in text:
        blocks = [b.strip("\n") for b in re.split(r"\n\s*\n", text) if b.strip()]
        if len(blocks) - 1 <= 5:
            listed = _list_blocks(blocks)
            if listed is None:
                # No list markers anywhere: CliBench's reading (first block if it is the whole
                # answer, else the block after a preamble).
                listed = _lines(blocks[0] if len(blocks) == 1 else blocks[1])
            points = listed
        else:
            points = []
            skipping = False
            for block in blocks:
                kind = heading_kind(_lines(block)[0])
                if kind != "none":
                    skipping = kind == "other"
                    continue
                if not skipping:
                    points.append(block)
    elif "\n" in text:
        points = _lines(text)
    elif "<br>" in text:
        points = text.split("<br>")
    else:
        items = _INLINE_ITEMS.findall(text)
        points = items if len(items) > 1 else [text]
    kept: list[str] = []
    skipping = False
    for point in points:
        kind = heading_kind(point)
        if kind != "none":
            skipping = kind == "other"
        elif point.strip() and not skipping:
            kept.append(point.strip())
    return kept[:MAX_POINTS]


# -- CliBench's rules ---------------------------------------------------------------------------

_CLIBENCH_INLINE = re.compile(r"\d+\.\s(.+?)(?=\d+\.|\Z)", re.DOTALL)
#: CliBench's code pattern: a dot is required ("I10" is not read as a code).
CLIBENCH_CODE = re.compile(r"[A-Z]\d+\.[A-Za-z0-9]+")
_CLIBENCH_NUMBER = re.compile(r"\d+\.\s*(.+)")
_CLIBENCH_LABELS = (
    "<sep>",
    "(ICD-10-CM Code: )",
    "(ICD-10-CM code: )",
    "(ICD-10-CM: )",
    "ICD-10-CM Code:",
    "ICD-10-CM code:",
    "ICD-10-CM:",
)


def clibench_points(text: str) -> list[str]:
    """The points of one output exactly as CliBench's ``segment_seq`` cuts them."""
    points: list[str] = []
    if "\n\n" in text:
        stripped = text.strip()
        if not stripped:
            points = []  # CliBench's strip()[0] raises here; its except leaves no points
        elif text.count("\n\n") <= 5:
            first = stripped[0]
            blocks = text.split("\n\n")
            block = blocks[0] if (first.isdigit() or first in "•-*o") else blocks[1]
            points = block.split("\n")
        else:
            points = text.split("\n\n")
    elif "\n" in text:
        points = text.split("\n")
    elif "<br>" in text:
        points = text.split("<br>")
    if not points:
        points = _CLIBENCH_INLINE.findall(text)
    return [p for p in points if p]


def clibench_point(point: str) -> tuple[str, list[str]]:
    """(natural-language text, code strings) of one point, cleaned as CliBench cleans it."""
    if point[:1].isdigit():
        match = _CLIBENCH_NUMBER.search(point)
        text = match.group(1) if match else ""
    else:
        text = point
    codes = CLIBENCH_CODE.findall(point)
    for code in codes:
        for form in (f"({code})", f"[{code}]", code):
            if form in text:
                text = text.replace(form, "").strip()
        text = text.strip()
    for label in _CLIBENCH_LABELS:
        text = text.replace(label, "")
    return text.strip(), codes
