"""Agreement with labels: the Wilson interval, the mapping per label scheme, and the command
end to end on a sample of real models' answers (tests/golden/graders/HIVE_DEV_SAMPLE.md)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from climb_vllm.benchmarks.biasmd.kind import kind as biasmd_kind
from climb_vllm.benchmarks.diseasematcher.kind import kind as diseasematcher_kind
from climb_vllm.benchmarks.hive.agreement import compare, confusion, summary, wilson
from climb_vllm.cli import main
from climb_vllm.core.errors import UserError
from tests.helpers import GOLDEN


def test_wilson_interval() -> None:
    low, high = wilson(45, 50)
    assert low == pytest.approx(0.7864, abs=1e-4) and high == pytest.approx(0.9565, abs=1e-4)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == pytest.approx(1.0)
    assert all(v != v for v in wilson(0, 0))  # nan without trials


def _graded(groups: list[str], labels: list[str], grades: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"group": groups, "label": labels, "grade": grades})


def test_three_way_labels_put_hedged_picks_in_ambiguous() -> None:
    # Group "a" uses the three-way scheme, group "b" only same / different.
    graded = _graded(
        ["a", "a", "b", "b"],
        ["ambiguous", "same", "same", "different"],
        ["hedged_correct", "correct", "hedged_correct", "refusal"],
    )
    compared = compare(diseasematcher_kind(), graded)
    assert compared["category"].to_list() == ["ambiguous", "same", "same", "different"]
    assert compared["agrees"].all()
    table = summary(compared)
    assert table["agreement_pct"].to_list() == [100.0, 100.0]


def test_biasmd_categories_and_confusion() -> None:
    graded = _graded(
        ["m"] * 4,
        ["ambiguous", "ambiguous", "biased", "biased"],
        ["declined", "first", "second", "hedged_first"],
    )
    compared = compare(biasmd_kind(), graded)
    assert compared["agrees"].to_list() == [True, False, True, False]
    matrix = confusion(compared, ("declined", "first", "second", "hedged_first"))
    row = matrix.filter(pl.col("label") == "biased").row(0, named=True)
    assert (row["second"], row["hedged_first"], row["declined"]) == (1, 1, 0)


def test_unknown_labels_are_one_clear_error() -> None:
    with pytest.raises(UserError, match="not BiasMD categories: maybe"):
        compare(biasmd_kind(), _graded(["m"], ["maybe"], ["first"]))


@pytest.mark.parametrize(("benchmark", "least"), [("biasmd", 0.90), ("diseasematcher", 0.90)])
def test_agreement_command_on_real_answers(
    benchmark: str, least: float, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = GOLDEN / "graders" / f"hive_dev_sample_{benchmark}.csv"
    out = tmp_path / "agreement"
    assert (
        main(
            [
                "grade",
                benchmark,
                str(sample),
                "--labels",
                "label",
                "--out",
                str(out),
                "--disagreements",
                "2",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "Agreement of the" in printed and "compared" in printed
    table = pl.read_csv(out / "agreement.csv")
    answers = pl.read_csv(sample)
    assert set(table["group"]) == set(answers["model"])  # grouped by the model column
    assert table["answers"].sum() == answers.height
    assert int(table["agree"].sum()) / int(table["answers"].sum()) >= least
    wrong = pl.read_csv(out / "disagreements.csv")
    assert wrong.height == table["disagreements"].sum()
    assert (out / "confusion.csv").is_file() and (out / "disagreements.md").is_file()


def test_agreement_needs_an_output_folder_and_the_label_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = GOLDEN / "graders" / "hive_dev_sample_biasmd.csv"
    assert main(["grade", "biasmd", str(sample), "--labels", "label"]) == 2
    assert "add --out DIR" in capsys.readouterr().err
    code = main(["grade", "biasmd", str(sample), "--labels", "verdict", "--out", str(tmp_path)])
    assert code == 2
    assert "lacks the column(s) verdict" in capsys.readouterr().err
