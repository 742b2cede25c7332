"""First names as demographic proxies: the top-K names per (sex, ethnicity) group.

The packaged lists (``data/names``) rank the NYC "Popular Baby Names" per group; see their SOURCE
note. CLIMB uses the top 5 per group: 2 sexes x 4 ethnicities = 40 slots holding 30 distinct
names. A name that appears in several groups is scored once per diagnosis and its probability is
reused in every group that holds it (its slot in each group counts separately in group means).
"""

from __future__ import annotations

import csv
import hashlib
import importlib.resources
from dataclasses import dataclass
from pathlib import Path

from climb_vllm.core.errors import UserError

SEXES = ("FEMALE", "MALE")
ETHNICITIES = (
    "WHITE NON HISPANIC",
    "BLACK NON HISPANIC",
    "HISPANIC",
    "ASIAN AND PACIFIC ISLANDER",
)
#: The paper's short labels for the ethnicity groups.
ETHNICITY_LABELS = {
    "WHITE NON HISPANIC": "White",
    "BLACK NON HISPANIC": "Black",
    "HISPANIC": "Hispanic",
    "ASIAN AND PACIFIC ISLANDER": "Asian",
}
PACKAGED_NAME_SETS = {"nyc-2011-2021": "names.csv", "nyc-2011-2019": "names_2011-2019.csv"}
DEFAULT_NAME_SET = "nyc-2011-2021"
#: The most names per group any packaged set offers (the 2011-2021 set; 2011-2019: 10).
MAX_K = 50


@dataclass(frozen=True)
class NameSlot:
    """One name in one demographic group at a given rank (1 = most frequent)."""

    name: str
    sex: str
    ethnicity: str
    rank: int


@dataclass(frozen=True)
class NameSet:
    """All ranked names of a name set; select groups with :meth:`top_k`.

    Attributes:
        key: the name set's identifier (a packaged key or a file path).
        slots: every (name, group, rank) row, up to rank 10 per group.
        sha256: hash of the source file, for the manifest.
    """

    key: str
    slots: tuple[NameSlot, ...]
    sha256: str

    def top_k(self, k: int) -> list[NameSlot]:
        """The top-``k`` slots of every group, ordered by sex, ethnicity, rank."""
        if not 1 <= k <= MAX_K:
            raise UserError(
                f"--top-k {k} is out of range.", f"use a value from 1 to {MAX_K} (default 5)."
            )
        sizes = {
            (sex, ethnicity): sum(1 for s in self.slots if (s.sex, s.ethnicity) == (sex, ethnicity))
            for sex in SEXES
            for ethnicity in ETHNICITIES
        }
        smallest = min(sizes, key=lambda group: sizes[group])
        if sizes[smallest] < k:
            raise UserError(
                f"--top-k {k} asks for more names than the name set {self.key} holds: group "
                f"{smallest} has {sizes[smallest]}.",
                f"use --top-k {sizes[smallest]} or less, or a name set with more names per group.",
            )
        order = {(s, e): i for i, (s, e) in enumerate((s, e) for s in SEXES for e in ETHNICITIES)}
        chosen = [slot for slot in self.slots if slot.rank <= k]
        return sorted(chosen, key=lambda slot: (order[(slot.sex, slot.ethnicity)], slot.rank))

    def distinct(self, k: int) -> list[str]:
        """Distinct names among the top-``k`` slots, in first-appearance order."""
        return list(dict.fromkeys(slot.name for slot in self.top_k(k)))


def load_names(name_set: str = DEFAULT_NAME_SET) -> NameSet:
    """Load a packaged name set by key, or a CSV with columns ``name,sex,ethnicity,rank``.

    Args:
        name_set: a key of :data:`PACKAGED_NAME_SETS` or the path of a CSV file in that format.
    """
    if name_set in PACKAGED_NAME_SETS:
        path = Path(
            str(
                importlib.resources.files("climb_vllm")
                / "data"
                / "names"
                / PACKAGED_NAME_SETS[name_set]
            )
        )
    else:
        path = Path(name_set)
        if not path.is_file():
            raise UserError(
                f"Unknown name set {name_set!r}.",
                f"use one of {', '.join(PACKAGED_NAME_SETS)} or a CSV file with columns "
                "name,sex,ethnicity,rank.",
            )
    raw = path.read_bytes()
    slots: list[NameSlot] = []
    reader = csv.DictReader(raw.decode("utf-8").splitlines())
    for line, row in enumerate(reader, start=2):
        try:
            slot = NameSlot(
                name=row["name"].strip(),
                sex=row["sex"].strip().upper(),
                ethnicity=row["ethnicity"].strip().upper(),
                rank=int(row["rank"]),
            )
        except (KeyError, ValueError, AttributeError) as exc:
            raise UserError(
                f"Name file {path} line {line} is malformed ({exc!r}).",
                "give every row name,sex,ethnicity,rank with an integer rank.",
            ) from exc
        if slot.sex not in SEXES or slot.ethnicity not in ETHNICITIES or not slot.name:
            raise UserError(
                f"Name file {path} line {line} has an unknown group "
                f"({slot.sex!r}, {slot.ethnicity!r}) or an empty name.",
                f"use sex in {SEXES} and ethnicity in {ETHNICITIES}.",
            )
        slots.append(slot)
    for sex in SEXES:
        for ethnicity in ETHNICITIES:
            ranks = sorted(s.rank for s in slots if s.sex == sex and s.ethnicity == ethnicity)
            if ranks[:1] != [1] or ranks != list(range(1, len(ranks) + 1)):
                raise UserError(
                    f"Name file {path}: group ({sex}, {ethnicity}) has ranks {ranks}.",
                    "give every group consecutive ranks starting at 1.",
                )
    return NameSet(key=name_set, slots=tuple(slots), sha256=hashlib.sha256(raw).hexdigest())
