"""The interaction of two attributes changed at once, on hand-made hits."""

from __future__ import annotations

import polars as pl
import pytest

from climb_vllm.benchmarks.extrinsic import metrics
from climb_vllm.benchmarks.extrinsic.intersections import interaction_table
from climb_vllm.resources.ontology import Ontology
from tests.benchmarks.extrinsic.test_metrics import GOLD, PREDICTIONS, _outputs

# c1 and c2 also answered as Black and as female-and-Black. Recall per placement (c1 gold: I10,
# E11.9; c2: J18.9), default: before 3/3, after 1/3. Black: the default's answers (no change).
# female and Black: nothing found (recall 0): joint bias -2/3; female alone -1/6 (Table 4's
# test); interaction -2/3 - (-1/6 + 0) = -1/2.


def _relabel(default: pl.DataFrame, variant: str, attribute: str, value: str) -> pl.DataFrame:
    return default.with_columns(
        pl.lit(variant).alias("variant"),
        pl.lit(attribute).alias("attribute"),
        pl.lit(value).alias("value"),
        (pl.col("id") + "::" + variant).alias("id"),
    )


def _hits(ontology: Ontology) -> pl.DataFrame:
    outputs = _outputs(PREDICTIONS)
    default = outputs.filter(pl.col("variant") == "default")
    black = _relabel(default, "ethnicity=Black", "ethnicity", "Black")
    joint = _relabel(default, "sex=female&ethnicity=Black", "sex+ethnicity", "female & Black")
    joint = joint.with_columns(pl.lit([], dtype=pl.List(pl.String)).alias("codes"))
    return metrics.output_hits(pl.concat([outputs, black, joint]), GOLD, ontology)


def test_interaction_is_joint_minus_the_single_changes(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    row = interaction_table(_hits(ontology_2021)).row(0, named=True)
    assert (row["attribute"], row["value"], row["pairs"]) == ("sex+ethnicity", "female & Black", 2)
    assert row["joint"] == pytest.approx(-2 / 3)
    assert row["first"] == pytest.approx(-1 / 6) and row["second"] == pytest.approx(0.0)
    assert row["interaction"] == pytest.approx(-1 / 2)
    assert row["ci_low"] <= row["interaction"] <= row["ci_high"]


def test_no_combined_variant_gives_an_empty_table(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    hits = metrics.output_hits(_outputs(PREDICTIONS), GOLD, ontology_2021)
    assert interaction_table(hits).height == 0
