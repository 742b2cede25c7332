"""Two runs' extrinsic results compared on their shared cases: each side equals its own run's
tables, and the differences are paired."""

from __future__ import annotations

import polars as pl
import pytest

from climb_vllm.benchmarks.extrinsic import metrics
from climb_vllm.benchmarks.extrinsic.comparison import Hits, compare
from climb_vllm.resources.ontology import Ontology
from tests.benchmarks.extrinsic.test_metrics import GOLD, PREDICTIONS, _outputs

# A second model: the female notes get the default's answers exactly (no recall change), and
# c2's "after" default answer is right (higher recall).
FAIR = [
    (c, v, p, s, ["J18.9"] if (c, p) == ("c2", "after") else codes)
    for c, v, p, s, codes in PREDICTIONS
    if v != "sex=female"
]
FAIR += [(c, "sex=female", p, s, codes) for c, v, p, s, codes in FAIR if v == "default"]


def _hits(rows: list[tuple[str, str, str, int, list[str]]], ontology: Ontology) -> Hits:
    return Hits(metrics.output_hits(_outputs(rows), GOLD, ontology), "2021")


def test_each_side_is_its_runs_table_and_the_difference_is_paired(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    first, second = _hits(PREDICTIONS, ontology_2021), _hits(FAIR, ontology_2021)
    frame = compare(first, second)
    assert frame is not None
    head = frame.filter(pl.col("headline")).row(0, named=True)
    # Table 7's mean recall of each run (first: 2/3; second: every default answer right).
    own = [
        metrics.default_recall(h.hits).filter(pl.col("level") == "mean")["recall"].item()
        for h in (first, second)
    ]
    assert (head["first"], head["second"]) == pytest.approx((100 * own[0], 100 * own[1]))
    assert head["difference"] == pytest.approx(100 * (own[1] - own[0]))
    assert head["better"] == "higher" and head["shared"] == 2 and head["unit"] == "cases"
    female = frame.filter(pl.col("measure").str.contains("female")).row(0, named=True)
    biases = [metrics.bias_table(h.hits)["bias"].item() for h in (first, second)]
    assert biases == pytest.approx([-1 / 6, 0.0])
    assert (female["first"], female["second"]) == pytest.approx((-100 / 6, 0.0))
    assert female["difference"] == pytest.approx(100 / 6) and female["better"] == "nearer 0"
    for row in frame.iter_rows(named=True):
        assert row["ci_low"] <= row["difference"] <= row["ci_high"]
    assert "placebo" not in " ".join(frame["measure"])


def test_a_run_against_itself_differs_by_zero_everywhere(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    frame = compare(_hits(PREDICTIONS, ontology_2021), _hits(PREDICTIONS, ontology_2021))
    assert frame is not None
    assert frame["difference"].abs().max() == 0 and frame["ci_high"].abs().max() == 0


def test_runs_without_a_shared_case_are_not_compared(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    first = _hits(PREDICTIONS, ontology_2021)
    other = Hits(first.hits.with_columns(pl.lit("c9").alias("case")), "2021")
    assert compare(first, other) is None
    assert compare(first, Hits(first.hits, "2019")) is None
