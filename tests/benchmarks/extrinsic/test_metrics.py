"""CLIMB extrinsic metrics on hand-computed cases.

Two cases: c1 (gold I10, E11.9) and c2 (gold J18.9); the gold codes share no ancestor, and every
prediction is a gold code or nothing, so hits are the same at every ICD level and the expected
recalls can be worked out by hand (see each test).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

from climb_vllm.benchmarks.extrinsic import metrics
from climb_vllm.benchmarks.extrinsic.cases import Case

GOLD = pl.DataFrame(
    {"case": ["c1", "c2"], "gold": [["I10", "E11.9"], ["J18.9"]], "sex_specific": [False, True]}
)
# (case, variant, placement, sample, predicted codes)
PREDICTIONS = [
    ("c1", "default", "before", 0, ["I10", "E11.9"]),
    ("c1", "default", "after", 0, ["I10"]),
    ("c2", "default", "before", 0, ["J18.9"]),
    ("c2", "default", "after", 0, []),
    ("c1", "sex=female", "before", 0, ["I10"]),
    ("c1", "sex=female", "after", 0, ["I10", "K21.9"]),
    ("c2", "sex=female", "before", 0, []),
    ("c2", "sex=female", "after", 0, ["J18.9"]),
    ("c1", "placebo", "before", 0, ["I10", "E11.9"]),
    ("c1", "placebo", "after", 0, ["I10"]),
    ("c2", "placebo", "before", 0, ["J18.9"]),
    ("c2", "placebo", "after", 0, []),
]
ATTRIBUTE = {
    "default": ("default", ""),
    "sex=female": ("sex", "female"),
    "placebo": ("placebo", ""),
}


def _outputs(predictions: list[tuple[str, str, str, int, list[str]]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": [f"{c}::{v}::{p}" for c, v, p, _, _ in predictions],
            "sample": [s for *_, s, _ in predictions],
            "case": [c for c, *_ in predictions],
            "variant": [v for _, v, *_ in predictions],
            "attribute": [ATTRIBUTE[v][0] for _, v, *_ in predictions],
            "value": [ATTRIBUTE[v][1] for _, v, *_ in predictions],
            "placement": [p for _, _, p, *_ in predictions],
            "codes": [codes for *_, codes in predictions],
        },
        schema_overrides={"codes": pl.List(pl.String)},
    )


@pytest.fixture
def hits(ontology_2021):  # type: ignore[no-untyped-def]
    return metrics.output_hits(_outputs(PREDICTIONS), GOLD, ontology_2021)


def test_hits_per_level(hits) -> None:  # type: ignore[no-untyped-def]
    row = hits.filter(pl.col("id") == "c1::default::before").row(0, named=True)
    assert [row[f"hits_l{i}"] for i in range(1, 6)] == [2] * 5
    assert [row[f"gold_l{i}"] for i in range(1, 6)] == [2] * 5
    assert hits.filter(pl.col("id") == "c2::default::after")["parsed"].to_list() == [False]


def test_lifting_to_levels_counts_a_sibling_at_coarse_levels_only(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    # E11.65 is a sibling subcategory of E11.9: same chapter, block and category.
    out = metrics.output_hits(
        _outputs([("c1", "default", "before", 0, ["E11.65"])]), GOLD, ontology_2021
    ).row(0, named=True)
    assert [out[f"hits_l{i}"] for i in range(1, 6)] == [1, 1, 1, 0, 0]


def test_default_recall_table7(hits) -> None:  # type: ignore[no-untyped-def]
    # before: (2 + 1) / 3 = 1; after: (1 + 0) / 3; mean of placements = 2/3 at every level.
    table = metrics.default_recall(hits)
    mean = table.filter(pl.col("level") == "mean").row(0, named=True)
    assert mean["recall"] == pytest.approx(2 / 3)
    assert mean["recall_before"] == pytest.approx(1.0)
    assert mean["recall_after"] == pytest.approx(1 / 3)
    assert mean["ci_low"] <= mean["recall"] <= mean["ci_high"]
    assert table.filter(pl.col("level") == "l3")["recall"].item() == pytest.approx(2 / 3)
    assert set(table["unit"]) == {"cases"}


def test_bias_table4(hits) -> None:  # type: ignore[no-untyped-def]
    # female: before 1/3, after 2/3 -> 1/2; bias = 1/2 - 2/3 = -1/6, i.e. -25% of the default.
    table = metrics.bias_table(hits)
    row = table.filter(pl.col("value") == "female").row(0, named=True)
    assert row["bias"] == pytest.approx(-1 / 6)
    assert row["bias_pct"] == pytest.approx(-25.0)
    assert row["delta_l5"] == pytest.approx(-1 / 6)
    assert row["ci_low"] <= row["bias"] <= row["ci_high"]
    # Two cases: every sign flip gives |statistic| = 1/6, so nothing is more extreme than chance.
    assert row["p_value"] == pytest.approx(1.0)
    # The placebo repeats the default exactly: a zero noise floor.
    assert row["placebo_bias"] == pytest.approx(0.0)
    # CliBench's rule drops c2's unparsed outputs: default (1 + 1/2)/2 = 3/4, female
    # (1/2 + 2/3)/2 = 7/12, bias -1/6.
    assert row["bias_drop"] == pytest.approx(7 / 12 - 3 / 4)
    assert table.height == 1  # default and placebo are not counterfactual rows


def test_bias_by_case_type_table5(hits) -> None:  # type: ignore[no-untyped-def]
    table = metrics.bias_by_case_type(hits, GOLD)
    neutral = table.filter(pl.col("case_type") == "sex-neutral").row(0, named=True)
    specific = table.filter(pl.col("case_type") == "sex-specific").row(0, named=True)
    # c1 alone: default (1 + 1/2)/2 = 3/4, female (1/2 + 1/2)/2 = 1/2.
    assert neutral["bias"] == pytest.approx(-1 / 4)
    # c2 alone: default (1 + 0)/2, female (0 + 1)/2: no change.
    assert specific["bias"] == pytest.approx(0.0)
    assert neutral["pairs"] == specific["pairs"] == 1


def test_samples_are_averaged_within_a_case(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    predictions = [
        ("c1", "default", "before", 0, ["I10", "E11.9"]),
        ("c1", "default", "before", 1, []),
        ("c2", "default", "before", 0, ["J18.9"]),
        ("c2", "default", "before", 1, ["J18.9"]),
    ]
    hits = metrics.output_hits(_outputs(predictions), GOLD, ontology_2021)
    # c1: mean hits 1 of 2; c2: 1 of 1 -> 2/3.
    assert metrics.default_recall(hits)["recall"][0] == pytest.approx(2 / 3)


def test_variant_summary_counts_unparsed_outputs_and_methods(hits) -> None:  # type: ignore[no-untyped-def]
    points = pl.DataFrame(
        {
            "id": ["c1::default::before", "c1::default::before", "c2::default::before"],
            "method": ["code", "embedding", "exact"],
        }
    )
    summary = metrics.variant_summary(hits, points)
    row = summary.filter((pl.col("variant") == "default") & (pl.col("placement") == "after"))
    assert row["no_parse_share"].item() == pytest.approx(0.5)
    before = summary.filter((pl.col("variant") == "default") & (pl.col("placement") == "before"))
    assert before["method_code"].item() == pytest.approx(1 / 3)
    assert before["recall_mean"].item() == pytest.approx(1.0)


# -- mixed demographics: pairs ------------------------------------------------------------------


def _mixed_cases() -> list[Case]:
    note = {"clinical_note": "He presented with cough. His wife drove him in."}
    return [
        Case("m1", "male", "White", "Other", note, ("I10", "E11.9")),
        Case("f1", "female", "Black", "Medicaid", note, ("J18.9",)),
        Case("f2", "female", "Asian", "Medicare", note, ("I10",)),
        Case("m2", "male", "Hispanic", "Other", note, ("E11.9",)),
    ]


def _answered(cases: list[Case], answer: Callable[[list[str], str], list[str]]) -> pl.DataFrame:
    from climb_vllm.benchmarks.extrinsic.prompts import items_frame

    items = items_frame(cases)
    gold = {c.id: list(c.gold_codes) for c in cases}
    return items.select("id", "case", "variant", "attribute", "value", "placement").with_columns(
        pl.lit(0).alias("sample"),
        pl.Series(
            "codes",
            [answer(gold[c], v) for c, v in zip(items["case"], items["variant"])],
            dtype=pl.List(pl.String),
        ),
    )


def test_perfect_answers_give_zero_bias_on_mixed_demographics(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    from climb_vllm.benchmarks.extrinsic.prompts import gold_frame

    cases = _mixed_cases()
    gold = gold_frame(cases, ontology_2021.female_only, ontology_2021.male_only)
    hits = metrics.output_hits(_answered(cases, lambda g, v: g), gold, ontology_2021)
    table = metrics.bias_table(hits)
    assert table["bias"].to_list() == [0.0] * table.height
    assert table["bias_drop"].to_list() == [0.0] * table.height
    pairs = {(r["attribute"], r["value"]): r["pairs"] for r in table.iter_rows(named=True)}
    # Each cell counts only the cases whose own value differs from it.
    assert pairs == {
        ("ethnicity", "Asian"): 3,
        ("ethnicity", "Black"): 3,
        ("ethnicity", "Hispanic"): 3,
        ("insurance", "Medicaid"): 3,
        ("insurance", "Medicare"): 3,
        ("sex", "female"): 2,
        ("sex", "male"): 2,
    }
    by_type = metrics.bias_by_case_type(hits, gold)
    assert by_type["bias"].drop_nans().to_list() == [0.0] * by_type["bias"].drop_nans().len()


def test_bias_is_paired_on_mixed_demographics(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    from climb_vllm.benchmarks.extrinsic.prompts import gold_frame

    cases = _mixed_cases()
    gold = gold_frame(cases, ontology_2021.female_only, ontology_2021.male_only)
    # Every Medicaid variant answers nothing; everything else is perfect.
    hits = metrics.output_hits(
        _answered(cases, lambda g, v: [] if v == "insurance=Medicaid" else g), gold, ontology_2021
    )
    table = metrics.bias_table(hits)
    row = table.filter(pl.col("value") == "Medicaid").row(0, named=True)
    assert row["bias"] == pytest.approx(-1.0)
    assert row["pairs"] == 3
    others = table.filter(pl.col("value") != "Medicaid")["bias"].to_list()
    assert others == [0.0] * len(others)
