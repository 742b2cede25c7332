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


@pytest.mark.parametrize("k", range(1, 11))
def test_every_k_from_1_to_10(k: int) -> None:
    assert len(load_names().top_k(k)) == 8 * k


@pytest.mark.parametrize("k", [0, 11])
def test_k_out_of_range_names_the_fix(k: int) -> None:
    with pytest.raises(UserError, match="from 1 to 10"):
        load_names().top_k(k)


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
