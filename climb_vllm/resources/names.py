"""First names as demographic proxies: the top-K names per (sex, ethnicity) group.

The packaged lists (``data/names``) rank the NYC "Popular Baby Names" per group; see their SOURCE
note. CLIMB uses the top 5 per group: 2 sexes x 4 ethnicities = 40 slots holding 30 distinct
names. A name that appears in several groups is scored once per diagnosis and its probability is
reused in every group that holds it (its slot in each group counts separately in group means).
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path

from climb_vllm.core.errors import UserError
from climb_vllm.resources.data import packaged

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
#: Each ethnicity group as a reader writes it (the data's labels are upper case).
ETHNICITY_WORDS = {
    "WHITE NON HISPANIC": "White non-Hispanic",
    "BLACK NON HISPANIC": "Black non-Hispanic",
    "HISPANIC": "Hispanic",
    "ASIAN AND PACIFIC ISLANDER": "Asian and Pacific Islander",
}
PACKAGED_NAME_SETS = {"nyc-2011-2021": "names.csv", "nyc-2011-2019": "names_2011-2019.csv"}


def group_label(sex: str, ethnicity: str) -> str:
    """A (sex, ethnicity) group in words: ("FEMALE", "ASIAN AND PACIFIC ISLANDER") ->
    "Asian and Pacific Islander women"."""
    people = {"FEMALE": "women", "MALE": "men"}.get(sex.upper(), sex.lower())
    return f"{ETHNICITY_WORDS.get(ethnicity.upper(), ethnicity.title())} {people}"


DEFAULT_NAME_SET = "nyc-2011-2021"
#: The most names per group a run may score (the 2011-2021 set ranks every NYC name; ties are
#: checked absent up to rank 50, and scoring cost grows with the names).
MAX_K = 50
#: The share of a name's births that must fall in a group for the name to count as distinctive
#: of that group when none is given (audit studies use 0.8-0.9 of one race).
DEFAULT_DISTINCTIVE = 0.8


@dataclass(frozen=True)
class NameSlot:
    """One name in one demographic group at a given rank (1 = most frequent)."""

    name: str
    sex: str
    ethnicity: str
    rank: int
    count: int | None = None

    @property
    def group(self) -> tuple[str, str]:
        """The slot's (sex, ethnicity) group."""
        return (self.sex, self.ethnicity)


@dataclass(frozen=True)
class NameSet:
    """All ranked names of a name set; select groups with :meth:`top_k`.

    Attributes:
        key: the name set's identifier (a packaged key or a file path).
        slots: every (name, group, rank, births) row; ranks run 1, 2, ... within each group.
        sha256: hash of the source file, for the manifest.
        distinctive: the share of a name's births a group must hold for the name to stay in it
            (None: every name stays); see :meth:`distinctive_of`.
    """

    key: str
    slots: tuple[NameSlot, ...]
    sha256: str
    distinctive: float | None = None

    @property
    def label(self) -> str:
        """The set's key, with the distinctive rule when one applies."""
        if self.distinctive is None:
            return self.key
        return f"{self.key}, distinctive (share >= {self.distinctive:g})"

    @property
    def has_counts(self) -> bool:
        """Whether every name carries its births (needed for shares and birth weights)."""
        return all(slot.count is not None for slot in self.slots)

    def sizes(self) -> dict[tuple[str, str], int]:
        """Names per (sex, ethnicity) group, in sex-major order."""
        return {
            (sex, ethnicity): sum(1 for s in self.slots if s.group == (sex, ethnicity))
            for sex in SEXES
            for ethnicity in ETHNICITIES
        }

    def shares(self) -> dict[tuple[str, str, str], float]:
        """Per (upper-cased name, sex, ethnicity): the share of all the set's births of that name
        (any sex, any ethnicity) that fall in the group.

        Raises UserError if the set has no birth counts.
        """
        if not self.has_counts:
            raise UserError(
                f"The name set {self.key} has no birth counts, which distinctive names and "
                "birth weights need.",
                "add a count column (births of the name in the group) to the name file.",
            )
        totals: dict[str, int] = {}
        for slot in self.slots:
            totals[slot.name.upper()] = totals.get(slot.name.upper(), 0) + (slot.count or 0)
        return {
            (slot.name.upper(), slot.sex, slot.ethnicity): (slot.count or 0)
            / max(totals[slot.name.upper()], 1)
            for slot in self.slots
        }

    def distinctive_of(self, share: float) -> NameSet:
        """The set restricted to distinctive names: a name stays in a group only if at least
        ``share`` of its births (over every group of the set) fall in that group, as audit
        studies choose names. Ranks are renumbered 1, 2, ... within each group in the set's
        order.

        Args:
            share: the threshold, in (0, 1]; above 0.5 a name is distinctive of one group only.
        """
        if not 0 < share <= 1:
            raise UserError(
                f"--distinctive {share} is out of range.", "use a share in (0, 1], e.g. 0.8."
            )
        shares = self.shares()
        kept: list[NameSlot] = []
        rank: dict[tuple[str, str], int] = {}
        for slot in sorted(self.slots, key=lambda s: (s.sex, s.ethnicity, s.rank)):
            if shares[(slot.name.upper(), slot.sex, slot.ethnicity)] >= share:
                rank[slot.group] = rank.get(slot.group, 0) + 1
                kept.append(
                    NameSlot(slot.name, slot.sex, slot.ethnicity, rank[slot.group], slot.count)
                )
        return NameSet(key=self.key, slots=tuple(kept), sha256=self.sha256, distinctive=share)

    def top_k(self, k: int) -> list[NameSlot]:
        """The top-``k`` slots of every group, ordered by sex, ethnicity, rank."""
        if not 1 <= k <= MAX_K:
            raise UserError(f"--top-k {k} is out of range.", f"use a value from 1 to {MAX_K}.")
        sizes = self.sizes()
        smallest = min(sizes, key=lambda group: sizes[group])
        if sizes[smallest] < k:
            raise UserError(
                f"--top-k {k} asks for more names than the name set {self.label} holds: group "
                f"{smallest} has {sizes[smallest]}.",
                f"use --top-k {sizes[smallest]} or less, or a name set with more names per group"
                + (" (or a lower --distinctive share)." if self.distinctive else "."),
            )
        order = {(s, e): i for i, (s, e) in enumerate((s, e) for s in SEXES for e in ETHNICITIES)}
        chosen = [slot for slot in self.slots if slot.rank <= k]
        return sorted(chosen, key=lambda slot: (order[(slot.sex, slot.ethnicity)], slot.rank))

    def distinct(self, k: int) -> list[str]:
        """Distinct names among the top-``k`` slots, in first-appearance order."""
        return list(dict.fromkeys(slot.name for slot in self.top_k(k)))


