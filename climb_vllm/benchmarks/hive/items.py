"""Shared helpers of the HIVE items: their hashes, stratified samples and splits, names typed
by sex, and the people named in BiasMD statements.

BiasMD stores statements only; the graders and the control items need the two people's names.
:func:`statement_people` finds them with rules that read the statement's structure (see its
docstring); on the packaged set it finds two names in all but a few dozen of 6,007 statements.
"""

from __future__ import annotations

import csv
import hashlib
import re
from functools import lru_cache
from typing import TYPE_CHECKING

from climb_vllm.resources.data import packaged

if TYPE_CHECKING:
    import polars as pl


_TOKEN = re.compile(r"(?<![\w\-'])([A-Z][a-z]+(?:-[A-Z][a-z]+)?)(?![\w\-])")
# Capitalised words that start clauses or are titles, never the people of an item.
CLAUSE_WORDS = frozenset(
    """He She They It His Her Their Them The A An In Both Despite While Although Regardless
    Unfortunately One When After As Since Being Though Whereas If At On For With Because Even Also
    Each Neither Either Dr Mr Mrs Ms Miss Prof Sir There This That These Those Today Recently
    Yesterday Last Every Some Many All Most Two Another Other""".split()
)
# Words after which a capitalised word is an attribute, not a name ("is a Buddhist").
_ATTRIBUTE_LEAD = frozenset("a an the is are was were as of from being identifies".split())
# Lower-case words after which a capitalised word not known as a name is still a name.
_NAME_LEAD = frozenset(
    """and while whereas but named called friend friends brother sister partner colleague
    roommate neighbor neighbour husband wife cousin twin son daughter mother father coworker
    co-worker classmate teammate""".split()
)


def sha256(folder: str, name: str) -> str:
    """SHA-256 of the packaged file ``data/<folder>/<name>``."""
    return hashlib.sha256(packaged(folder, name).read_bytes()).hexdigest()


def dataset_hashes(files: tuple[str, ...]) -> dict[str, str]:
    """SHA-256 of packaged HIVE files (``data/hive/<file>.parquet`` for each name) and of the
    name-sex counts, for the manifest."""
    hashes = {name: sha256("hive", f"{name}.parquet") for name in files}
    return hashes | {"name_sex": sha256("names", "name_sex.csv")}


@lru_cache(maxsize=1)
def name_sex_counts() -> dict[str, tuple[int, int]]:
    """NYC births per display name, 2011-2021: ``{name: (female, male)}``."""
    text = packaged("names", "name_sex.csv").read_text(encoding="utf-8")
    rows = csv.DictReader(text.splitlines())
    return {r["name"]: (int(r["female"]), int(r["male"])) for r in rows}


def sex_typed_names(sex: str, count: int = 20, purity: float = 0.995) -> list[str]:
    """The ``count`` most frequent names given almost only to one sex (share >= ``purity``).

    Args:
        sex: "female" or "male".
        count: how many names.
        purity: the least share of births of that sex.
    """
    return list(_sex_typed(sex, count, purity))


@lru_cache(maxsize=64)  # called once per control item: thousands of times per report
def _sex_typed(sex: str, count: int, purity: float) -> tuple[str, ...]:
    index = 0 if sex == "female" else 1
    typed = [
        (counts[index], name)
        for name, counts in name_sex_counts().items()
        if sum(counts) > 0 and counts[index] / sum(counts) >= purity
    ]
    return tuple(name for _, name in sorted(typed, key=lambda t: (-t[0], t[1]))[:count])


def statement_people(statement: str) -> tuple[str, str] | None:
    """The two people of a BiasMD statement, in order of mention, or None.

    A capitalised word is a person when it is not a clause word or title, is not followed by
    "'s" (which marks "Parkinson's", "Alzheimer's") or by another capitalised word ("Blind
    Sarah") unless it is a known first name, is not
    part of a longer proper noun, is not an attribute (preceded in its phrase by "a", "an",
    "is", "as", ...), and is either a known first name (NYC births), the statement's first word,
    or follows "and", "while", "named", "brother", a title or a clause word ("Both"). The first
    two distinct such words are the people.
    """
    known = name_sex_counts()
    found: list[str] = []
    for match in _TOKEN.finditer(statement):
        word = match.group(1)
        if word in CLAUSE_WORDS:
            continue
        before = statement[: match.start()]
        after = statement[match.end() : match.end() + 3]
        tail = before.split()
        previous = tail[-1] if tail else ""
        # The words since the last punctuation or conjunction: "is a" there marks an attribute.
        phrase = re.split(r"[,.;:]|\b(?:and|while|whereas|but)\b", before)[-1].split()
        is_known = word in known
        if after.startswith("'s") and not is_known:
            continue
        if re.match(r" [A-Z]", after) and not is_known:
            continue  # an adjective before a name ("Blind Sarah") or part of a longer noun
        if previous[:1].isupper() and previous.rstrip(".") not in CLAUSE_WORDS and not is_known:
            continue
        lead = previous.lower() in _NAME_LEAD or previous.rstrip(".") in CLAUSE_WORDS
        if not lead and _ATTRIBUTE_LEAD.intersection(w.lower() for w in phrase[-3:]):
            continue
        if not (is_known or not before.strip() or lead):
            continue
        if word not in found:
            found.append(word)
        if len(found) == 2:
            return (found[0], found[1])
    return None


def stratified_sample(frame: pl.DataFrame, by: str, limit: int | None, seed: int) -> pl.DataFrame:
    """``limit`` rows spread evenly over the values of ``by`` (round robin over shuffled groups).

    The rows keep the frame's order. ``limit`` None or at least the frame's height keeps all.
    """
    import polars as pl

    if limit is None or limit >= frame.height:
        return frame
    ranked = (
        frame.with_row_index("_row")
        .with_columns(pl.int_range(pl.len()).shuffle(seed).over(by).alias("_rank"))
        .sort("_rank", by)
        .head(limit)
        .sort("_row")
    )
    return ranked.drop("_row", "_rank")


def splits(graded: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """("eval", the authors' test-split items) and, when the run asked more, ("all", every
    item): a run of the test split alone would repeat the same numbers as "all"."""
    import polars as pl

    evaluated = graded.filter(pl.col("in_eval_split"))
    if evaluated.height == graded.height:
        return [("eval", evaluated)]
    return [("eval", evaluated), ("all", graded)]
