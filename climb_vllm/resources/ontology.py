"""ICD-10-CM releases: codes, descriptions, the five hierarchy levels and the sex edits.

A release is a Parquet table packaged under ``climb_vllm/data/icd10cm`` (or any file the user
exports with ``climb-vllm icd-export``). Each table is derived from the PyPI package
``simple-icd-10-cm`` by :func:`export_release`, so the evaluator itself does not need that package
at run time and two releases can be used side by side (the package holds one release per version).

Method decisions (CLIMB paper, section 3.1, and CliBench's level computation):

* The intrinsic universe is every category and subcategory code of the release, billable or not,
  with its description: 95,358 codes in the 2021 release (the paper reports 94,739).
* Levels follow CliBench: the ancestor chain ``[chapter, block, category, subcategory, ...]`` is
  extended with the code itself and level L takes element L-1 of that chain; where the chain is
  shorter than five (a category without subcategories, say) the level falls back to the code
  itself. So L1 is the chapter, L2 the block, L3 the category, L4 the first subcategory and L5
  the full code.
* Sex-specific codes are the CMS Medicare Code Editor sex edits (female-only, male-only),
  restricted to codes valid in the release: 3,116 and 529 in 2021, all billable. The edits list
  billable codes only, so their non-billable headers (the pregnancy categories O00-O9A, say)
  would count as sex-neutral; :meth:`Ontology.sex_lists` offers two rules (``SEX_RULES``):
  ``listed`` takes the edits as published; ``descendants`` (the default for the intrinsic
  tables) also makes a non-billable code female-only (male-only) when every billable code below
  it is, and takes a header whose billable codes are all sex-specific but of both sexes (C50,
  breast cancer) out of the sex-neutral codes too. In 2021 that adds 788 female-only, 144
  male-only and 33 mixed headers (965 codes).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from climb_vllm.core.errors import UserError
from climb_vllm.resources.data import packaged

if TYPE_CHECKING:  # polars is imported lazily so that the scoring path runs without it
    import polars as pl

#: Releases packaged with climb-vllm: release name -> (file, the library version it came from).
PACKAGED_RELEASES: dict[str, tuple[str, str]] = {
    "2021": ("icd10cm_2021.parquet", "simple-icd-10-cm 1.2.0 (ICD-10-CM January 2021)"),
    "2026": ("icd10cm_2026.parquet", "simple-icd-10-cm 1.5.0 (ICD-10-CM April 2026)"),
}
DEFAULT_RELEASE = "2021"
LEVELS = ("l1", "l2", "l3", "l4", "l5")
LEVEL_NAMES = {
    "l1": "chapter",
    "l2": "block",
    "l3": "category",
    "l4": "subcategory",
    "l5": "code",
}


#: Rules that decide which codes are sex-specific (see the module note).
SEX_RULES = ("descendants", "listed")


@dataclass(frozen=True)
class SexLists:
    """The sex-specific codes of a release under one rule.

    Attributes:
        rule: "descendants" or "listed".
        female: female-only codes.
        male: male-only codes.
        mixed: non-billable codes whose billable codes are all sex-specific, of both sexes
            (empty under "listed"); neither female-only nor male-only, and not sex-neutral.
    """

    rule: str
    female: frozenset[str]
    male: frozenset[str]
    mixed: frozenset[str]

    @property
    def not_neutral(self) -> frozenset[str]:
        """Every code that is not sex-neutral."""
        return self.female | self.male | self.mixed


#: Short names of the ICD-10-CM chapters (the release's L1 nodes are their numbers).
CHAPTER_NAMES = {
    "1": "Infectious",
    "2": "Neoplasms",
    "3": "Blood, immune",
    "4": "Endocrine, metabolic",
    "5": "Mental",
    "6": "Nervous system",
    "7": "Eye",
    "8": "Ear",
    "9": "Circulatory",
    "10": "Respiratory",
    "11": "Digestive",
    "12": "Skin",
    "13": "Musculoskeletal",
    "14": "Genitourinary",
    "15": "Pregnancy",
    "16": "Perinatal",
    "17": "Congenital",
    "18": "Symptoms, signs",
    "19": "Injury, poisoning",
    "20": "External causes",
    "21": "Health services",
    "22": "Special purposes",
}


def chapter_name(chapter: str) -> str:
    """ "9 Circulatory" for chapter 9 (the bare label for one the table does not name)."""
    return f"{chapter} {CHAPTER_NAMES[chapter]}" if chapter in CHAPTER_NAMES else chapter


def dotted_code(code: str) -> str:
    """A code in the release's dotted form: "e119" -> "E11.9"; "I10" stays."""
    code = code.strip().upper()
    if "." not in code and len(code) > 3:
        code = code[:3] + "." + code[3:]
    return code


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Ontology:
    """One ICD-10-CM release.

    Attributes:
        release: the release name ("2021", "2026") or the path of a user-exported table.
        table: one row per code of the intrinsic universe, in the release's order, with columns
            ``code, description, is_leaf, l1..l5`` (level columns hold ancestor codes).
        titles: every node (chapters and blocks too) as ``kind, code, description``.
        female_only / male_only: the sex edits restricted to codes of this release.
        sha256: hash of the release table file, for the manifest.
    """

    release: str
    table: pl.DataFrame
    titles: pl.DataFrame
    female_only: frozenset[str]
    male_only: frozenset[str]
    sha256: str
    source: str
    _index: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    _sex: dict[str, SexLists] = field(default_factory=dict, repr=False, compare=False)

    def sex_lists(self, rule: str = "descendants") -> SexLists:
        """The female-only, male-only (and mixed) codes under ``rule`` (see the module note).

        A code's billable descendants are the billable codes that extend it (``O00`` ->
        ``O00.0``, ``O00.00``, ...), which is ICD-10-CM's hierarchy for dotted codes.

        Raises:
            UserError: an unknown rule.
        """
        if rule not in SEX_RULES:
            raise UserError(f"Unknown sex rule {rule!r}.", f"use one of {', '.join(SEX_RULES)}.")
        if rule not in self._sex:
            self._sex[rule] = self._sex_lists(rule)
        return self._sex[rule]

    def _sex_lists(self, rule: str) -> SexLists:
        from bisect import bisect_left

        if rule == "listed":
            return SexLists(rule, self.female_only, self.male_only, frozenset())
        codes = self.table["code"].to_list()
        billable = sorted(c for c, leaf in zip(codes, self.table["is_leaf"]) if leaf)
        female, male, mixed = set(self.female_only), set(self.male_only), set()
        for code, leaf in zip(codes, self.table["is_leaf"]):
            if leaf:
                continue
            below = billable[bisect_left(billable, code) : bisect_left(billable, code + "\uffff")]
            below = [c for c in below if c != code]
            if not below:
                continue
            females = sum(c in self.female_only for c in below)
            males = sum(c in self.male_only for c in below)
            if females == len(below):
                female.add(code)
            elif males == len(below):
                male.add(code)
            elif females + males == len(below):
                mixed.add(code)
        return SexLists(rule, frozenset(female), frozenset(male), frozenset(mixed))

    @property
    def codes(self) -> list[str]:
        """All codes of the universe in release order."""
        return list(self.table["code"])

    def __len__(self) -> int:
        return self.table.height

    def __contains__(self, code: object) -> bool:
        if not self._index:
            self._index.update({c: i for i, c in enumerate(self.table["code"])})
        return code in self._index

    def levels(self, code: str) -> tuple[str, str, str, str, str]:
        """The (L1, L2, L3, L4, L5) ancestors of ``code``; raises UserError for unknown codes."""
        if code not in self:
            raise UserError(
                f"Unknown ICD-10-CM code {code!r} in release {self.release}.",
                "use a dotted code of this release (for example 'E11.9'), or pick the release "
                "with --icd-release.",
            )
        row = self.table.row(self._index[code], named=True)
        return (row["l1"], row["l2"], row["l3"], row["l4"], row["l5"])

    def is_billable(self, code: str) -> bool:
        """Whether ``code`` is a billable (leaf) code of the release."""
        return code in self and bool(self.table["is_leaf"][self._index[code]])

    def billable_under(self, code: str) -> list[str]:
        """The billable codes that extend ``code`` (itself if billable), in release order."""
        if code not in self:
            return []
        codes = self.table["code"]
        found: list[str] = []
        for i in range(self._index[code], self.table.height):
            other = codes[i]
            if not other.startswith(code):
                break
            if self.table["is_leaf"][i]:
                found.append(other)
        return found

    def default_leaf(
        self, code: str, side: str | None = None, nos: frozenset[str] = frozenset()
    ) -> str | None:
        """The billable code a coder would take for ``code``: itself when billable; for a
        non-billable header, its default child, descending one level at a time (None when a
        level has no default).

        At each level the default child is the first that :func:`_default_child` finds, and
        a 7th character may follow "X" placeholders (S93.02 -> S93.02XA).

        Args:
            code: the code.
            side: "right" or "left" when the text names one side: at a level whose children
                name sides, only the children of that side are considered (S93.40 ->
                S93.401A for "right").
            nos: the codes with an inclusion term "... NOS"
                (:func:`~climb_vllm.resources.icd_terms.nos_codes`); empty: that rule is off.
        """
        if code not in self:
            return None
        descriptions = self.table["description"]
        while not self.is_billable(code):
            children = self._children(code)
            if not children:
                return None
            titles = [descriptions[self._index[c]].lower() for c in children]
            if side is not None:
                sided = [(c, t) for c, t in zip(children, titles) if side in t.split()]
            else:
                # A text that names no side takes a child that names none either.
                sided = [(c, t) for c, t in zip(children, titles) if not _SIDES & set(t.split())]
            if sided:
                children, titles = [c for c, _ in sided], [t for _, t in sided]
            parent = descriptions[self._index[code]].lower()
            chosen = _default_child(children, titles, nos, parent)
            if chosen is None:
                return None
            code = chosen
        return code

    def _children(self, code: str) -> list[str]:
        """The codes one level below ``code``: one more character, ignoring the dot; where
        there are none, a 7th character after "X" placeholders (S93.02 -> S93.02XA,
        O32.1 -> O32.1XX0)."""
        length = len(code.replace(".", ""))
        codes = self.table["code"]
        found: list[str] = []
        placed: list[str] = []
        # Descendants follow their header in release order.
        for i in range(self._index[code] + 1, self.table.height):
            other = codes[i]
            if not other.startswith(code):
                break
            rest = other.replace(".", "")[length:]
            if len(rest) == 1:
                found.append(other)
            elif set(rest[:-1]) == {"X"}:
                placed.append(other)
        return found or placed

    def sex_neutral(self) -> pl.DataFrame:
        """Rows of the universe that are in neither sex-specific list."""
        import polars as pl

        excluded = list(self.female_only | self.male_only)
        return self.table.filter(~pl.col("code").is_in(excluded))

    def sex_labels(self) -> pl.DataFrame:
        """``code, sex_specific`` with values 'female', 'male' or 'neutral' for every code."""
        import polars as pl

        return self.table.select(
            "code",
            pl.when(pl.col("code").is_in(list(self.female_only)))
            .then(pl.lit("female"))
            .when(pl.col("code").is_in(list(self.male_only)))
            .then(pl.lit("male"))
            .otherwise(pl.lit("neutral"))
            .alias("sex_specific"),
        )

    def stratified_subset(self, n: int, seed: int = 0) -> list[str]:
        """A deterministic sample of ``n`` codes covering every chapter and both sex lists.

        Each chapter gets at least one code, female-only and male-only codes get at least
        ``max(1, n // 20)`` each, and the rest is allocated to chapters in proportion to their
        size. The result keeps release order, so chunk boundaries are stable.

        Args:
            n: how many codes; must be at least the number of chapters plus two.
            seed: sampling seed.
        """
        import polars as pl

        chapters = self.table["l1"].n_unique()
        if n >= self.table.height:
            return self.codes
        if n < chapters + 2:
            raise UserError(
                f"--limit {n} is too small to cover all {chapters} chapters and both sex lists.",
                f"use --limit {chapters + 2} or more, or omit --limit for every code.",
            )
        labelled = self.table.with_row_index("pos").join(self.sex_labels(), on="code")
        per_sex = max(1, n // 20)
        picked: list[pl.DataFrame] = []
        for sex in ("female", "male"):
            pool = labelled.filter(pl.col("sex_specific") == sex)
            picked.append(pool.sample(min(per_sex, pool.height), seed=seed))
        taken = pl.concat(picked)
        rest = labelled.join(taken.select("code"), on="code", how="anti")
        budget = n - taken.height
        sizes = rest.group_by("l1").len().sort("l1")
        # One code per chapter first, then the remainder in proportion to chapter size
        # (largest remainders), capped by what each chapter holds.
        spare = budget - sizes.height
        total = int(sizes["len"].sum())
        exact = [spare * size / total for size in sizes["len"]]
        quotas = [1 + int(x) for x in exact]
        order = sorted(range(len(exact)), key=lambda i: exact[i] - int(exact[i]), reverse=True)
        for i in order[: budget - sum(quotas)]:
            quotas[i] += 1
        chosen = [taken]
        for (chapter, size), quota in zip(sizes.iter_rows(), quotas):
            pool = rest.filter(pl.col("l1") == chapter)
            chosen.append(pool.sample(min(quota, size), seed=seed))
        return list(pl.concat(chosen).sort("pos")["code"])


def _sex_edits(valid: set[str]) -> tuple[frozenset[str], frozenset[str]]:
    import polars as pl

    lists = []
    for name in ("female_only.csv", "male_only.csv"):
        codes = pl.read_csv(packaged("icd10cm", name), schema_overrides={"code": pl.String})["code"]
        # The lists are the FY2024 MCE edits; codes that the release does not contain are
        # dropped, which reproduces the paper's 3,116 female-only codes for 2021.
        lists.append(frozenset(c for c in codes if c in valid))
    return lists[0], lists[1]


def load_ontology(release: str = DEFAULT_RELEASE) -> Ontology:
    """Load a packaged release by name ("2021", "2026") or a table exported by icd-export.

    Args:
        release: a key of :data:`PACKAGED_RELEASES` or the path of a Parquet file written by
            :func:`export_release`.
    """
    import polars as pl

    if release in PACKAGED_RELEASES:
        file_name, source = PACKAGED_RELEASES[release]
        path = packaged("icd10cm", file_name)
    else:
        path = Path(release)
        source = f"exported table {path}"
        if not path.is_file():
            known = ", ".join(PACKAGED_RELEASES)
            raise UserError(
                f"Unknown ICD-10-CM release {release!r}.",
                f"use one of {known}, or export another release with "
                "'climb-vllm icd-export FILE.parquet' and pass that file.",
            )
    try:
        nodes = pl.read_parquet(path)
    except Exception as exc:  # a user file may be anything; say which one and why
        raise UserError(
            f"Cannot read ICD-10-CM table {path}: {exc}.",
            "re-export it with 'climb-vllm icd-export FILE.parquet'.",
        ) from exc
    missing = {"kind", "code", "description", "is_leaf", *LEVELS} - set(nodes.columns)
    if missing:
        raise UserError(
            f"ICD-10-CM table {path} lacks columns {sorted(missing)}.",
            "re-export it with 'climb-vllm icd-export FILE.parquet'.",
        )
    table = nodes.filter(pl.col("kind") == "code").drop("kind")
    titles = nodes.select("kind", "code", "description")
    female, male = _sex_edits(set(table["code"]))
    return Ontology(
        release=release,
        table=table,
        titles=titles,
        female_only=female,
        male_only=male,
        sha256=file_sha256(path),
        source=source,
    )


def export_release(out: Path) -> int:
    """Write the release held by the installed ``simple-icd-10-cm`` to a Parquet table.

    Rows: every chapter and block (kind 'chapter' / 'block', no levels) and every category and
    subcategory (kind 'code', with levels). Returns the number of codes written.

    Args:
        out: destination file; written atomically.
    """
    try:
        import simple_icd_10_cm as cm
    except ImportError as exc:
        raise UserError(
            "icd-export needs the simple-icd-10-cm package.",
            "pip install simple-icd-10-cm==VERSION (1.2.0 holds the 2021 release, 1.5.0 April "
            "2026) into this environment and rerun.",
        ) from exc
    import polars as pl

    rows: list[dict[str, object]] = []
    seen: set[tuple[str, str]] = set()
    for code in cm.get_all_codes(True):
        # Some names are both a block and a category (for example B10); the library lists them
        # twice and resolves the plain name to the category.
        if cm.is_chapter(code) and ("chapter", code) not in seen:
            seen.add(("chapter", code))
            rows.append({"kind": "chapter", "code": code, "description": cm.get_description(code)})
        if cm.is_block(code) and ("block", code) not in seen:
            seen.add(("block", code))
            rows.append({"kind": "block", "code": code, "description": cm.get_description(code)})
        if cm.is_category_or_subcategory(code) and ("code", code) not in seen:
            seen.add(("code", code))
            # CliBench: ancestors from the root down, then the code itself; short chains fall
            # back to the code at the missing levels.
            chain = list(reversed(cm.get_ancestors(code))) + [code]
            levels = {lv: (chain[i] if i < len(chain) else code) for i, lv in enumerate(LEVELS)}
            levels["l5"] = code
            rows.append(
                {
                    "kind": "code",
                    "code": code,
                    "description": cm.get_description(code),
                    "is_leaf": cm.is_leaf(code),
                    **levels,
                }
            )
    frame = pl.DataFrame(
        rows,
        schema={
            "kind": pl.String,
            "code": pl.String,
            "description": pl.String,
            "is_leaf": pl.Boolean,
            **{lv: pl.String for lv in LEVELS},
        },
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    frame.write_parquet(tmp, compression="zstd", compression_level=19)
    tmp.replace(out)
    return int((frame["kind"] == "code").sum())


def _unspecified(title: str) -> bool:
    return "unspecified" in title or "not specified" in title


_SIDES = frozenset({"right", "left"})


def _plain(title: str) -> str:
    """A title's words without punctuation ("alcohol abuse, with withdrawal, unspecified" and
    "alcohol abuse with withdrawal, unspecified" read the same)."""
    return " ".join(re.findall(r"[a-z0-9]+", title.lower()))


def _stem(code: str) -> str:
    """``code`` without its 7th character and the "X" placeholders before it (S93.02XA ->
    S93.02), so that its last character is the one the tabular list's levels assign."""
    if len(code.replace(".", "")) == 7:
        code = code[:-1]
    return code.rstrip("X")


def _default_child(
    children: list[str], titles: list[str], nos: frozenset[str] = frozenset(), parent: str = ""
) -> str | None:
    """The child a coder takes when the text says nothing more, in this order (titles in lower
    case, row-aligned with ``children``; ``nos``: the codes with an inclusion term "... NOS";
    ``parent``: their parent's title in lower case), leaving out a child titled "with other
    complication" when a sibling is titled "without complication" (B27.9 -> B27.90, not
    B27.99):

    0. titled as the parent followed by ", unspecified", punctuation aside (F10.12 -> F10.129,
       "alcohol abuse with intoxication, unspecified"; F10.13 -> F10.139);
    0a. titled "..., uncomplicated", the Index's default where the children name what the
       condition caused (F10.1 -> F10.10, not F10.19, "with unspecified alcohol-induced
       disorder"; F11.2 -> F11.20);
    0b. titled as the parent followed by ", unspecified site", and ending in "0" or "9" before
       any 7th character (C81.9 -> C81.90, where C81.99 is "Hodgkin lymphoma, unspecified,
       extranodal and solid organ sites"; T20.0 -> T20.00XA, where T20.09XA is "multiple
       sites"; a child ending in "1" is a side or an organism);
    1. ending in "9" and titled unspecified (I50 -> I50.9, I82.40 -> I82.409);
    2. ending in "0" and titled unspecified (E78.0 -> E78.00, S72.0 -> S72.00, where S72.09 is
       "other"; O32.1 -> O32.1XX0, "not applicable or unspecified"; K40.9 -> K40.90, "not
       specified as recurrent");
    3. ending in "9", unless it is a 7th character (E11 -> E11.9, "without complications";
       I26.9 -> I26.99, "other pulmonary embolism", the Index's code for a pulmonary embolism
       NOS; a 7th "9" of the O chapter is "other fetus");
    4. the first titled unspecified;
    5. the only one titled as the parent (I85 -> I85.0, "Esophageal varices", beside I85.1,
       "Secondary esophageal varices");
    6. the only one with an inclusion term "... NOS", the tabular list's own statement of
       the default (C91.1 -> C91.10, "chronic lymphocytic leukemia of B-cell type NOS"; J45.2
       -> J45.20; N40 -> N40.0, "enlarged prostate NOS"; I85 -> I85.00);
    7. the one titled "without" more often than every other child (the default when no
       complication is named: I25.1 -> I25.10, K70.1 -> K70.10; K80.2 -> K80.20, "without
       cholecystitis without obstruction");
    8. a 7th character "A", initial encounter (S06.0X9 -> S06.0X9A);
    9. the only child;
    10. the only child ending in "8" and titled "other".
    """
    extension = len(children[0].replace(".", "")) == 7
    pairs = list(zip(children, titles))
    if any("without complication" in t for t in titles):
        # "With other complication" is never what a text that names none means (B27.9 ->
        # B27.90, "unspecified without complication", not B27.99).
        pairs = [(c, t) for c, t in pairs if "with other complication" not in t]
    rules: tuple[Callable[[str, str], bool], ...] = (
        lambda c, t: _plain(t) == _plain(f"{parent} unspecified"),
        lambda c, t: t.endswith(", uncomplicated"),
        lambda c, t: t == f"{parent}, unspecified site" and _stem(c)[-1] in "09",
        lambda c, t: c.endswith("9") and _unspecified(t),
        lambda c, t: c.endswith("0") and _unspecified(t),
        lambda c, t: c.endswith("9") and not extension,
        lambda c, t: _unspecified(t),
    )
    for rule in rules:
        chosen = next((c for c, t in pairs if rule(c, t)), None)
        if chosen is not None:
            return chosen
    same = [c for c, t in pairs if t == parent]
    if len(same) == 1:
        return same[0]
    stated = [c for c, _ in pairs if c in nos]
    if len(stated) == 1:
        return stated[0]
    counts = [t.count("without") for _, t in pairs]
    if counts and max(counts) > 0 and counts.count(max(counts)) == 1:
        return pairs[counts.index(max(counts))][0]
    if extension:
        chosen = next((c for c in children if c.endswith("A")), None)
        if chosen is not None:
            return chosen
    if len(children) == 1:
        return children[0]
    # With no unspecified child, the "other" child is what the Index gives for the bare term
    # (D63 -> D63.8, "Anemia in other chronic diseases classified elsewhere"; D61.81,
    # "Pancytopenia" -> D61.818, "Other pancytopenia").
    other = [c for c, t in pairs if _stem(c).endswith("8") and "other" in t.split()]
    return other[0] if len(other) == 1 else None