def _reader(path: Path, raw: bytes) -> csv.DictReader[str]:
    """A CSV reader of a name file's rows; UserError for text that is not UTF-8 or a header
    without the required columns."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(
            f"Name file {path} is not UTF-8 text.", "pass a CSV file saved as UTF-8."
        ) from exc
    reader = csv.DictReader(text.splitlines())
    missing = [
        c for c in ("name", "sex", "ethnicity", "rank") if c not in (reader.fieldnames or [])
    ]
    if missing:
        first = (text.splitlines() or [""])[0][:80]
        raise UserError(
            f"Name file {path} has no column {', '.join(missing)} (its first line: {first!r}).",
            "give a CSV file whose header names name,sex,ethnicity,rank (and, optionally, "
            "count), or one of the packaged sets: " + ", ".join(PACKAGED_NAME_SETS) + ".",
        )
    return reader


def _read_slots(path: Path, raw: bytes) -> list[NameSlot]:
    """The name file's slots, checked (:func:`load_names` says what is refused)."""
    slots: list[NameSlot] = []
    seen: set[tuple[str, str, str]] = set()
    reader = _reader(path, raw)
    for line, row in enumerate(reader, start=2):
        try:
            slot = NameSlot(
                name=row["name"].strip(),
                sex=row["sex"].strip().upper(),
                ethnicity=row["ethnicity"].strip().upper(),
                rank=int(row["rank"]),
                count=_count(row.get("count")),
            )
        except (KeyError, ValueError, AttributeError) as exc:
            raise UserError(
                f"Name file {path} line {line} is malformed ({exc!r}).",
                "give every row name,sex,ethnicity,rank with an integer rank (and, optionally, "
                "a non-negative integer count).",
            ) from exc
        if slot.sex not in SEXES or slot.ethnicity not in ETHNICITIES or not slot.name:
            raise UserError(
                f"Name file {path} line {line} has an unknown group "
                f"({slot.sex!r}, {slot.ethnicity!r}) or an empty name.",
                f"use sex in {SEXES} and ethnicity in {ETHNICITIES}.",
            )
        if (slot.name.upper(), slot.sex, slot.ethnicity) in seen:
            raise UserError(
                f"Name file {path} line {line} repeats the name {slot.name!r} in group "
                f"({slot.sex}, {slot.ethnicity}).",
                "list each name once per group.",
            )
        seen.add((slot.name.upper(), slot.sex, slot.ethnicity))
        slots.append(slot)
    for sex in SEXES:
        for ethnicity in ETHNICITIES:
            ranks = sorted(s.rank for s in slots if s.sex == sex and s.ethnicity == ethnicity)
            if ranks[:1] != [1] or ranks != list(range(1, len(ranks) + 1)):
                raise UserError(
                    f"Name file {path}: group ({sex}, {ethnicity}) has ranks {ranks}.",
                    "give every group consecutive ranks starting at 1.",
                )
    return slots


def load_names(name_set: str = DEFAULT_NAME_SET, distinctive: float | None = None) -> NameSet:
    """Load a packaged name set by key, or a CSV with columns ``name,sex,ethnicity,rank`` and
    optionally ``count`` (births of the name in the group).

    Args:
        name_set: a key of :data:`PACKAGED_NAME_SETS` or the path of a CSV file in that format.
        distinctive: keep only names distinctive of their group at this share of their births
            (:meth:`NameSet.distinctive_of`); None keeps every name.

    Raises UserError naming the line or group at fault: a malformed row, an unknown group, an
    empty name, a name twice in one group, ranks that are not 1, 2, ... in a group.
    """
    if name_set in PACKAGED_NAME_SETS:
        path = packaged("names", PACKAGED_NAME_SETS[name_set])
    else:
        path = Path(name_set)
        if not path.is_file():
            raise UserError(
                f"Unknown name set {name_set!r}.",
                f"use one of {', '.join(PACKAGED_NAME_SETS)} or a CSV file with columns "
                "name,sex,ethnicity,rank.",
            )
    raw = path.read_bytes()
    slots = _read_slots(path, raw)
    names = NameSet(key=name_set, slots=tuple(slots), sha256=hashlib.sha256(raw).hexdigest())
    return names if distinctive is None else names.distinctive_of(distinctive)


def _count(value: str | None) -> int | None:
    """A row's birth count: None when the file has no count column or leaves it empty."""
    if value is None or not value.strip():
        return None
    count = int(value)
    if count < 0:
        raise ValueError(f"negative count {count}")
    return count
