"""Clinical cases for CLIMB extrinsic: a CliBench-like JSONL format, validated row by row.

One JSON object per line:

``id`` (str, unique), ``sex`` ("male" | "female"), ``ethnicity`` (str, e.g. "White"),
``insurance`` (str, e.g. "Other", "Medicaid", "Medicare"), optional ``age`` (int),
``marital_status`` (str), ``admission_location`` (str), ``notes`` (object: ``clinical_note``
required and non-empty, optional ``radiology`` and ``labs``), ``gold_codes`` (non-empty list of
billable ICD-10-CM codes of the chosen release, with or without the dot).

MIMIC-IV cannot be shipped, so the package carries 40 synthetic admissions written for this
project (``data/cases/synthetic_cases.jsonl``; no real patient data): most have the paper's
baseline (male, White, "Other" insurance); five are female and eight are not White or not on
"Other" insurance, so that every bias cell is computed over its own pairs; 12 have a
male-specific gold code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from climb_vllm.core.errors import UserError
from climb_vllm.resources.data import packaged
from climb_vllm.resources.ontology import Ontology, dotted_code

SECTIONS = ("clinical_note", "radiology", "labs")
#: Section headings shown to the model, in CliBench's order.
SECTION_TITLES = {"clinical_note": "Clinical note", "radiology": "Radiology", "labs": "Labs"}
SYNTHETIC = "synthetic"


@dataclass(frozen=True)
class Case:
    """One admission.

    Attributes:
        id: unique case id.
        sex / ethnicity / insurance: the stated demographics (the variants' baseline).
        sections: note sections that have text, in :data:`SECTIONS` order.
        gold_codes: the admission's ICD-10-CM codes (dotted, upper case).
        age / marital_status / admission_location: optional facts, passed through.
    """

    id: str
    sex: str
    ethnicity: str
    insurance: str
    sections: dict[str, str]
    gold_codes: tuple[str, ...]
    age: int | None = None
    marital_status: str | None = None
    admission_location: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


def _fail(path: str, line: int, message: str, fix: str) -> UserError:
    return UserError(f"{path} line {line}: {message}", fix)


#: The fields a case reads; any other field is kept in ``Case.extra``.
_KNOWN = frozenset(
    "id sex ethnicity insurance age marital_status admission_location notes gold_codes".split()
)


def _row(raw: str, path: str, number: int) -> dict[str, Any]:
    """Line ``number``'s JSON object, with its id, sex, ethnicity and insurance checked.

    Args:
        raw: the line.
        path: the file's name, as errors name it.
        number: the line's number (from 1).
    """
    try:
        row = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _fail(
            path, number, f"not valid JSON ({exc.msg})", "write one JSON object per line."
        ) from exc
    if not isinstance(row, dict):
        raise _fail(path, number, "not a JSON object", "write one JSON object per line.")
    for key in ("id", "sex", "ethnicity", "insurance"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise _fail(
                path,
                number,
                f"field '{key}' is missing or not a non-empty string",
                f'add "{key}": "..." (see the case format in the README).',
            )
    if row["sex"] not in ("male", "female"):
        raise _fail(path, number, f"field 'sex' is {row['sex']!r}", 'use "male" or "female".')
    return row


def _sections(notes: Any, path: str, number: int) -> dict[str, str]:
    """A case's non-empty note sections, each checked; the clinical note is required."""
    if not isinstance(notes, dict):
        raise _fail(
            path,
            number,
            "field 'notes' is missing or not an object",
            'add "notes": {"clinical_note": "...", "radiology": "...", "labs": "..."}.',
        )
    unknown = sorted(set(notes) - set(SECTIONS))
    if unknown:
        raise _fail(
            path,
            number,
            f"unknown note section(s) {', '.join(unknown)}",
            f"use only {', '.join(SECTIONS)}.",
        )
    sections = {}
    for key in SECTIONS:
        value = notes.get(key) or ""
        if not isinstance(value, str):
            raise _fail(path, number, f"notes.{key} is not a string", "write the note as text.")
        if value.strip():
            sections[key] = value
    if "clinical_note" not in sections:
        raise _fail(
            path,
            number,
            "notes.clinical_note is empty",
            "give every case a clinical note; drop cases without one.",
        )
    return sections


def _gold_codes(gold: Any, ontology: Ontology, path: str, number: int) -> tuple[str, ...]:
    """A case's gold codes, dotted and unique, each a billable code of ``ontology``."""
    if not isinstance(gold, list) or not gold or not all(isinstance(c, str) for c in gold):
        raise _fail(
            path,
            number,
            "field 'gold_codes' is missing, empty or not a list of strings",
            'add "gold_codes": ["I21.4", ...]; a case without gold codes cannot be scored.',
        )
    codes = tuple(dict.fromkeys(dotted_code(c) for c in gold))
    missing = [c for c in codes if c not in ontology]
    if missing:
        raise _fail(
            path,
            number,
            f"gold code(s) {', '.join(missing)} are not in ICD-10-CM {ontology.release}",
            "fix the codes or choose the release they come from with --icd-release.",
        )
    headers = [c for c in codes if not ontology.is_billable(c)]
    if headers:
        children = {c: ontology.billable_under(c)[:3] for c in headers}
        hint = "; ".join(f"{c} -> {', '.join(k) or 'none'}" for c, k in children.items())
        raise _fail(
            path,
            number,
            f"gold code(s) {', '.join(headers)} are category headers, not billable codes of "
            f"ICD-10-CM {ontology.release} (an admission is coded with billable codes)",
            f"use the billable code meant ({hint}), or the release the codes come from.",
        )
    return codes


def parse_cases(text: str, ontology: Ontology, path: str = "cases") -> list[Case]:
    """Cases from JSONL text; every row is checked and the first problem raises.

    Args:
        text: the JSONL text, one case per line.
        ontology: the ICD-10-CM release the gold codes are checked against.
        path: the file's name, as errors name it.

    Raises:
        UserError: naming the line and the field (bad JSON, a missing or mistyped field, an
            empty note, no gold codes, codes not in the release (all of them listed), a
            repeated id).
    """
    cases: list[Case] = []
    seen: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        row = _row(raw, path, number)
        if row["id"] in seen:
            raise _fail(
                path, number, f"id {row['id']!r} repeats an earlier case", "make ids unique."
            )
        seen.add(row["id"])
        sections = _sections(row.get("notes"), path, number)
        codes = _gold_codes(row.get("gold_codes"), ontology, path, number)
        age = row.get("age")
        if age is not None and (not isinstance(age, int) or isinstance(age, bool) or age < 0):
            raise _fail(
                path, number, f"field 'age' is {age!r}", "give age as a whole number or omit it."
            )
        cases.append(
            Case(
                id=row["id"],
                sex=row["sex"],
                ethnicity=row["ethnicity"],
                insurance=row["insurance"],
                sections=sections,
                gold_codes=codes,
                age=age,
                marital_status=row.get("marital_status"),
                admission_location=row.get("admission_location"),
                extra={k: v for k, v in row.items() if k not in _KNOWN},
            )
        )
    if not cases:
        raise UserError(f"{path} holds no cases.", "write one JSON object per line.")
    return cases


def load_cases(source: str, ontology: Ontology) -> list[Case]:
    """Cases from a JSONL file, or the packaged synthetic set for ``source`` = "synthetic"."""
    if source == SYNTHETIC:
        text = packaged("cases", "synthetic_cases.jsonl").read_text(encoding="utf-8")
        return parse_cases(text, ontology, "synthetic_cases.jsonl")
    path = Path(source)
    if not path.is_file():
        raise UserError(f"{source} does not exist.", "pass a JSONL case file or 'synthetic'.")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{source} is not UTF-8 text.", "save the case file as UTF-8.") from exc
    return parse_cases(text, ontology, str(path))
