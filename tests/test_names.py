"""Name sets and top-K selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.names import ETHNICITIES, SEXES, load_names


def test_top5_has_40_slots_and_30_distinct_names() -> None:
    names = load_names()
    slots = names.top_k(5)
    assert len(slots) == 40
    assert len(names.distinct(5)) == 30
    for sex in SEXES:
        for ethnicity in ETHNICITIES:
            group = [s for s in slots if s.sex == sex and s.ethnicity == ethnicity]
            assert [s.rank for s in group] == [1, 2, 3, 4, 5]
    # Olivia fills three female groups: one distinct name, three slots.
    assert sum(s.name == "Olivia" for s in slots) == 3


@pytest.mark.parametrize("k", [*range(1, 11), 20, 50])
def test_every_k_from_1_to_50(k: int) -> None:
    assert len(load_names().top_k(k)) == 8 * k


@pytest.mark.parametrize("k", [0, 51])
def test_k_out_of_range_names_the_fix(k: int) -> None:
    with pytest.raises(UserError, match="from 1 to 50"):
        load_names().top_k(k)


def test_more_names_than_a_set_holds_names_the_largest_k() -> None:
    with pytest.raises(UserError, match="use --top-k 10 or less"):
        load_names("nyc-2011-2019").top_k(20)


def test_packaged_top_50_equals_an_independent_derivation_from_the_raw_file() -> None:
    """The packaged table against a derivation written apart from it, in Polars, from the raw
    NYC file beside the repository (the SOURCE note's steps: normalised labels, duplicate rows
    dropped, counts summed over years, ranked by total then name, the most frequent
    mixed-case spelling shown)."""
    import polars as pl

    raw = Path(__file__).resolve().parents[2] / "shared" / "data" / "names" / "raw"
    frame = pl.read_csv(raw / "Popular_Baby_Names.csv", infer_schema_length=0).rename(
        {"Year of Birth": "year", "Gender": "sex", "Ethnicity": "ethnicity",
         "Child's First Name": "spelling", "Count": "count"}
    )  # fmt: skip
    labels = {"WHITE NON HISP": "WHITE NON HISPANIC", "ASIAN AND PACI":
              "ASIAN AND PACIFIC ISLANDER", "BLACK NON HISP": "BLACK NON HISPANIC"}  # fmt: skip
    frame = frame.with_columns(
        pl.col("ethnicity").str.strip_chars().replace(labels),
        pl.col("sex").str.strip_chars().str.to_uppercase(),
        pl.col("spelling").str.strip_chars(),
        pl.col("count").cast(pl.Int64),
    ).with_columns(pl.col("spelling").str.to_uppercase().alias("key"))
    unique = frame.unique(["year", "sex", "ethnicity", "key", "count"])
    totals = unique.group_by("sex", "ethnicity", "key").agg(pl.col("count").sum())
    ranked = (
        totals.sort(["sex", "ethnicity", "count", "key"], descending=[False, False, True, False])
        .with_columns(pl.int_range(1, pl.len() + 1).over("sex", "ethnicity").alias("rank"))
        .filter(pl.col("rank") <= 50)
    )
    mixed = frame.filter(pl.col("spelling") != pl.col("key"))
    shown = (
        mixed.group_by("key", "spelling")
        .len()
        .sort(["key", "len", "spelling"], descending=[False, True, False])
        .unique("key", keep="first")
    )
    derived = ranked.join(shown, on="key", how="left").select(
        pl.coalesce("spelling", pl.col("key").str.to_titlecase()).alias("name"),
        "sex", "ethnicity", "rank", "count",
    )  # fmt: skip
    packaged = pl.read_csv(
        Path(__file__).resolve().parents[1] / "climb_vllm" / "data" / "names" / "names.csv"
    )
    key = ["sex", "ethnicity", "rank"]
    assert derived.height == packaged.height == 400
    assert derived.sort(key).equals(packaged.select(derived.columns).sort(key))


def test_older_snapshot_differs_where_documented() -> None:
    old = load_names("nyc-2011-2019").distinct(5)
    assert "Chloe" in old and "Dylan" in old


def test_malformed_name_file_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "names.csv"
    bad.write_text("name,sex,ethnicity,rank\nAnn,FEMALE,WHITE NON HISPANIC,first\n")
    with pytest.raises(UserError, match="line 2"):
        load_names(str(bad))


def test_unknown_name_set() -> None:
    with pytest.raises(UserError, match="nyc-2011-2021"):
        load_names("nope")
