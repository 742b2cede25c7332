"""The packaged ICD-10-CM releases, levels and sex edits."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.resources.icd_terms import nos_codes
from climb_vllm.resources.ontology import LEVELS, Ontology, export_release, load_ontology


@pytest.fixture(scope="module")
def icd2021():  # type: ignore[no-untyped-def]
    return load_ontology("2021")


def test_2021_counts_match_the_paper_release(icd2021) -> None:  # type: ignore[no-untyped-def]
    assert len(icd2021) == 95_358
    assert len(icd2021.female_only) == 3_116
    assert len(icd2021.male_only) == 529
    assert icd2021.sex_neutral().height == 95_358 - 3_116 - 529


def test_levels_follow_the_ancestor_chain(icd2021) -> None:  # type: ignore[no-untyped-def]
    assert icd2021.levels("S52.521A") == ("19", "S50-S59", "S52", "S52.5", "S52.521A")
    # A category without subcategories falls back to itself at L4 and L5.
    assert icd2021.levels("A34") == ("1", "A30-A49", "A34", "A34", "A34")
    # B10 is both a block and a category: the block is L2, the category L3.
    assert icd2021.levels("B10.01") == ("1", "B10", "B10", "B10.0", "B10.01")


def test_unknown_code_names_the_fix(icd2021) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UserError, match="--icd-release"):
        icd2021.levels("Z99.999X")


def test_packaged_2021_table_equals_a_fresh_export(tmp_path: Path) -> None:
    # The dev environment pins simple-icd-10-cm 1.2.0, the library the 2021 table came from.
    out = tmp_path / "export.parquet"
    assert export_release(out) == 95_358
    fresh = pl.read_parquet(out)
    packaged = pl.read_parquet(
        Path(__file__).parents[2] / "climb_vllm" / "data" / "icd10cm" / "icd10cm_2021.parquet"
    )
    assert fresh.equals(packaged)
    # An exported file is a valid --icd-release.
    assert len(load_ontology(str(out))) == 95_358


def test_newer_release_is_selectable() -> None:
    icd2026 = load_ontology("2026")
    assert len(icd2026) == 98_186
    assert len(icd2026.male_only) == 529
    assert len(icd2026.female_only) > 3_116  # FY2024 edits include codes added after 2021


def test_unknown_release_names_the_fix() -> None:
    with pytest.raises(UserError, match="icd-export"):
        load_ontology("1999")


def test_corrupt_release_file_is_a_user_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(UserError, match="re-export"):
        load_ontology(str(bad))


def test_stratified_subset_covers_chapters_and_sex_lists(icd2021) -> None:  # type: ignore[no-untyped-def]
    subset = icd2021.stratified_subset(300, seed=1)
    assert len(subset) == len(set(subset)) == 300
    chosen = icd2021.table.filter(pl.col("code").is_in(subset))
    assert chosen["l1"].n_unique() == icd2021.table["l1"].n_unique()
    assert set(subset) & icd2021.female_only and set(subset) & icd2021.male_only
    assert subset == icd2021.stratified_subset(300, seed=1)
    assert subset != icd2021.stratified_subset(300, seed=2)
    order = {c: i for i, c in enumerate(icd2021.codes)}
    assert subset == sorted(subset, key=order.__getitem__)


def test_stratified_subset_too_small_is_refused(icd2021) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UserError, match="--limit"):
        icd2021.stratified_subset(5)


def _hand_built(female: set[str], male: set[str]) -> Ontology:
    """A tiny release: three categories with billable children, one billable category."""
    rows = [
        ("A00", False),
        ("A00.0", True),
        ("A00.1", True),  # both children female-only
        ("B00", False),
        ("B00.0", True),
        ("B00.1", True),  # one female, one male
        ("C00", False),
        ("C00.0", False),
        ("C00.00", True),
        ("C00.01", True),
        ("C00.1", True),
        ("D00", True),
    ]
    table = pl.DataFrame(
        {
            "code": [c for c, _ in rows],
            "description": [f"title {c}" for c, _ in rows],
            "is_leaf": [leaf for _, leaf in rows],
            **{lv: [c for c, _ in rows] for lv in LEVELS},
        }
    )
    titles = table.select(pl.lit("code").alias("kind"), "code", "description")
    return Ontology("hand", table, titles, frozenset(female), frozenset(male), "0", "hand")


def test_sex_rules_on_a_hand_built_release() -> None:
    ontology = _hand_built({"A00.0", "A00.1", "B00.0", "C00.00", "C00.01"}, {"B00.1", "D00"})
    listed = ontology.sex_lists("listed")
    assert listed.female == {"A00.0", "A00.1", "B00.0", "C00.00", "C00.01"}
    assert listed.male == {"B00.1", "D00"} and not listed.mixed
    rule = ontology.sex_lists("descendants")
    # A00: every billable code below is female-only; C00.0 too, but not C00 (C00.1 is neutral).
    assert rule.female == listed.female | {"A00", "C00.0"}
    assert rule.male == listed.male
    # B00: all sex-specific, of both sexes: neither list, and not sex-neutral either.
    assert rule.mixed == {"B00"}
    assert "B00" in rule.not_neutral and "C00" not in rule.not_neutral
    with pytest.raises(UserError, match="sex rule"):
        ontology.sex_lists("by-title")


def test_the_default_rule_adds_the_pregnancy_headers_in_2021() -> None:
    ontology = load_ontology("2021")
    lists = ontology.sex_lists()
    assert "O00" in lists.female and "O00" not in ontology.female_only
    added = (lists.female - ontology.female_only) | (lists.male - ontology.male_only)
    assert (len(added), len(lists.mixed)) == (932, 33)
    assert "C50" in lists.mixed  # breast cancer: female and male codes below it


def test_billable_codes_and_the_billable_codes_under_a_header() -> None:
    from climb_vllm.resources.ontology import load_ontology

    ontology = load_ontology("2021")
    # N18.3 became a header in the 2021 release, split into N18.30-N18.32.
    assert not ontology.is_billable("N18.3")
    assert ontology.billable_under("N18.3") == ["N18.30", "N18.31", "N18.32"]
    assert ontology.is_billable("I10") and ontology.billable_under("I10") == ["I10"]
    assert not ontology.is_billable("XYZ") and ontology.billable_under("XYZ") == []


@pytest.mark.parametrize(
    ("header", "leaf"),
    [
        ("I10", "I10"),  # billable: itself
        ("I50", "I50.9"),  # the "9" slot
        ("E11", "E11.9"),  # "9" beats the first "unspecified" title (E11.8)
        ("I82.40", "I82.409"),
        ("H66.9", "H66.90"),  # no "9": the first "unspecified" title
        ("E78.0", "E78.00"),
        ("S06.0X9", "S06.0X9A"),  # 7th character: initial encounter
        ("S72.00", "S72.009A"),  # both rules, one level at a time
        ("S72.0", "S72.009A"),  # S72.09 is "other": the "0" titled unspecified wins
        ("I25.1", "I25.10"),  # the one "without" child (without angina)
        ("K70.1", "K70.10"),
        ("K40.9", "K40.90"),  # "not specified as recurrent"
        ("S93.02", "S93.02XA"),  # a 7th character after the "X" placeholder
        ("O32.1", "O32.1XX0"),  # "not applicable or unspecified", not the 7th "9" (other fetus)
        ("W01.19", "W01.198A"),  # the child titled as its header ("... other object")
        ("I85", "I85.00"),  # I85.0 is titled as I85; I85.1 is "secondary"
        ("B27.9", "B27.90"),  # "without complication", not B27.99 "with other complication"
        ("C81.9", "C81.90"),  # "..., unspecified site", not C81.99 "extranodal ... sites"
        ("T20.0", "T20.00XA"),  # "unspecified site", not T20.09XA "multiple sites"
        ("A49", "A49.9"),  # A49.0's "unspecified site" adds a staphylococcus: not the default
        ("I26", "I26.99"),  # no unspecified child: the "9" (other), as the Index gives
        ("Z86.71", "Z86.718"),  # no unspecified child: the one "other" child
        ("D63", "D63.8"),  # the same: "anemia in other chronic diseases"
        ("C91.1", "C91.10"),  # the one child with an inclusion term "... NOS"
        ("N40", "N40.0"),  # "enlarged prostate NOS"
        ("J45.2", "J45.20"),  # "mild intermittent asthma NOS"
        ("K80.2", "K80.20"),  # "without" twice (cholecystitis, obstruction) beats once
        ("H33", "H33.20"),  # "retinal detachment NOS" is under H33.2
        ("F10.1", "F10.10"),  # "uncomplicated", not F10.19 "with unspecified ... disorder"
        ("F11.2", "F11.20"),
        ("F17.21", "F17.210"),
        ("F10.12", "F10.129"),  # "<parent>, unspecified" beats "uncomplicated" (F10.120)
        ("F10.13", "F10.139"),  # the same, punctuation aside ("abuse, with withdrawal")
        ("G43.0", "G43.009"),  # "not intractable" beside "intractable", then the "9"
        ("G40.A", "G40.A09"),
        ("XYZ", None),
    ],
)
def test_default_leaf(header: str, leaf: str | None) -> None:
    ontology = load_ontology("2021")
    assert ontology.default_leaf(header, nos=nos_codes(ontology)) == leaf


def test_the_nos_rule_is_off_without_the_terms() -> None:
    ontology = load_ontology("2021")
    # A41.01 (MSSA) holds "Staphylococcus aureus sepsis NOS"; nothing else tells it from A41.02.
    assert ontology.default_leaf("A41.0") is None
    assert ontology.default_leaf("A41.0", nos=nos_codes(ontology)) == "A41.01"


@pytest.mark.parametrize(
    ("header", "side", "leaf"),
    [
        ("I69.35", "left", "I69.354"),  # the left side is the non-dominant one by default
        ("I69.35", "right", "I69.351"),  # and the right side the dominant one
        ("G81.9", "left", "G81.94"),  # "nondominant", spelled without the hyphen
        ("S93.40", "right", "S93.401A"),
    ],
)
def test_default_leaf_on_a_named_side(header: str, side: str, leaf: str) -> None:
    assert load_ontology("2021").default_leaf(header, side) == leaf


@pytest.mark.parametrize(
    ("code", "text", "side", "refined"),
    [
        # Subluxation and dislocation are siblings: the word the text says decides.
        ("S73.003A", "dislocation of the hip", None, "S73.006A"),
        ("S43.005A", "dislocation of the left shoulder", "left", "S43.005A"),
        # The intent of a poisoning.
        ("T42.4X1A", "intentional overdose of benzodiazepines", None, "T42.4X2A"),
        # "Bilateral" is no side of one limb, but a child of its own.
        ("I65.29", "bilateral carotid artery stenosis", None, "I65.23"),
        # "Chronic" picks I50.22 over I50.23, which adds "acute" the text does not say.
        ("I50.20", "chronic heart failure with reduced ejection fraction", None, "I50.22"),
        # A text that says no sibling's own word keeps what the search found.
        ("T38.3X3A", "insulin overdose", None, "T38.3X3A"),
        # The code's own words are among the most said: kept.
        ("I50.23", "acute on chronic systolic heart failure", None, "I50.23"),
        # A category has no siblings to choose among.
        ("I10", "essential hypertension", None, "I10"),
    ],
)
def test_refine_takes_the_sibling_whose_own_words_the_text_says(
    code: str, text: str, side: str | None, refined: str
) -> None:
    from climb_vllm.resources.words import content_words

    ontology = load_ontology("2021")
    assert ontology.refine(code, side, said=content_words(text)) == refined
    assert ontology.refine(code, side) == code  # nothing said: nothing to choose by
