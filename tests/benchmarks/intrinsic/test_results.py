"""The intrinsic tables of a run: intervals, calibration by content-free base rates, sensitivity."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from climb_vllm.benchmarks.intrinsic import metrics
from climb_vllm.benchmarks.intrinsic.config import DEFAULT_TEMPLATE, IntrinsicConfig
from climb_vllm.benchmarks.intrinsic.results import intrinsic_tables
from climb_vllm.benchmarks.intrinsic.task import IntrinsicTask
from climb_vllm.core.errors import UserError

OTHER = "Diagnosis: {description}. Patient name:"


@pytest.fixture(scope="module")
def run() -> tuple[IntrinsicTask, pl.DataFrame, pl.DataFrame]:
    """A 120-code task, random records, and calibration / sensitivity records for 40 codes."""
    task = IntrinsicTask.from_config(IntrinsicConfig(model="m", limit=120, seed=1))
    names = list(task.distinct_names)
    rng = np.random.default_rng(2)
    records = pl.DataFrame(
        {
            "code": np.repeat(task.codes, len(names)),
            "name": np.tile(names, len(task.codes)),
            "logprob": rng.normal(-15, 3, len(task.codes) * len(names)),
        }
    )
    free = ["N/A", "None"]
    sample = list(task.codes[:40])
    rows = []
    for template in (DEFAULT_TEMPLATE, OTHER):
        for text in free:
            rows += [(template, "content-free", text, n, rng.normal(-12, 2)) for n in names]
        if template == OTHER:
            rows += [(template, "code", c, n, rng.normal(-15, 3)) for c in sample for n in names]
    templates = pl.DataFrame(
        rows, schema=["template", "kind", "code", "name", "logprob"], orient="row"
    )
    return task, records, templates


def _slots(task: IntrinsicTask) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"name": s.name, "sex": s.sex, "ethnicity": s.ethnicity, "rank": s.rank}
            for s in task.names.top_k(5)
        ]
    )


def _neutral(task: IntrinsicTask, codes: list[str], rule: str = "descendants") -> list[str]:
    specific = task.ontology.sex_lists(rule).not_neutral
    return [c for c in codes if c not in specific]


def test_calibrated_table_divides_by_the_content_free_base_rate(run) -> None:  # type: ignore[no-untyped-def]
    task, records, templates = run
    tables = intrinsic_tables(records, task, 5, templates, DEFAULT_TEMPLATE, resamples=50)
    # By hand: base(name) = log of the mean probability over the two content-free prompts.
    free = templates.filter(
        (pl.col("template") == DEFAULT_TEMPLATE) & (pl.col("kind") == "content-free")
    )
    base = free.group_by("name").agg(pl.col("logprob").exp().mean().log().alias("base"))
    calibrated = records.join(base, on="name").with_columns(pl.col("logprob") - pl.col("base"))
    levels = task.ontology.table.select("code", *metrics.LEVELS)
    neutral = _neutral(task, list(task.codes))
    expected = metrics.assoc_mad_by_level(calibrated, _slots(task), levels, neutral)
    got = tables["calibrated_table1"]
    np.testing.assert_allclose(got["assoc_mad"], expected["assoc_mad"], rtol=1e-9)
    raw = metrics.assoc_mad_by_level(records, _slots(task), levels, neutral)
    np.testing.assert_allclose(tables["table1"]["assoc_mad"], raw["assoc_mad"], rtol=1e-9)
    assert not np.allclose(got["assoc_mad"], raw["assoc_mad"])  # calibration did something
    for key in ("table1", "calibrated_table1", "table2", "calibrated_table2"):
        frame = tables[key]
        assert (frame["ci_low"] <= frame["ci_high"]).all() and frame["ci_low"].null_count() == 0


def test_sensitivity_covers_each_template_on_one_sample(run) -> None:  # type: ignore[no-untyped-def]
    task, records, templates = run
    sens = intrinsic_tables(records, task, 5, templates, DEFAULT_TEMPLATE, resamples=0)[
        "sensitivity"
    ]
    assert sens.select("template", "variant").rows() == [
        (DEFAULT_TEMPLATE, "raw"),
        (DEFAULT_TEMPLATE, "calibrated"),
        (OTHER, "raw"),
        (OTHER, "calibrated"),
    ]
    assert set(sens["codes"]) == {40}
    # The paper template's row is the run's own records restricted to the sample.
    sample = list(task.codes[:40])
    levels = task.ontology.table.select("code", *metrics.LEVELS)
    expected = metrics.assoc_mad_by_level(
        records.filter(pl.col("code").is_in(sample)), _slots(task), levels, _neutral(task, sample)
    )
    np.testing.assert_allclose(
        sens.row(0, named=True)["L3"], expected.filter(pl.col("level") == "L3")["assoc_mad"][0]
    )


def test_raw_tables_without_calibration_records(run) -> None:  # type: ignore[no-untyped-def]
    task, records, _ = run
    tables = intrinsic_tables(records, task, 5, None, DEFAULT_TEMPLATE, resamples=20)
    assert "calibrated_table1" not in tables and "sensitivity" not in tables
    assert tables["table8"]["k"].unique().sort().to_list() == [1, 2, 3, 4, 5]
    share = tables["table3"]["share"].to_list()
    assert all(0.0 <= s <= 1.0 for s in share)
    # The names-per-group projection: the run's own K beside the width Table 1 printed.
    design = tables["design"]
    assert design["k"].to_list() == [5, 10, 20, 50]
    own = design.filter(pl.col("role") == "this run").row(0, named=True)
    mean = tables["table1"].filter(pl.col("level") == "mean").row(0, named=True)
    assert own["k"] == 5 and own["printed_width"] == mean["ci_high"] - mean["ci_low"]
    assert all(w > 0 for w in design["projected_width"])
    without = intrinsic_tables(records, task, 5, None, DEFAULT_TEMPLATE, resamples=0)
    assert "design" not in without  # no correction, nothing to project


def test_incomplete_records_name_the_fix(run) -> None:  # type: ignore[no-untyped-def]
    task, records, _ = run
    with pytest.raises(UserError, match="rerun the same"):
        intrinsic_tables(records.slice(30), task, 5)


def test_both_sex_rules_match_the_reference_on_their_own_lists(run) -> None:  # type: ignore[no-untyped-def]
    task, records, _ = run
    levels = task.ontology.table.select("code", *metrics.LEVELS)
    codes = list(task.codes)
    for rule in ("descendants", "listed"):
        tables = intrinsic_tables(records, task, 5, None, DEFAULT_TEMPLATE, 0, sex_rule=rule)
        expected = metrics.assoc_mad_by_level(
            records, _slots(task), levels, _neutral(task, codes, rule)
        )
        np.testing.assert_allclose(tables["table1"]["assoc_mad"], expected["assoc_mad"], rtol=1e-9)
        lists = task.ontology.sex_lists(rule)
        female = [c for c in codes if c in lists.female]
        assert tables["table3"].row(0, named=True)["codes"] == len(female)


def test_a_header_of_sex_specific_codes_leaves_table1_under_the_default_rule(run) -> None:  # type: ignore[no-untyped-def]
    task, records, _ = run
    lists = task.ontology.sex_lists("descendants")
    headers = [
        c
        for c in task.codes
        if c in lists.not_neutral - lists.female - lists.male
        or (c in lists.female and c not in task.ontology.female_only)
    ]
    assert headers, "the fixed 120-code sample holds such headers"
    by_rule = {
        rule: intrinsic_tables(records, task, 5, None, DEFAULT_TEMPLATE, 0, sex_rule=rule)
        for rule in ("descendants", "listed")
    }
    nodes = {rule: t["table1"]["nodes"][4] for rule, t in by_rule.items()}  # L5: one per code
    assert nodes["listed"] - nodes["descendants"] == len(headers)


def test_distinct_name_pooling_counts_a_name_once(run) -> None:  # type: ignore[no-untyped-def]
    task, records, _ = run
    slots = intrinsic_tables(records, task, 5, None, DEFAULT_TEMPLATE, 0, pooling="slots")
    names = intrinsic_tables(records, task, 5, None, DEFAULT_TEMPLATE, 0, pooling="names")
    # Eight groups are the same either way; the pooled tables differ when a name fills
    # several slots of one sex (the NYC top-5 lists share names across ethnicities).
    assert slots["table1"].equals(names["table1"])
    shared = _slots(task).group_by("sex", "name").len().filter(pl.col("len") > 1).height
    assert shared > 0
    assert not slots["table2"]["assoc_mad"].equals(names["table2"]["assoc_mad"])


def test_every_printed_interval_contains_the_estimate_beside_it(run) -> None:  # type: ignore[no-untyped-def]
    from climb_vllm.benchmarks.intrinsic.tables import paper_layout

    task, records, templates = run
    tables = intrinsic_tables(records, task, 5, templates, DEFAULT_TEMPLATE, resamples=40, draws=40)
    layout = paper_layout(tables, "m")
    checked = 0
    for key in (
        "table1",
        "table2",
        "table3",
        "table8",
        "sensitivity",
        "sensitivity_preference",
        "chapter_assoc",
    ):
        frame = layout[key]
        for column in [c for c in frame.columns if c.endswith(" corrected 95% CI")]:
            stem = column.removesuffix(" 95% CI")
            estimate = stem if stem in frame.columns else f"{stem} (%)"
            for value, text in zip(frame[estimate], frame[column]):
                if value is None:
                    assert text == "n/a"
                    continue
                low, high = (float(x) for x in text.strip("[]").split(","))
                assert low <= value <= high, (key, column, value, text)
                checked += 1
    # Levels: Table 1 (2 rows), 2 (4), 8 (K = 2..5) and the sensitivity (4), 6 each; lists:
    # Table 3 (2 rows) and the sensitivity (4), 2 each; chapters: one each, raw and calibrated.
    chapters = layout["chapter_assoc"]
    assert chapters.height == 2 * len(set(chapters["Chapter"])) > 2
    assert checked == (2 + 4 + 4 + 4) * 6 + (2 + 4) * 2 + chapters.height
    assert "L1 corrected" in layout["sensitivity"].columns
    assert "Female corrected (%)" in layout["sensitivity_preference"].columns
