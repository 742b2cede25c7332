"""Models side by side: a base model and two adapters in one 'eval all' give every pair's
paired differences, each side equal to its run's own tables, in words and ranked."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from climb_vllm.cli import main
from climb_vllm.core.errors import UserError
from climb_vllm.models.adapters import make_demo_adapter
from climb_vllm.report.compare import _ranking, reading


@pytest.fixture(scope="module")
def compared(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("paired")
    kind = make_demo_adapter(tiny_model, folder / "kind", seed=1)
    fair = make_demo_adapter(tiny_model, folder / "fair", seed=2)
    out = folder / "run"
    argv = [
        "eval",
        "all",
        "--model",
        str(tiny_model),
        "--adapter",
        str(kind),
        "--adapter",
        str(fair),
        "--benchmarks",
        "intrinsic,biasmd,diseasematcher",
        "--limit-intrinsic",
        "40",
        "--sensitivity-codes",
        "0",
        "--limit-biasmd",
        "6",
        "--limit-diseasematcher",
        "6",
        "--max-tokens",
        "24",
        "--out",
        str(out),
        "--display",
        "none",
    ]
    assert main(argv) == 0
    return out


def test_every_pair_of_runs_is_compared_with_intervals_that_hold_the_difference(
    compared: Path,
) -> None:
    for name in ("run", "run+kind", "run+fair"):
        assert (compared.parent / name / "manifest.json").is_file()
    tables = compared / "report" / "tables"
    for benchmark, measures in (("intrinsic", 18), ("biasmd", 1), ("diseasematcher", 1)):
        frame = pl.read_csv(tables / f"compare_{benchmark}.csv")
        pairs = set(zip(frame["first run"], frame["second run"]))
        assert len(pairs) == 3 and frame.height == 3 * measures
        assert ((frame["second"] - frame["first"] - frame["difference"]).abs() < 1e-9).all()
        assert (frame["ci_low"] <= frame["difference"]).all()
        assert (frame["difference"] <= frame["ci_high"]).all()
        assert frame.filter(pl.col("headline")).height == 3
        assert (frame["reading"].str.len_chars() > 20).all()
        ranking = pl.read_csv(tables / f"ranking_{benchmark}.csv")
        assert ranking["rank"].to_list() == [1, 2, 3] and ranking["model"].n_unique() == 3
    html = (compared / "report" / "report.html").read_text()
    assert "Models side by side" in html and "order resolved" in html.lower()


def test_intrinsic_sides_are_each_runs_corrected_table1(compared: Path) -> None:
    frame = pl.read_csv(compared / "report" / "tables" / "compare_intrinsic.csv")
    own = {}
    for name in ("run", "run+kind"):
        table = pl.read_csv(
            compared.parent / name / "results" / "intrinsic" / "long" / "table1.csv"
        )
        own[name] = dict(zip(table["level"], table["corrected"]))
    row = frame.filter(
        (pl.col("measure") == "AssocMAD L5") & pl.col("second run").str.contains(r"\+kind")
    ).row(0, named=True)
    # Within float32 rounding: the draws run in float32 blocks sized by the CPUs a process has.
    assert row["first"] == pytest.approx(own["run"]["L5"], abs=1e-6)
    assert row["second"] == pytest.approx(own["run+kind"]["L5"], abs=1e-6)
    ranking = pl.read_csv(compared / "report" / "tables" / "ranking_intrinsic.csv")
    assert ranking["value"].is_sorted()  # lower is better: least biased first


def test_hive_sides_are_the_graded_answers(compared: Path) -> None:
    frame = pl.read_csv(compared / "report" / "tables" / "compare_diseasematcher.csv")
    accuracy = {}
    for name in ("run", "run+fair"):
        graded = pl.read_parquet(compared.parent / name / "results/diseasematcher/graded.parquet")
        per_item = graded.group_by("id").agg(pl.col("correct").cast(pl.Float64).mean())
        accuracy[name] = float(per_item["correct"].mean()) * 100  # type: ignore[arg-type]
    row = frame.filter(
        ~pl.col("first run").str.contains(r"\+") & pl.col("second run").str.contains(r"\+fair")
    ).row(0, named=True)
    assert row["first"] == pytest.approx(accuracy["run"])
    assert row["second"] == pytest.approx(accuracy["run+fair"])


def _row(measure: str, better: str, d: float, low: float, high: float) -> dict[str, object]:
    return {
        "first run": "A",
        "second run": "B",
        "measure": measure,
        "better": better,
        "difference": d,
        "ci_low": low,
        "ci_high": high,
    }


def test_readings_say_the_direction_the_size_and_whether_it_is_resolved() -> None:
    assert reading(_row("AssocMAD L5", "lower", -0.04, -0.06, -0.02)) == (
        "B's AssocMAD L5 is lower than A's by 0.040 [-0.060, -0.020] (better)."
    )
    assert reading(_row("accuracy (%)", "higher", -12.34, -20.0, -5.0)) == (
        "B's accuracy is lower than A's by 12.3 points [-20.0, -5.0] (worse)."
    )
    assert reading(_row("recall change, sex → female (pp)", "nearer 0", 1.0, -2.0, 3.0)) == (
        "recall change, sex → female: B and A are not told apart: the difference is 1.0 pp "
        "[-2.0, 3.0], an interval that holds 0."
    )
    assert "no interval" in reading(_row("AssocMAD L1", "lower", 0.1, float("nan"), float("nan")))


def test_ranking_orders_by_the_headline_and_reads_each_gap_from_its_pair() -> None:
    rows = [  # B - A = -0.3 [-0.5, -0.1]; C - A = -0.1 [-0.3, 0.1]; C - B = 0.2 [0.05, 0.4]
        ("A", "B", 0.9, 0.6, -0.3, -0.5, -0.1),
        ("A", "C", 0.9, 0.8, -0.1, -0.3, 0.1),
        ("B", "C", 0.6, 0.8, 0.2, 0.05, 0.4),
    ]
    table = pl.DataFrame(
        [(a, b, "AssocMAD", True, "lower", f, s, d, lo, hi) for a, b, f, s, d, lo, hi in rows],
        schema=[
            "first run",
            "second run",
            "measure",
            "headline",
            "better",
            "first",
            "second",
            "difference",
            "ci_low",
            "ci_high",
        ],
        orient="row",
    )
    ranking = _ranking(table, ["A", "B", "C"])
    assert ranking["model"].to_list() == ["B", "C", "A"]
    first = ranking.row(0, named=True)  # B - C = -0.2 [-0.4, -0.05]: resolved
    assert first["difference to next"] == pytest.approx(-0.2)
    assert (first["ci_low"], first["ci_high"]) == pytest.approx((-0.4, -0.05))
    assert first["ahead of next"] is True
    assert ranking.row(1, named=True)["ahead of next"] is False  # C - A holds 0
    assert ranking.row(2, named=True)["next"] is None


def test_several_adapters_need_eval_all(tiny_model: Path, tmp_path: Path) -> None:
    argv = [
        "eval",
        "intrinsic",
        "--model",
        str(tiny_model),
        "--adapter",
        "a",
        "--adapter",
        "b",
        "--out",
        str(tmp_path / "x"),
    ]
    assert main(argv) == 2
    with pytest.raises(UserError):
        from climb_vllm.cli.commands import engine_options
        from climb_vllm.cli.parser import build_parser

        engine_options(build_parser().parse_args(argv))
