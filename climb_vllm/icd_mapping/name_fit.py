"""Whether a code's name fits a diagnosis text: the rules a coder applies before taking a
name that reads close to the text (:func:`fits`).

The rules come from ICD-10-CM's conventions and Official Guidelines, not from any labelled
set: chapter rules (pregnancy, newborn, external causes), qualifiers a coder takes only when the
text gives them (congenital, superficial, recurrent, pathological, postprocedural, subsequent,
history), words that contradict ("with" / "without", "X" / "nonX", opposite words, stages,
severities, sides), the diabetes type default and the hypertension combinations.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from climb_vllm.resources.words import FUNCTION_WORDS, plain_words

_PREGNANCY = re.compile(
    r"pregnan|gestation|obstetric|deliver|labou?r\b|partum|puerper|trimester|eclampsia|"
    r"abortion|miscarriage|ectopic|placent|fetal|fetus|amniotic|uterine inertia|breech|"
    r"lactation|cesarean|caesarean|premature rupture|perineal laceration",
    re.IGNORECASE,
)
_NEWBORN = re.compile(r"newborn|neonat|perinatal|birth|preterm|prematur", re.IGNORECASE)
_EXTERNAL = re.compile(
    r"\bfall|\bfell\b|accident|collision|crash|exposure|struck|assault|\bbit(?:e|ten)\b|"
    r"sting|drown|fire\b|burn|poison|overdose|self-harm|suicide attempt|event",
    re.IGNORECASE,
)
# ICD-10-CM's diabetes categories other than type 2 (E11) need their type in the text: "when
# the type of diabetes mellitus is not documented in the medical record the default is E11"
# (Official Guidelines I.C.4.a.2).
_DIABETES_TYPE = {
    "E08": re.compile(r"underlying|due to|secondary to|cystic fibrosis|cushing", re.IGNORECASE),
    "E09": re.compile(r"drug|chemical|induced|steroid", re.IGNORECASE),
    "E10": re.compile(
        r"type\s*(?:1|i|one)\b|\bt1|juvenile|insulin[- ]dependent|iddm|brittle|ketosis[- ]prone",
        re.IGNORECASE,
    ),
    "E13": re.compile(
        r"other specified|secondary|pancrea|postprocedural|mody|latent autoimmune|lada",
        re.IGNORECASE,
    ),
}
# Hypertension with heart or chronic kidney disease takes the combination categories I11-I13:
# the guidelines presume the causal link unless the text denies it (I.C.9.a.1-3).
_HYPERTENSION = re.compile(
    r"(?<!pulmonary )(?<!portal )(?<!intracranial )(?<!ocular )hypertensi(?:on|ve)",
    re.IGNORECASE,
)
_HEART_DISEASE = re.compile(
    r"heart (?:failure|disease)|cardiac failure|cardiomyopathy|\bc?hf\b", re.IGNORECASE
)
_KIDNEY_DISEASE = re.compile(
    r"chronic (?:kidney|renal)|\bckd\b|\besrd\b|end[- ]stage (?:kidney|renal)|"
    r"(?:kidney|renal) disease|nephrosclerosis",
    re.IGNORECASE,
)
# Words whose meanings exclude each other: a text saying one (and not the other) takes no name
# saying only the other ("toxic multinodular goiter" is not "... with diffuse goiter").
_OPPOSITES = (
    (frozenset({"acute"}), frozenset({"chronic"})),
    (frozenset({"benign"}), frozenset({"malignant"})),
    (frozenset({"primary"}), frozenset({"secondary"})),
    (frozenset({"open"}), frozenset({"closed"})),
    (frozenset({"upper"}), frozenset({"lower"})),
    (frozenset({"anterior"}), frozenset({"posterior"})),
    (frozenset({"internal"}), frozenset({"external"})),
    (frozenset({"partial", "incomplete"}), frozenset({"complete", "total"})),
    (frozenset({"acquired"}), frozenset({"congenital"})),
    (frozenset({"diffuse"}), frozenset({"nodular", "multinodular", "uninodular"})),
    (frozenset({"unilateral"}), frozenset({"bilateral"})),
    (frozenset({"proximal"}), frozenset({"distal"})),
    (frozenset({"stable"}), frozenset({"unstable"})),
    (frozenset({"systolic"}), frozenset({"diastolic"})),
)
_OPPOSITE_WORDS = frozenset().union(*(one | other for one, other in _OPPOSITES))
# A name saying "recurrent" needs the text to say so (the Index's default is a first episode).
_RECURRENT = re.compile(r"\brecurren(?:t|ce)", re.IGNORECASE)
_NOT_SPECIFIED_AS = re.compile(r"not specified as \w+", re.IGNORECASE)
_WITH = re.compile(r"\b(with|without|no)\s+([a-z]{3,})", re.IGNORECASE)
_STAGE = re.compile(r"\bstage\s*(\d)(?:\s*(?:through|-|to)\s*(?:stage\s*)?(\d))?", re.IGNORECASE)
_END_STAGE = re.compile(r"end[- ]stage (?:renal|kidney)|\besrd\b", re.IGNORECASE)
# A name that leaves the side open ("unspecified ankle", "unspecified eye").
_OPEN_SIDE = re.compile(
    r"\bunspecified (?:side|(?:[a-z]+ ){0,2}(?:ankle|knee|hip|shoulder|elbow|wrist|hand|foot|"
    r"feet|leg|arm|eye|ear|breast|lung|kidney|femur|tibia|fibula|radius|ulna|humerus|limb|thigh|"
    r"forearm|toe|finger|thumb|ovary|testis|eyelid|orbit|buttock))\b",
    re.IGNORECASE,
)
# 7th characters of later encounters, and the words that call for them.
_LATER_ENCOUNTER = re.compile(
    r"subsequent|sequela|late effect|follow[- ]?up|healing|nonunion|malunion|delayed",
    re.IGNORECASE,
)
_SEVERITY = re.compile(r"\b(mild|moderate|severe)\b", re.IGNORECASE)
# A name that says "congenital" needs the text to say so (or to be about a newborn).
_CONGENITAL = re.compile(r"congenital|hereditary|inborn|familial", re.IGNORECASE)
# Coders take a superficial injury (or vein) only when the text says so: a dog bite is an
# open bite, an injury of the shoulder is the unspecified injury.
_SUPERFICIAL = re.compile(r"\bsuperficial", re.IGNORECASE)
# Qualifiers a coder takes only when the text gives them, each with the words that give them:
# a pathological fracture or dislocation arises from disease ("Index: Fracture, pathological"),
# a postprocedural complication follows a procedure the text names, and a "subsequent" myocardial
# infarction is a second one within four weeks (I22).
_SAID_ONLY = (
    (
        re.compile(r"\bpatholog", re.IGNORECASE),
        re.compile(
            r"patholog|osteopor|fragility|neoplas|metasta|cancer|tumou?r|malignan|disease",
            re.IGNORECASE,
        ),
    ),
    (
        re.compile(
            r"post-?procedural|post-?operative|intraoperative|"
            r"following (?:an? )?(?:\w+ )?procedure",
            re.IGNORECASE,
        ),
        re.compile(
            r"post[- ]?op|procedur|intra[- ]?op|surg|operat|ectomy|otomy|ostomy|plasty|s/p\b|"
            r"status post|iatrogenic|complication",
            re.IGNORECASE,
        ),
    ),
    (
        re.compile(r"^subsequent\b", re.IGNORECASE),
        re.compile(r"\bsubsequent|reinfarct|re-infarct|recurrent|second", re.IGNORECASE),
    ),
)
# Any of the qualifiers above, so that most names are checked with one search.
_QUALIFIED = re.compile(
    "|".join(
        p.pattern
        for p in (_CONGENITAL, _SUPERFICIAL, _RECURRENT, *(name for name, _ in _SAID_ONLY))
    ),
    re.IGNORECASE,
)
_HISTORY_NAME = re.compile(r"^\s*(?:personal |family )?history of", re.IGNORECASE)


def named_side(text: str) -> str | None:
    """ "right" or "left" when the text names exactly one of them, else None."""
    found = [s for s in ("right", "left") if re.search(rf"\b{s}\b", text, re.IGNORECASE)]
    return found[0] if len(found) == 1 else None


def _chapter_fits(text: str, code: str) -> bool:
    """O needs a pregnancy word, P a newborn word, V-Y an accident word."""
    if code[0] == "O":
        return bool(_PREGNANCY.search(text))
    if code[0] == "P":
        return bool(_NEWBORN.search(text))
    return code[0] not in "VWXY" or bool(_EXTERNAL.search(text))


def _hypertension_fits(text: str, code: str) -> bool:
    """Hypertension with chronic kidney / heart disease is I12 / I11 / I13 (I.C.9.a)."""
    if not _HYPERTENSION.search(text):
        return True
    heart, kidney = _HEART_DISEASE.search(text), _KIDNEY_DISEASE.search(text)
    if heart and kidney:
        return code[:3] == "I13"
    if kidney:
        return code[:3] in ("I12", "I13")
    if heart:
        return code[:3] in ("I11", "I13")
    return True


def fits(
    text: str, qualifier: str, code: str, name: str, title: str = "", inborn: bool = False
) -> bool:
    """Whether a code's name fits a text:

    - chapters: O needs a pregnancy word, P a newborn word, V-Y an accident word; a name
      saying "congenital" (or hereditary, inborn, familial) needs that word or a newborn word,
      unless the text names what only congenital names hold (``inborn``);
    - a name saying "superficial", "recurrent", "pathological", "postprocedural" (or
      postoperative, intraoperative) or starting "Subsequent" needs the text to say so;
    - a "history of" name needs a past or family qualifier;
    - "with X" / "without X", "X" / "nonX" and named stages must not contradict the text;
    - a later-encounter injury code needs a word for it ("subsequent", "sequela", ...);
    - a severity (mild, moderate, severe) the text does not name excludes the name;
    - diabetes other than type 2 needs its type named (Official Guidelines I.C.4.a.2);
    - hypertension with chronic kidney / heart disease needs I12 / I11 / I13 (I.C.9.a);
    - a text naming one side excludes the other side and names that leave it open.

    Args:
        text: the reading searched (shorthand read, so "R" is "right").
        qualifier: the text's qualifier.
        code / name: the candidate code and the name of it that matched.
        title: the code's title when the name is another name of it: an inclusion term means
            what its title says, so "X" / "nonX" is checked against the title too
            ("multinodular goiter" under "Nontoxic multinodular goiter" is not toxic).
        inborn: whether no name that leaves "congenital" out holds all the text's words
            (:func:`~climb_vllm.resources.words.content_words`): "congenital" then separates
            nothing, and a congenital name fits ("spherocytosis" is "Hereditary
            spherocytosis", "urethral valves" "Congenital posterior urethral valves").
    """
    if not _chapter_fits(text, code):
        return False
    if _QUALIFIED.search(name) and not _qualifiers_given(text, name, inborn):
        return False
    if _HISTORY_NAME.match(name) and qualifier not in ("history", "family"):
        return False
    if _contradicts(text, name) or _other_stage(text, name):
        return False
    if title and title != name and _contradicts(text, title):
        return False
    if _later_encounter(code) and not _LATER_ENCOUNTER.search(text):
        return False
    severity = {m.lower() for m in _SEVERITY.findall(text)}
    if severity and {m.lower() for m in _SEVERITY.findall(name)} - severity:
        return False
    if code[:3] in _DIABETES_TYPE and not _DIABETES_TYPE[code[:3]].search(text):
        return False
    if not _hypertension_fits(text, code):
        return False
    side = named_side(text)
    if side is not None:
        other = "left" if side == "right" else "right"
        if re.search(rf"\b{other}\b", name, re.IGNORECASE) or _OPEN_SIDE.search(name):
            return False
    return True


def _qualifiers_given(text: str, name: str, inborn: bool) -> bool:
    """Whether the text gives each qualifier of :data:`_QUALIFIED` that the name says."""
    if (
        not inborn
        and _CONGENITAL.search(name)
        and not (_CONGENITAL.search(text) or _NEWBORN.search(text))
    ):
        return False
    if _SUPERFICIAL.search(name) and not _SUPERFICIAL.search(text):
        return False
    if _RECURRENT.search(_NOT_SPECIFIED_AS.sub("", name)) and not _RECURRENT.search(text):
        return False
    return all(in_text.search(text) for in_name, in_text in _SAID_ONLY if in_name.search(name))


def _contradicts(text: str, name: str) -> bool:
    """Whether the name says "without X" where the text says "with X", or the reverse
    ("... with heart failure" is not "... without heart failure"); says only one of two
    opposite words where the text says only the other (:data:`_OPPOSITES`: "chronic" is not
    "acute"); or says "nonX" where the text says "X", or the reverse ("toxic multinodular
    goiter" is not "Nontoxic multinodular goiter")."""
    withs = {(m.group(1).lower() == "with", m.group(2).lower()) for m in _WITH.finditer(text)}
    for m in _WITH.finditer(name):
        if (m.group(1).lower() != "with", m.group(2).lower()) in withs:
            return True
    text_words, name_words = plain_words(text), plain_words(name)
    text_opposites = text_words & _OPPOSITE_WORDS
    if text_opposites:
        for one, other in _OPPOSITES:
            for this, that in ((one, other), (other, one)):
                if (
                    text_opposites & this
                    and not text_words & that
                    and name_words & that
                    and not name_words & this
                ):
                    return True
    # "non-ST elevation" is "nonST elevation".
    lower_text, lower_name = (
        text.lower().replace("non-", "non"),
        name.lower().replace("non-", "non"),
    )
    if "non" not in lower_text and "non" not in lower_name:
        return False  # the common case, checked once per candidate name
    in_text = set(plain_words(lower_text))
    # "..., not specified as traumatic" leaves the word open.
    in_name = set(plain_words(_NOT_SPECIFIED_AS.sub("", lower_name)))
    for mine, theirs in ((in_text, in_name), (in_name, in_text)):
        for word in theirs:
            if word.startswith("non") and word[3:] in mine and word not in mine:
                return True
    return False


def congenital(name: str) -> bool:
    """Whether a name says congenital (or hereditary, inborn, familial)."""
    return bool(_CONGENITAL.search(name))


def plain_postings(names: Sequence[str]) -> dict[str, npt.NDArray[np.int32]]:
    """Content word (:func:`~climb_vllm.resources.words.content_words`) -> the sorted rows of
    ``names`` that hold it, over the names that do not say congenital (vectorised: the release
    has ~120,000 names)."""
    import polars as pl

    words = (
        pl.DataFrame({"name": list(names)})
        .with_row_index("row")
        .filter(~pl.col("name").str.contains(f"(?i){_CONGENITAL.pattern}"))
        .select("row", pl.col("name").str.to_lowercase().str.extract_all(r"[a-z]+").alias("w"))
        .explode("w")
        .drop_nulls("w")
        .filter(~pl.col("w").is_in(list(FUNCTION_WORDS)))
        # climb_vllm.resources.words.singular, vectorised.
        .with_columns(
            pl.when((pl.col("w").str.len_chars() > 4) & pl.col("w").str.ends_with("ies"))
            .then(
                pl.concat_str(
                    [pl.col("w").str.slice(0, pl.col("w").str.len_chars() - 3), pl.lit("y")]
                )
            )
            .when(
                (pl.col("w").str.len_chars() > 4)
                & pl.col("w").str.ends_with("s")
                & ~pl.col("w").str.contains("(?:ss|is|us)$")
            )
            .then(pl.col("w").str.slice(0, pl.col("w").str.len_chars() - 1))
            .otherwise(pl.col("w"))
        )
        .unique()
        .group_by("w")
        .agg(pl.col("row").sort())
    )
    return {
        word: np.asarray(rows, dtype=np.int32)
        for word, rows in zip(words["w"].to_list(), words["row"].to_list())
    }


def _later_encounter(code: str) -> bool:
    """Whether an injury code's 7th character is a later encounter (subsequent, sequela):
    a coder takes the initial encounter ("A", "B") unless the text says otherwise
    (Official Guidelines I.C.19.a)."""
    plain = code.replace(".", "")
    return code[0] in "ST" and len(plain) == 7 and plain[-1] in "DGHJKMNPQRS"


def _stages(text: str) -> set[int]:
    """The disease stages a text names ("stage 1 through stage 4" is 1-4; ESRD is 5)."""
    found: set[int] = set()
    for m in _STAGE.finditer(text):
        low = int(m.group(1))
        found.update(range(low, int(m.group(2) or low) + 1))
    if _END_STAGE.search(text):
        found.add(5)
    return found


def _other_stage(text: str, name: str) -> bool:
    """Whether the text and the name both name stages, and none is shared."""
    mine, theirs = _stages(text), _stages(name)
    return bool(mine and theirs and not mine & theirs)
