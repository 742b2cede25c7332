"""Grading responses from other tools: the CSV format, its bad inputs, and the prompts export."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from climb_vllm.cli import main


def _grade(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["grade", "diseasematcher", str(path), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip()


def test_grades_external_responses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "responses.csv"
    pl.DataFrame(
        {
            "id": ["dm-00001", "dm-00002", "dm-00003", "dm-99999"],
            "response": ["Cora is more likely.", "Aubrey.", "", "Someone."],
        }
    ).write_csv(path)
    code, out, err = _grade(path, capsys, "--out", str(tmp_path / "graded"))
    assert code == 0
    assert "DiseaseMatcher Table 1" in out
    assert "responses 4, graded 3, unknown_ids 1, empty 1" in out
    assert "1 rows have ids that are not diseasematcher items (first: dm-99999)" in err
    graded = pl.read_csv(tmp_path / "graded" / "graded.csv").sort("id")
    assert graded["grade"].to_list() == ["correct", "wrong", "empty"]


def test_prompts_export_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompts = tmp_path / "prompts.csv"
    assert main(["prompts", "biasmd", str(prompts), "--limit", "5"]) == 0
    frame = pl.read_csv(prompts)
    assert frame.columns == ["id", "kind", "prompt"]
    assert frame["prompt"][0].startswith("To whom does '")
    responses = frame.select("id", pl.lit("It is ambiguous.").alias("response"))
    responses.write_csv(tmp_path / "answers.csv")
    capsys.readouterr()
    assert main(["grade", "biasmd", str(tmp_path / "answers.csv")]) == 0
    out = capsys.readouterr().out
    assert "| BiasMD | 5 | 100.0 |" in out  # all five statements left unattributed
    assert "| Control |" in out


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"item,answer\ndm-00001,Cora\n", "lacks the column(s) id, response"),
        (b"id,response\ndm-00001,Cora \xe9t\xe9\n", "not UTF-8"),
        (b"id,response\ndm-00001,a\ndm-00001,b\n", "distinct 'sample'"),
        (b"id,response\nbiasmd-0001,a\n", "None of the 1 ids"),
        (b"id,response,sample\ndm-00001,a,first\n", "whole numbers"),
    ],
)
def test_bad_response_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, needle: str
) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    code, _, err = _grade(path, capsys)
    assert code == 2
    assert err.startswith("error:") and "Fix:" in err and needle in err and "\n" not in err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _grade(tmp_path / "nope.csv", capsys)
    assert code == 2 and "does not exist" in err


def test_unwritable_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["prompts", "biasmd", str(blocker / "prompts.csv")]) == 2
    assert "Cannot write to" in capsys.readouterr().err
    responses = tmp_path / "responses.csv"
    responses.write_text("id,response\ndm-00001,Cora\n")
    code, _, err = _grade(responses, capsys, "--out", str(blocker / "graded"))
    assert code == 2 and "Cannot write to" in err and "--out" in err


def test_prompts_to_an_unwritable_path_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "taken"
    folder.mkdir()
    assert main(["prompts", "biasmd", str(folder)]) == 2  # a folder, not a file
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Cannot write the prompts" in err and "Fix:" in err
