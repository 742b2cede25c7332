"""A rewrite's record: each edit, the words kept, their certainty, and a person's decisions.

:func:`settle` takes what the rules and the referee decided (:mod:`~climb_vllm.rewrite.
sex_rewrite`), marks each word certain or uncertain (:mod:`~climb_vllm.rewrite.certainty`) and
applies the decisions of a review file (:mod:`~climb_vllm.rewrite.review`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from climb_vllm.rewrite import certainty, kin


@dataclass(frozen=True)
class Edit:
    """One change of a rewrite.

    Attributes:
        section: the note section it happened in.
        offset: character offset in the original section text.
        before: the original text.
        after: its replacement.
        uncertain: the text leaves more than one reading of the word: its referent may be
            someone other than the patient (:mod:`~climb_vllm.rewrite.certainty`).
        decided: a person decided the word (a review file's decision).
    """

    section: str
    offset: int
    before: str
    after: str
    uncertain: bool = False
    decided: bool = False


@dataclass(frozen=True)
class Rewrite:
    """A rewritten text and every decision behind it.

    Attributes:
        text: the new text.
        edits: the changes made, in order of offset.
        kept: words of the patient's sex left as they were because they may be someone
            else's, each with the word it would have become (``after``), in order of offset.
            Words kept with one reading (a relative's "his" in "his father") are not listed.
        decided: the ``(offset, word)`` keys of the decisions that were applied.
    """

    text: str
    edits: tuple[Edit, ...]
    kept: tuple[Edit, ...]
    decided: frozenset[tuple[int, str]] = frozenset()

    def uncertain(self) -> list[Edit]:
        """The edits and kept words marked uncertain, in order of offset."""
        return sorted((e for e in self.edits + self.kept if e.uncertain), key=lambda e: e.offset)


def match_case(template: str, word: str) -> str:
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


# A possessive and a kin word after it, perhaps with an adjective ("her late husband").
_POSSESSED_KIN = re.compile(
    rf"\b(his|her)\s+(?:(?:{'|'.join(sorted(kin.KIN_ADJECTIVES))})\s+)?([a-z]+)\b", re.IGNORECASE
)


def _kin_to_check(text: str, to: str, section: str, edited: set[int]) -> dict[int, Edit]:
    """Kin words of the patient's sex after a possessive, not edited, by the possessive's
    offset: "her husband" in a man's note, "her mother" in a woman's, may be the patient (said
    from the relative's side); each with the word it would become."""
    source_kin = kin.KIN_MALE_ALL if to == "female" else kin.KIN_FEMALE_ALL
    found: dict[int, Edit] = {}
    for match in _POSSESSED_KIN.finditer(text):
        word = match.group(2)
        if word.lower() in source_kin and match.start(2) not in edited:
            swap = match_case(word, kin.KIN_SWAP[word.lower()])
            found[match.start(1)] = Edit(section, match.start(2), word, swap, uncertain=True)
    return found


def settle(
    text: str,
    to: str,
    section: str,
    edits: list[Edit],
    kept: list[Edit],
    decisions: Mapping[tuple[int, str], str] | None = None,
) -> Rewrite:
    """The rewrite of ``text`` with each word's certainty (:mod:`~climb_vllm.rewrite.
    certainty`) and a person's ``decisions`` applied.

    Args:
        text: the original text.
        to: the sex the patient is written as.
        section: the section's name, recorded in each entry.
        edits: the changes the rules and the referee made.
        kept: the words of the patient's sex they left as someone else's.
        decisions: ``(offset, word) -> sex`` the word is to state, for words marked uncertain.
    """
    reading = certainty.Reading(text, "male" if to == "female" else "female")
    to_check = _kin_to_check(text, to, section, {e.offset for e in edits})
    entries = sorted([(e, True) for e in edits] + [(e, False) for e in kept], key=_offset)
    certain_at: dict[int, bool] = {}
    marked: list[tuple[Edit, bool]] = []
    for entry, applied in entries:
        key = entry.before.lower().replace("’", "'")
        end = entry.offset + len(entry.before)
        kind = "age" if key in ("m", "f") else ""
        if key in kin.KIN_SWAP and not kin.patient_parent(text, entry.offset, end, key, to):
            kind = "kin"  # a relative's kin word said of the patient
        if applied:
            object_ = key == "him" or (
                key == "her" and entry.after.lower() == "him" and certainty.plain_object(text, end)
            )
            certain = not entry.uncertain and reading.certain(entry.offset, key, kind, object_)
            if key == "her" and certainty.her_is_open(text, end):
                certain = False  # "his" or "him": "makes her work late", "examined her back"
        else:
            reading.kept(entry.offset, key)
            certain = False
        certain_at[entry.offset] = certain
        marked.append((replace(entry, uncertain=not certain), applied))
        possessed = to_check.get(entry.offset)
        if possessed is not None and not certain:
            marked.append((possessed, False))  # "her mother" where "her" may be the daughter's
    for possessive, entry in to_check.items():
        if possessive not in certain_at:
            marked.append((entry, False))  # "her husband" in a man's note: "her" is not his
    return _decide(text, marked, to, decisions or {})


def _offset(entry: tuple[Edit, bool]) -> int:
    return entry[0].offset


def _decide(
    text: str, marked: list[tuple[Edit, bool]], to: str, decisions: Mapping[tuple[int, str], str]
) -> Rewrite:
    """The :class:`Rewrite` of ``marked`` entries ((entry, applied)) once ``decisions`` move
    the words they name: a word decided as ``to``'s is changed, else kept; either is certain."""
    edits: list[Edit] = []
    kept: list[Edit] = []
    used: set[tuple[int, str]] = set()
    for entry, applied in sorted(marked, key=_offset):
        decision = decisions.get((entry.offset, entry.before))
        if decision is not None and entry.uncertain:
            used.add((entry.offset, entry.before))
            applied = decision == to
            entry = replace(entry, uncertain=False, decided=True)
        (edits if applied else kept).append(entry)
    return Rewrite(apply_edits(text, edits), tuple(edits), tuple(kept), frozenset(used))


def apply_edits(text: str, edits: list[Edit]) -> str:
    """``text`` with ``edits`` (sorted by offset, not overlapping) applied."""
    parts: list[str] = []
    cursor = 0
    for edit in edits:
        parts.append(text[cursor : edit.offset])
        parts.append(edit.after)
        cursor = edit.offset + len(edit.before)
    parts.append(text[cursor:])
    return "".join(parts)
