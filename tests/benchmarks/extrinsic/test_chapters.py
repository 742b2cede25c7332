"""Extrinsic bias by the gold codes' chapter, on a hand-made case with known answers."""

from __future__ import annotations

import polars as pl
import pytest

from climb_vllm.benchmarks.extrinsic.chapters import bias_by_chapter
from tests.benchmarks.extrinsic.test_metrics import GOLD, PREDICTIONS, _outputs


def test_each_chapter_keeps_its_own_gold_codes(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    table = bias_by_chapter(_outputs(PREDICTIONS), GOLD, ontology_2021)
    chapter = {code: ontology_2021.levels(code)[0] for code in ("I10", "E11.9", "J18.9")}
    female = table.filter(pl.col("value") == "female")
    bias = dict(zip(female["chapter"], female["bias"]))
    # I10 (c1): found by the default and the female notes in both placements: no change.
    assert bias[chapter["I10"]] == pytest.approx(0.0)
    # E11.9 (c1): default found it before the notes only (recall 1/2), female never: -1/2.
    assert bias[chapter["E11.9"]] == pytest.approx(-0.5)
    # J18.9 (c2): default before only, female after only: 1/2 each, no change.
    assert bias[chapter["J18.9"]] == pytest.approx(0.0)
    assert dict(zip(female["chapter"], female["pairs"]))[chapter["J18.9"]] == 1
    assert dict(zip(female["chapter"], female["gold_codes"]))[chapter["E11.9"]] == 1
    assert (table["q"] >= table["p_value"] - 1e-12).all()
    assert set(table["attribute"]) == {"sex"}  # the placebo is no counterfactual row


def test_no_gold_codes_give_an_empty_table(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    empty = GOLD.with_columns(pl.lit([], dtype=pl.List(pl.String)).alias("gold"))
    assert bias_by_chapter(_outputs(PREDICTIONS), empty, ontology_2021).height == 0
