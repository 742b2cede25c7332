"""Name sets and top-K selection."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.resources.names import ETHNICITIES, SEXES, load_names


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


def test_packaged_table_equals_an_independent_derivation_from_the_raw_file() -> None:
    """The packaged table (every name of every group, ranked) against a derivation written apart
    from it, in Polars, from the raw NYC file beside the repository (the SOURCE note's steps:
    normalised labels, duplicate rows dropped, counts summed over years, ranked by total then
    name, the most frequent mixed-case spelling shown)."""
    import polars as pl

    raw = Path(__file__).resolve().parents[3] / "shared" / "data" / "names" / "raw"
    if not (raw / "Popular_Baby_Names.csv").exists():
        pytest.skip("../shared/data is not beside the checkout")
    frame = pl.read_csv(raw / "Popular_Baby_Names.csv", infer_schema_length=0).rename(
        {
            "Year of Birth": "year",
            "Gender": "sex",
            "Ethnicity": "ethnicity",
            "Child's First Name": "spelling",
            "Count": "count",
        }
    )
    labels = {
        "WHITE NON HISP": "WHITE NON HISPANIC",
        "ASIAN AND PACI": "ASIAN AND PACIFIC ISLANDER",
        "BLACK NON HISP": "BLACK NON HISPANIC",
    }
    frame = frame.with_columns(
        pl.col("ethnicity").str.strip_chars().replace(labels),
        pl.col("sex").str.strip_chars().str.to_uppercase(),
        pl.col("spelling").str.strip_chars(),
        pl.col("count").cast(pl.Int64),
    ).with_columns(pl.col("spelling").str.to_uppercase().alias("key"))
    unique = frame.unique(["year", "sex", "ethnicity", "key", "count"])
    totals = unique.group_by("sex", "ethnicity", "key").agg(pl.col("count").sum())
    ranked = totals.sort(
        ["sex", "ethnicity", "count", "key"], descending=[False, False, True, False]
    ).with_columns(pl.int_range(1, pl.len() + 1).over("sex", "ethnicity").alias("rank"))
    mixed = frame.filter(pl.col("spelling") != pl.col("key"))
    shown = (
        mixed.group_by("key", "spelling")
        .len()
        .sort(["key", "len", "spelling"], descending=[False, True, False])
        .unique("key", keep="first")
    )
    derived = ranked.join(shown, on="key", how="left").select(
        pl.coalesce("spelling", pl.col("key").str.to_titlecase()).alias("name"),
        "sex",
        "ethnicity",
        "rank",
        "count",
    )
    packaged = pl.read_csv(
        Path(__file__).resolve().parents[2] / "climb_vllm" / "data" / "names" / "names.csv"
    )
    key = ["sex", "ethnicity", "rank"]
    assert derived.height == packaged.height == 3406
    assert packaged.filter(pl.col("rank") <= 50).height == 400
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


def _write(path: Path, rows: list[str], header: str = "name,sex,ethnicity,rank,count") -> str:
    path.write_text("\n".join([header, *rows]) + "\n")
    return str(path)


def _full_file(path: Path, extra: Sequence[str] = (), k: int = 2) -> str:
    """A valid file: k names per group (``<group index><letter>``, 100 births each), plus rows."""
    rows = [
        f"N{g}{chr(97 + r)},{sex},{ethnicity},{r + 1},100"
        for g, (sex, ethnicity) in enumerate((s, e) for s in SEXES for e in ETHNICITIES)
        for r in range(k)
    ]
    return _write(path, rows + list(extra))


def test_distinctive_rule_on_a_hand_made_case(tmp_path: Path) -> None:
    """Ann: 90 of her 100 births are White female, 10 Black female, so at share 0.8 she stays
    White and leaves the Black list; Bea: 50/50 across two groups, so she leaves both; ranks
    close up behind them; a share at exactly the threshold stays."""
    white, black = ("FEMALE", "WHITE NON HISPANIC"), ("FEMALE", "BLACK NON HISPANIC")
    rows: list[str] = []
    for sex, ethnicity in ((s, e) for s in SEXES for e in ETHNICITIES):
        group = (sex, ethnicity)
        listed: list[tuple[str, int]] = []
        if group == white:
            listed = [("Ann", 90), ("Bea", 50), ("Cat", 40)]
        elif group == black:
            listed = [("Bea", 50), ("Dee", 30), ("Ann", 10), ("Eve", 8)]
        else:
            listed = [(f"X{len(rows)}", 5), (f"Y{len(rows)}", 4)]
        rows += [f"{n},{sex},{ethnicity},{r},{c}" for r, (n, c) in enumerate(listed, start=1)]
    # Eve also has 2 births as a White female: her Black share is 8 of 10, exactly 0.8.
    rows.append("Eve,FEMALE,WHITE NON HISPANIC,4,2")
    names = load_names(_write(tmp_path / "n.csv", rows), distinctive=0.8)
    kept = {
        group: [(s.name, s.rank) for s in names.slots if s.group == group]
        for group in (white, black)
    }
    assert kept[white] == [("Ann", 1), ("Cat", 2)]
    assert kept[black] == [("Dee", 1), ("Eve", 2)]
    assert names.sizes()[white] == 2
    assert "distinctive" in names.label
    # Every other group's names are unique to it: all stay.
    assert names.sizes()[("MALE", "HISPANIC")] == 2


def test_packaged_distinctive_names_hold_their_share() -> None:
    """Every kept name has at least the share of its births in its group, computed here from the
    packaged counts; Hispanic female Camila (97%) stays, Olivia (spread over groups) goes."""
    names = load_names(distinctive=0.8)
    every = load_names()
    totals: dict[str, int] = {}
    for slot in every.slots:
        totals[slot.name.upper()] = totals.get(slot.name.upper(), 0) + (slot.count or 0)
    for slot in names.slots:
        assert (slot.count or 0) / totals[slot.name.upper()] >= 0.8
    top = {s.name for s in names.top_k(5)}
    assert "Camila" in top and "Olivia" not in top
    assert all(size >= 50 for size in names.sizes().values())


def test_user_file_repeating_a_name_in_a_group_names_the_line(tmp_path: Path) -> None:
    path = _full_file(tmp_path / "n.csv", ["n0a,FEMALE,WHITE NON HISPANIC,3,5"])
    with pytest.raises(UserError, match="line 18 repeats the name 'n0a'"):
        load_names(path)


def test_user_file_with_an_unknown_group_names_the_group(tmp_path: Path) -> None:
    path = _full_file(tmp_path / "n.csv", ["Zed,FEMALE,MARTIAN,3,5"])
    with pytest.raises(UserError, match="unknown group .'FEMALE', 'MARTIAN'."):
        load_names(path)


def test_user_file_with_fewer_names_than_asked_names_the_largest_k(tmp_path: Path) -> None:
    names = load_names(_full_file(tmp_path / "n.csv", k=3))
    assert len(names.top_k(3)) == 24
    with pytest.raises(UserError, match="use --top-k 3 or less"):
        names.top_k(4)


def test_user_file_without_counts_refuses_distinctive_names(tmp_path: Path) -> None:
    rows = [
        f"A{g},{sex},{ethnicity},1"
        for g, (sex, ethnicity) in enumerate((s, e) for s in SEXES for e in ETHNICITIES)
    ]
    path = _write(tmp_path / "n.csv", rows, header="name,sex,ethnicity,rank")
    assert len(load_names(path).top_k(1)) == 8
    with pytest.raises(UserError, match="add a count column"):
        load_names(path, distinctive=0.8)


def test_negative_count_is_malformed(tmp_path: Path) -> None:
    path = _full_file(tmp_path / "n.csv", ["Zed,FEMALE,HISPANIC,3,-4"])
    with pytest.raises(UserError, match="line 18 is malformed"):
        load_names(path)
