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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.core.errors import UserError
from climb_vllm.resources.data import packaged
from climb_vllm.resources.default_child import (
    GENERIC_WORDS,
    by_side,
    by_words,
    common_words,
    own_words,
)
from climb_vllm.resources.words import content_words

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
        self,
        code: str,
        side: str | None = None,
        nos: frozenset[str] = frozenset(),
        said: frozenset[str] = frozenset(),
    ) -> str | None:
        """The billable code a coder would take for ``code``: itself when billable; for a
        non-billable header, its default child, descending one level at a time (None when a
        level has no default).

        At each level the children the side allows (:func:`~climb_vllm.resources.
        default_child.by_side`) are narrowed to those whose own words the text says
        (:func:`~climb_vllm.resources.default_child.by_words`), and of those the first that
        :func:`~climb_vllm.resources.default_child.default_child` finds is taken; a 7th
        character may follow "X" placeholders (S93.02 -> S93.02XA).

        Args:
            code: the code.
            side: "right" or "left" when the text names one side: at a level whose children
                name sides, only the children of that side are considered (S93.40 ->
                S93.401A for "right").
            nos: the codes with an inclusion term "... NOS"
                (:func:`~climb_vllm.resources.icd_terms.nos_codes`); empty: that rule is off.
            said: the text's content words (:func:`~climb_vllm.resources.words.
                content_words`); empty: every level takes its default for a text that says
                nothing more.
        """
        if code not in self:
            return None
        while not self.is_billable(code):
            children = self._children(code)
            if not children:
                return None
            chosen = self._choose(code, children, side, nos, said)
            if chosen is None:
                return None
            code = chosen
        return code

    def refine(
        self,
        code: str,
        side: str | None = None,
        nos: frozenset[str] = frozenset(),
        said: frozenset[str] = frozenset(),
        fit: Callable[[str], bool] | None = None,
        named: frozenset[str] = frozenset(),
    ) -> str:
        """``code``, or the sibling that says more of the text's words than ``code`` does
        (:func:`~climb_vllm.resources.default_child.by_words`): a search that found S73.003A,
        "subluxation of unspecified hip", for "dislocation of the hip" gives S73.006A. The
        siblings are the children of the header above ``code`` (without its 7th character)
        that ``fit`` accepts; ``named``: the content words of the name the search found
        ``code`` by, when that is another of its names (an inclusion term: "lymphocytic
        thyroiditis" of E06.3, "Autoimmune thyroiditis"), which count as ``code``'s own; other
        arguments as for :meth:`default_leaf`.

        ``code`` stands where its title shares no content word with the text but generic ones
        (the search found it by meaning: "chronic back pain" is M54.9, "Dorsalgia", whatever
        M54.5, "Low back pain", says), and where no sibling says strictly more of the text's
        own words; a code of a side the text does not name yields to a sibling that names
        none and says as much (S43.005A, left, -> S43.006A for "dislocation of the
        shoulder").
        """
        base = code[:-1] if len(code.replace(".", "")) == 7 else code
        parent = self._parent(base)
        if parent is None or not said:
            return code
        children = self._children(parent)
        if base not in children:
            return code
        descriptions = self.table["description"]
        if not (content_words(descriptions[self._index[base]]) - GENERIC_WORDS | named) & said:
            return code
        titles = [descriptions[self._index[c]].lower() for c in children]
        sided = set(by_side(children, titles, side))
        base_sided = children.index(base) in sided
        allowed = [
            k
            for k, c in enumerate(children)
            if c == base or (k in sided and (fit is None or fit(c)))
        ]
        codes, kept = [children[k] for k in allowed], [titles[k] for k in allowed]
        own = own_words(kept)
        at = codes.index(base)
        own[at] |= named - common_words(kept)
        hits = [len(w & said) for w in own]
        mine = hits.pop(at)
        # A code of a side the text does not name yields to a sibling that says as much.
        if not hits or max(hits) < mine or (max(hits) == mine and base_sided):
            return code
        if not base_sided:
            at = codes.index(base)
            codes, kept = codes[:at] + codes[at + 1 :], kept[:at] + kept[at + 1 :]
        chosen = by_words(codes, kept, said, nos, descriptions[self._index[parent]].lower())
        if chosen is None:
            return code
        return self.default_leaf(chosen, side, nos, said) or code

    def _choose(
        self,
        code: str,
        children: list[str],
        side: str | None,
        nos: frozenset[str],
        said: frozenset[str],
    ) -> str | None:
        """The child of ``code`` among ``children`` that a text naming ``side`` and saying
        ``said`` takes, or None (see :meth:`default_leaf`)."""
        descriptions = self.table["description"]
        titles = [descriptions[self._index[c]].lower() for c in children]
        kept = by_side(children, titles, side)
        children, titles = [children[k] for k in kept], [titles[k] for k in kept]
        return by_words(children, titles, said, nos, descriptions[self._index[code]].lower())

    def _parent(self, code: str) -> str | None:
        """The header one level above ``code``: its longest shorter prefix in the release
        (T42.4X2 -> T42.4X, S73.006 -> S73.00), or None for a category."""
        plain = code.replace(".", "")
        for length in range(len(plain) - 1, 2, -1):
            prefix = plain[:length]
            dotted = prefix if length == 3 else f"{prefix[:3]}.{prefix[3:]}"
            if dotted in self:
                return dotted
        return None

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

    frame = pl.DataFrame(
        _release_rows(cm),
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


def _release_rows(cm: Any) -> list[dict[str, object]]:
    """The rows of :func:`export_release` read from the ``simple_icd_10_cm`` module ``cm``."""
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
    return rows
