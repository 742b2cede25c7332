"""How right the sex rewrite is on labelled text, and how well its "uncertain" mark finds its
errors.

A labelled row is ``{"to", "text", "expected"}`` (and optionally ``"facts"``, strings that must
survive): the text, the sex to write the patient as, and the rewrite a careful reader would
make. Rows are compared token by token (:func:`token_edits`), so each estimate below is over
*words*: the positions where the expected text or the rewrite differs from the original.

- ``edit_accuracy``: right words / (expected | made changes), the figure the project has always
  reported, with a 95% percentile bootstrap over rows (``ratio_interval``).
- ``certain_accuracy``: of the changes marked certain, the share that are expected. The
  rewrite's promise: a certain edit needs no review.
- ``wrong_marked``: of the wrong words (a change made that was not expected, or an expected one
  not made), the share that the rewrite lists as uncertain (an edit, or a word it kept). A
  wrong word that is not listed reaches a model unseen.
- ``missed``: expected changes not made / expected changes.
- ``uncertain_share``: uncertain edits / edits made; ``review_share``: uncertain entries (edits
  and kept words) / edits made, the review work per edit.
- ``rows_safe``: rows fully right or holding at least one uncertain entry (a person sees them).
"""

from __future__ import annotations

import csv
import difflib
import re
from itertools import accumulate, count
from pathlib import Path
from typing import Any

from climb_vllm.core.resampling import ratio_interval
from climb_vllm.rewrite.sex_rewrite import rewrite

Change = tuple[int, str, str]


def tokens(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]|\s+", text)


def token_edits(before: str, after: str) -> set[Change]:
    """Token-level replacements that turn ``before`` into ``after``: ``(token index, old,
    new)``."""
    a, b = tokens(before), tokens(after)
    found: set[Change] = set()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            found.add((i1, "".join(a[i1:i2]), "".join(b[j1:j2])))
    return found


def score(rows: list[dict[str, Any]], referee: bool = True) -> dict[str, Any]:
    """The figures of the module docstring over ``rows`` (see there for what each estimates).

    Args:
        rows: labelled rows (``to``, ``text``, ``expected``, optional ``facts``).
        referee: ask the learned referee (False: the rules alone).
    """
    right = union = certain = certain_right = wrong = wrong_marked = 0
    expected_total = missed = exact = safe = facts = edits_made = uncertain_edits = entries = 0
    per_row: list[tuple[int, int]] = []
    for row in rows:
        text, expected = str(row["text"]), str(row["expected"])
        done = rewrite(text, str(row["to"]), referee=referee)
        want, got = token_edits(text, expected), token_edits(text, done.text)
        token_at = dict(zip(accumulate([0] + [len(t) for t in tokens(text)]), count()))
        listed = {token_at[e.offset] for e in done.uncertain() if e.offset in token_at}
        sure = {
            (token_at[e.offset], e.before, e.after)
            for e in done.edits
            if not e.uncertain and e.offset in token_at
        }
        wrong_here = {c[0] for c in want ^ got}
        right += len(want & got)
        union += len(want | got)
        per_row.append((len(want & got), len(want | got)))
        certain += len(sure)
        certain_right += len(sure & want)
        wrong += len(wrong_here)
        wrong_marked += len(wrong_here & listed)
        expected_total += len(want)
        missed += len({c[0] for c in want} - {c[0] for c in got})
        exact += done.text == expected
        safe += done.text == expected or bool(done.uncertain())
        facts += sum(str(f) not in done.text for f in row.get("facts", []))
        edits_made += len(done.edits)
        uncertain_edits += sum(e.uncertain for e in done.edits)
        entries += len(done.uncertain())
    low, high = ratio_interval([c for c, _ in per_row], [u for _, u in per_row])
    return {
        "rows": len(rows),
        "words": union,
        "edit_accuracy": _share(right, union),
        "edit_accuracy_low": round(low, 3),
        "edit_accuracy_high": round(high, 3),
        "rows_exact": exact,
        "fact_changes": facts,
        "certain_edits": certain,
        "certain_accuracy": _share(certain_right, certain),
        "wrong_words": wrong,
        "wrong_marked": _share(wrong_marked, wrong),
        "missed": _share(missed, expected_total),
        "edits": edits_made,
        "uncertain_share": _share(uncertain_edits, edits_made),
        "review_share": _share(entries, edits_made),
        "rows_safe": _share(safe, len(rows)),
    }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def winogender_rows(path: Path) -> list[dict[str, Any]]:
    """Labelled rows from the WinoGender file ``path`` (``winogender_patient_dev.tsv``: each
    template's male and female sentence and whose the pronoun is): each sentence rewritten to
    the other sex, expected to become its twin when the pronoun is the patient's and to stay
    as it is otherwise."""
    with path.open(encoding="utf-8", newline="") as handle:
        table = list(csv.DictReader(handle, delimiter="\t"))
    by_id = {row["id"]: row for row in table}
    rows = []
    for row in table:
        other_sex = "female" if row["pronoun_sex"] == "male" else "male"
        twin = by_id[row["id"].replace(f".{row['pronoun_sex']}.", f".{other_sex}.")]
        patients = row["pronoun_refers_to"] == "patient"
        rows.append(
            {
                "to": other_sex,
                "text": row["sentence"],
                "expected": twin["sentence"] if patients else row["sentence"],
                "id": row["id"],
            }
        )
    return rows
