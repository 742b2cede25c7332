"""The review of uncertain words: the file a researcher fills in, and reading it back.

A run lists every word the sex rewrite marks uncertain (:mod:`~climb_vllm.rewrite.certainty`)
in ``uncertain_edits.csv``, one row per word, with an empty ``decision`` column. A researcher
writes ``female`` or ``male`` there: the sex the word is to state in the counterfactual note
(for a rewrite to female, "female" makes the word the patient's, "male" keeps it as someone
else's). ``--rewrite-decisions FILE`` applies the filled-in file on the next run: each decided
word becomes certain, rows left empty stay as the rewrite had them, and the file's hash is part
of the run's configuration, so a changed file is a changed run.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path

from climb_vllm.core.errors import UserError
from climb_vllm.rewrite import mentions

#: The review file's columns, in order.
COLUMNS = ("case", "to", "section", "offset", "sentence", "word", "rewrite", "decision")
SEXES = ("female", "male")


@dataclass(frozen=True)
class Decision:
    """One filled-in row of a review file.

    Attributes:
        sex: "female" or "male": the sex the word is to state.
        line: its line in the file (the header is line 1), for messages.
    """

    sex: str
    line: int


#: A word of one section of one case's rewrite: (case, to, section, offset, word).
Key = tuple[str, str, str, int, str]


def sentence_of(text: str, offset: int) -> str:
    """The sentence of ``text`` holding the word at ``offset``, on one line."""
    lo, hi = mentions.sentence_bounds(text, offset)
    return " ".join(text[lo:hi].split())


def write_review(path: Path, rows: list[dict[str, str]]) -> None:
    """Write ``rows`` as the review file ``path`` (replacing it)."""
    partial = path.with_name(f".{path.name}.tmp")
    with partial.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    partial.replace(path)


def file_sha256(path: str | Path) -> str:
    """The sha256 of a decisions file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_decisions(path: str | Path) -> dict[Key, Decision]:
    """The decided rows of a filled-in review file, by the word they name.

    Raises:
        UserError: the file is missing or unreadable, lacks a column, or a row's decision is
            neither sex or its offset is not a number (naming the line).
    """
    where = Path(path)
    if not where.is_file():
        raise UserError(
            f"No decisions file at {where}.",
            "give the uncertain_edits.csv a run wrote, filled in",
        )
    with where.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise UserError(
                f"{where} lacks the column(s) {', '.join(missing)}.",
                "start from the uncertain_edits.csv a run wrote; keep its header",
            )
        decisions: dict[Key, Decision] = {}
        for line, row in enumerate(reader, start=2):
            sex = (row["decision"] or "").strip().lower()
            if not sex:
                continue
            if sex not in SEXES:
                raise UserError(
                    f"{where}, line {line}: the decision {row['decision']!r} is neither sex.",
                    "write 'female' or 'male' (the sex the word is to state), or leave it empty",
                )
            if not row["offset"].strip().isdigit():
                raise UserError(
                    f"{where}, line {line}: the offset {row['offset']!r} is not a number.",
                    "keep the offset column as the run wrote it",
                )
            key = (row["case"], row["to"], row["section"], int(row["offset"]), row["word"])
            decisions[key] = Decision(sex, line)
    return decisions


def unused(decisions: dict[Key, Decision], used: set[Key]) -> None:
    """Refuse decisions that named no uncertain word of the run.

    Raises:
        UserError: naming the first such row's line.
    """
    left = sorted((d.line, key) for key, d in decisions.items() if key not in used)
    if left:
        line, (case, to, section, offset, word) = left[0]
        raise UserError(
            f"Decisions file, line {line}: case {case!r} (to {to}), section {section!r} has "
            f"no uncertain word {word!r} at offset {offset} ({len(left)} such row(s)).",
            "use the uncertain_edits.csv of a run of the same cases and climb-vllm version; "
            "do not edit its case, to, section, offset or word columns",
        )
