"""Counterfactual versions of a clinical case: another sex, ethnicity or insurance, and placebos.

CLIMB's extrinsic protocol states the patient's demographics in a "Patient information" line put
before or after the notes, and changes one attribute at a time from the baseline (male, White,
"Other" insurance). A sex change must also rewrite the notes, which speak of the patient as
"he", "Mr.", "45 y/o M": :func:`swap_sex` does this with an edit log (offset in the original
text, before, after), keeping case and punctuation.

Rules of the sex rewrite (male -> female; the reverse mirrors them):
- pronouns: he -> she, him -> her, himself -> herself; "his" -> "her" before a word and
  "hers" where it stands alone ("the decision was his.");
- honorifics: Mr. -> Ms., Mr -> Ms, sir -> ma'am;
- nouns that describe the patient: man/men, male(s), gentleman/gentlemen, boy(s), guy;
- note abbreviations: "45 y/o M", "45yo M", "45-year-old M", "45M", "Sex: M", "Gender: M".
Relatives ("his wife", "his father") keep their own sex: only the patient's words change. The
rewrite cannot tell which person a pronoun refers to, so a "he" that means a relative changes
too; notes written about the patient rarely need one (documented limitation).

The female -> male direction maps "her" to "his" before a word (a determiner) and to "him"
otherwise; this is right for "her chest" and "gave her", and wrong for rarer constructions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The paper's baseline demographics; every counterfactual changes one attribute from these.
BASELINE = {"sex": "male", "ethnicity": "White", "insurance": "Other"}
#: The counterfactual values of the paper (Tables 4 and 5).
COUNTERFACTUALS = {
    "sex": ("female",),
    "ethnicity": ("Black", "Hispanic", "Asian"),
    "insurance": ("Medicaid", "Medicare"),
}
PLACEMENTS = ("before", "after")
LINE = "Patient information: sex is {sex}, ethnicity is {ethnicity}, insurance is {insurance}."
#: The placebo line: the same facts in other words, so that its effect measures prompt noise.
PLACEBO_LINE = (
    "Patient details: the patient's sex is {sex}; ethnicity: {ethnicity}; insurance: {insurance}."
)

_MALE_TO_FEMALE = {
    "he": "she", "him": "her", "himself": "herself", "man": "woman", "men": "women",
    "male": "female", "males": "females", "gentleman": "lady", "gentlemen": "ladies",
    "boy": "girl", "boys": "girls", "guy": "woman", "mr": "ms", "sir": "ma'am",
}  # fmt: skip
_FEMALE_TO_MALE = {
    "she": "he", "herself": "himself", "woman": "man", "women": "men", "female": "male",
    "females": "males", "lady": "gentleman", "ladies": "gentlemen", "girl": "boy",
    "girls": "boys", "ms": "mr", "mrs": "mr", "miss": "mr", "ma'am": "sir", "hers": "his",
}  # fmt: skip
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
# Abbreviated sex after an age or a "Sex:" label: the letter alone is group 2.
_ABBREVIATION = re.compile(
    r"(\b\d{1,3}\s*(?:y/?o|yo|y\.o\.|-?\s?years?[- ]old|-?\s?yr[- ]old|yrs?)\s*,?\s*)([MF])\b"
    r"|(\b\d{1,3})([MF])\b(?=[\s,.;:]|$)"
    r"|(\b(?:sex|gender)\s*[:=]\s*)([MF])\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Edit:
    """One change of a rewrite.

    Attributes:
        section: the note section it happened in.
        offset: character offset in the original section text.
        before: the original text.
        after: its replacement.
    """

    section: str
    offset: int
    before: str
    after: str


def _match_case(template: str, word: str) -> str:
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def swap_sex(text: str, to: str = "female", section: str = "note") -> tuple[str, list[Edit]]:
    """Rewrite ``text`` as if the patient were of sex ``to`` ("female" or "male").

    Returns:
        The new text and the edits made, in order of their offset in ``text``.
    """
    if to not in ("female", "male"):
        raise ValueError(f"unknown sex {to!r}")
    mapping = _MALE_TO_FEMALE if to == "female" else _FEMALE_TO_MALE
    letter = "F" if to == "female" else "M"
    edits: list[Edit] = []
    taken: list[tuple[int, int]] = []
    for match in _ABBREVIATION.finditer(text):
        group = next(g for g in (2, 4, 6) if match.group(g) is not None)
        if match.group(group).upper() != letter:
            start = match.start(group)
            edits.append(Edit(section, start, match.group(group), letter))
            taken.append((start, start + 1))
    for match in _WORD.finditer(text):
        word = match.group()
        if any(a <= match.start() < b for a, b in taken):
            continue
        key = word.lower()
        replacement: str | None = mapping.get(key)
        if to == "female" and key == "his":
            replacement = "her" if _followed_by_word(text, match.end()) else "hers"
        elif to == "male" and key == "her":
            replacement = "his" if _followed_by_word(text, match.end()) else "him"
        if replacement is None:
            continue
        if key in ("mr", "ms", "mrs") and word != word.capitalize() and not word.isupper():
            continue  # "mr" inside prose in lower case is not a title
        edits.append(Edit(section, match.start(), word, _match_case(word, replacement)))
    edits.sort(key=lambda e: e.offset)
    return _apply(text, edits), edits


def _followed_by_word(text: str, end: int) -> bool:
    """True when a word (not punctuation or the end) follows the position ``end``.

    "his" before a conjunction, preposition or verb stands alone ("his and hers", "his to keep").
    """
    following = re.match(r"\s+([A-Za-z0-9]+)", text[end : end + 40])
    return following is not None and following.group(1).lower() not in {
        "and", "or", "to", "is", "was",
    }  # fmt: skip


def _apply(text: str, edits: list[Edit]) -> str:
    parts: list[str] = []
    cursor = 0
    for edit in edits:
        parts.append(text[cursor : edit.offset])
        parts.append(edit.after)
        cursor = edit.offset + len(edit.before)
    parts.append(text[cursor:])
    return "".join(parts)


@dataclass(frozen=True)
class Variant:
    """One version of a case as the model sees it.

    Attributes:
        name: e.g. "default", "sex=female", "ethnicity=Black", "placebo".
        attribute: "default", "placebo", "sex", "ethnicity" or "insurance".
        value: the attribute's value in this variant ("" for default and placebo).
        placement: "before" or "after": where the patient-information line goes.
        demographics: sex, ethnicity and insurance stated in the line.
        line: the patient-information line.
        sections: the note sections (rewritten for a sex change).
        edits: every change made to the sections.
    """

    name: str
    attribute: str
    value: str
    placement: str
    demographics: dict[str, str]
    line: str
    sections: dict[str, str]
    edits: tuple[Edit, ...]


def variants(
    sections: dict[str, str], baseline: dict[str, str] | None = None, placebo: bool = True
) -> list[Variant]:
    """Every variant of one case: default, each counterfactual and the placebo, both placements.

    Args:
        sections: the case's note sections (name -> text), in the order they are shown.
        baseline: the demographics the variants change from (the paper's by default). A sex
            counterfactual is made only for the sex the baseline does not have.
        placebo: include the placebo variants.
    """
    base = dict(BASELINE if baseline is None else baseline)
    specs: list[tuple[str, str, str, dict[str, str], str]] = [
        ("default", "default", "", base, LINE)
    ]
    for attribute, values in COUNTERFACTUALS.items():
        for value in values:
            if attribute == "sex" and value == base["sex"]:
                value = "male" if value == "female" else "female"
            if value == base[attribute]:
                continue
            specs.append(
                (f"{attribute}={value}", attribute, value, {**base, attribute: value}, LINE)
            )
    if placebo:
        specs.append(("placebo", "placebo", "", base, PLACEBO_LINE))
    out: list[Variant] = []
    for name, attribute, value, demographics, template in specs:
        new_sections = dict(sections)
        edits: list[Edit] = []
        if attribute == "sex":
            for key, text in sections.items():
                new_sections[key], made = swap_sex(text, value, key)
                edits += made
        line = template.format(**demographics)
        for placement in PLACEMENTS:
            out.append(
                Variant(name, attribute, value, placement, demographics, line, new_sections,
                        tuple(edits))
            )  # fmt: skip
    return out
