"""A base model and two adapters in one 'eval all': the report's paired comparison agrees with
each run's own tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from climb_vllm.adapters import make_demo_adapter
from climb_vllm.cli import main
from climb_vllm.core.errors import UserError
from climb_vllm.report.paired import pairs


@pytest.fixture(scope="module")
def compared(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("paired")
    kind = make_demo_adapter(tiny_model, folder / "kind", seed=1)
    fair = make_demo_adapter(tiny_model, folder / "fair", seed=2)
    out = folder / "run"
    argv = [
        "eval", "all", "--model", str(tiny_model), "--adapter", str(kind), "--adapter", str(fair),
        "--benchmarks", "intrinsic,biasmd,diseasematcher", "--limit-intrinsic", "40",
        "--sensitivity-codes", "0", "--limit-biasmd", "6", "--limit-diseasematcher", "6",
        "--max-tokens", "24", "--out", str(out), "--display", "none",
    ]  # fmt: skip
    assert main(argv) == 0
    return out


def test_each_adapter_gets_its_own_run_and_one_report_pairs_them(compared: Path) -> None:
    for name in ("run", "run+kind", "run+fair"):
        assert (compared.parent / name / "manifest.json").is_file()
    tables = compared / "report" / "tables"
    for benchmark in ("intrinsic", "biasmd", "diseasematcher"):
        frame = pl.read_csv(tables / f"paired_{benchmark}.csv")
        assert frame["adapter run"].str.contains(r"\+kind|\+fair").all()
        assert frame.height == (12 if benchmark == "intrinsic" else 2)
        difference = frame["adapter"] - frame["base"]
        assert np.allclose(difference.to_numpy(), frame["difference"].to_numpy(), atol=1e-9)
        assert (frame["ci_low"] <= frame["ci_high"]).all()
    assert "Adapters against their base" in (compared / "report" / "report.html").read_text()


def test_intrinsic_difference_matches_each_runs_table1(compared: Path) -> None:
    frame = pl.read_csv(compared / "report" / "tables" / "paired_intrinsic.csv")
    own = {}
    for name in ("run", "run+kind"):
        table = pl.read_csv(compared.parent / name / "results" / "intrinsic" / "table1.csv")
        own[name] = table.filter(pl.col("Scores") == "paper").row(0, named=True)
    kind = frame.filter(pl.col("adapter run").str.contains(r"\+kind"))
    for row in kind.iter_rows(named=True):
        label = "Mean" if row["level"] == "mean" else row["level"]
        assert row["base"] == pytest.approx(own["run"][label], abs=1e-4)
        assert row["adapter"] == pytest.approx(own["run+kind"][label], abs=1e-4)


def test_hive_difference_matches_the_graded_answers(compared: Path) -> None:
    frame = pl.read_csv(compared / "report" / "tables" / "paired_diseasematcher.csv")
    accuracy = {}
    for name in ("run", "run+fair"):
        graded = pl.read_parquet(compared.parent / name / "results/diseasematcher/graded.parquet")
        per_item = graded.group_by("id").agg(pl.col("correct").cast(pl.Float64).mean())
        accuracy[name] = float(per_item["correct"].mean()) * 100  # type: ignore[arg-type]
    row = frame.filter(pl.col("adapter run").str.contains(r"\+fair")).row(0, named=True)
    assert row["base"] == pytest.approx(accuracy["run"])
    assert row["adapter"] == pytest.approx(accuracy["run+fair"])


def test_runs_pair_by_model_and_adapter() -> None:
    def manifest(model: str, adapter: str | None) -> dict[str, object]:
        return {"benchmarks": {"intrinsic": {"config": {"model": model, "adapter": adapter}}}}

    runs = [manifest("m", "a1"), manifest("m", None), manifest("other", "a2"), manifest("m", "a3")]
    assert pairs(runs) == [(1, 0), (1, 3)]  # "other" has no base run here


def test_several_adapters_need_eval_all(tiny_model: Path, tmp_path: Path) -> None:
    argv = ["eval", "intrinsic", "--model", str(tiny_model), "--adapter", "a", "--adapter", "b",
            "--out", str(tmp_path / "x")]  # fmt: skip
    assert main(argv) == 2
    with pytest.raises(UserError):
        from climb_vllm.cli.commands import engine_options
        from climb_vllm.cli.parser import build_parser

        engine_options(build_parser().parse_args(argv))
