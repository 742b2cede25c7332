"""``climb-vllm rescore`` on a run graded by an earlier grader: the answers are graded again and
the command says which grades changed, telling renamings from changes of reading."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from climb_vllm.benchmarks.hive.run import grade_changes
from climb_vllm.cli import main
from climb_vllm.report.rescore import grade_change_lines


def test_grade_changes_tell_renamings_from_new_readings() -> None:
    before = pl.DataFrame(
        {
            "id": ["a", "b", "c", "d"],
            "sample": [0] * 4,
            "grade": ["no_attribution", "no_attribution", "unnamed", "first"],
        }
    )
    after = pl.DataFrame(
        {
            "id": ["a", "b", "c", "d"],
            "sample": [0] * 4,
            "grade": ["declined", "declined", "indecisive", "first"],
        }
    )
    changes = grade_changes(before, after)
    assert changes == [
        {"from": "no_attribution", "to": "declined", "answers": 2, "renamed": True},
        {"from": "unnamed", "to": "indecisive", "answers": 1, "renamed": False},
    ]
    text = grade_change_lines("biasmd", changes)
    assert text.index("1 answers graded differently") < text.index("grades renamed")


def test_rescore_of_a_run_graded_by_the_earlier_grader(
    suite_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(suite_run, run)
    graded = run / "results" / "biasmd" / "graded.parquet"
    now = pl.read_parquet(graded)
    # What the earlier grader stored: its names for two grades, and one answer read otherwise.
    other = "unnamed" if now["grade"][0] != "unnamed" else "first"
    old = now.with_columns(
        pl.when(pl.int_range(pl.len()) == 0)
        .then(pl.lit(other))
        .otherwise(
            pl.col("grade").replace({"declined": "no_attribution", "unparseable": "unclear"})
        )
        .alias("grade")
    )
    old.write_parquet(graded)
    capsys.readouterr()
    assert main(["rescore", str(run)]) == 0
    out = capsys.readouterr().out
    assert "biasmd: 1 answers graded differently:" in out
    assert f"{other} -> {now['grade'][0]}: 1" in out
    assert pl.read_parquet(graded)["grade"].to_list() == now["grade"].to_list()
    capsys.readouterr()
    assert main(["rescore", str(run)]) == 0  # a second rescore finds nothing to regrade
    assert "graded differently" not in capsys.readouterr().out
