"""Choice mode end to end on the tiny model (noise: these tests check the plumbing, not the
numbers): ``eval --answer choice`` for both benchmarks, its tables, the report and rescore that
read them, resuming, and a vLLM server that scores the same options as the in-process engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from climb_vllm.benchmarks.diseasematcher import choice as dm_choice
from climb_vllm.benchmarks.diseasematcher.task import items_frame
from climb_vllm.benchmarks.hive.choice import score_prompts
from climb_vllm.cli import main


def _eval(model: Path, out: Path, benchmark: str, *extra: str) -> list[str]:
    return [
        "eval",
        benchmark,
        "--model",
        str(model),
        "--device",
        "cpu",
        "--out",
        str(out),
        "--limit",
        "12",
        "--answer",
        "choice",
        "--chunk-size",
        "8",
        "--display",
        "none",
        *extra,
    ]


@pytest.fixture(scope="module")
def choice_run(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("choice") / "run"
    for benchmark in ("diseasematcher", "biasmd"):
        assert main(_eval(tiny_model, out, benchmark)) == 0
    return out


def test_choice_runs_write_their_tables_and_record_the_method(choice_run: Path) -> None:
    manifest = json.loads((choice_run / "manifest.json").read_text())
    for benchmark in ("diseasematcher", "biasmd"):
        section = manifest["benchmarks"][benchmark]
        assert section["config"]["answer"] == "choice"
        assert section["prompt_template"].endswith("\nAnswer:")
        assert section["choice"]["content_free"] == ["N/A", "None", "[MASK]"]
        tokens = section["tokens_this_session"]
        assert tokens["shared"] < tokens["separate"]
        results = choice_run / "results" / benchmark
        metrics = json.loads((results / "metrics.json").read_text())
        assert {"choice_accuracy", "choice_position", "choice_swaps"} <= set(metrics)
        graded = pl.read_parquet(results / "graded.parquet")
        assert graded["id"].n_unique() == graded.height
    dm = json.loads((choice_run / "results" / "diseasematcher" / "metrics.json").read_text())
    assert {r["swap"] for r in dm["choice_swaps"]} == {"attribute_swap", "name_swap"}
    assert manifest["benchmarks"]["diseasematcher"]["choice"]["headline"] == "calibrated"
    assert manifest["benchmarks"]["biasmd"]["choice"]["headline"] == "per_byte"


def test_the_report_shows_choice_mode_and_its_finding(
    choice_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(choice_run), "--out", str(tmp_path / "report")]) == 0
    page = (tmp_path / "report" / "report.html").read_text()
    assert "DiseaseMatcher, choice mode: swaps" in page
    assert "BiasMD, choice mode: accuracy by each score" in page
    assert "choice mode (calibrated): accuracy" in page
    assert "choice mode (per byte): &#x27;cannot be determined&#x27; chosen" in page or (
        "choice mode (per byte): 'cannot be determined' chosen" in page
    )
    assert main(["rescore", str(choice_run)]) == 0


def test_the_same_command_resumes_and_another_answer_mode_is_refused(
    tiny_model: Path, choice_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunks = sorted((choice_run / "records" / "diseasematcher").glob("chunk-*.parquet"))
    stamps = [p.stat().st_mtime_ns for p in chunks]
    assert main(_eval(tiny_model, choice_run, "diseasematcher")) == 0
    assert [p.stat().st_mtime_ns for p in chunks] == stamps
    capsys.readouterr()
    generate = _eval(tiny_model, choice_run, "diseasematcher")
    generate[generate.index("choice")] = "generate"
    assert main(generate) == 2
    assert "changed: answer" in capsys.readouterr().err


def test_a_vllm_server_scores_options_as_the_in_process_engine(
    vllm_server: str, tiny_model: Path, engine: Any
) -> None:
    from climb_vllm.engines.http import HttpEngine

    prompts = dm_choice.prompts(items_frame("eval", 6, 0))
    http = HttpEngine([vllm_server], tokenizer=str(tiny_model))
    served = score_prompts(http, prompts)
    local = score_prompts(engine, prompts)
    for column in ("logprob", "calibration"):
        worst = (served[column] - local[column]).abs().max()
        assert isinstance(worst, float) and worst < 2e-4, (column, worst)


def test_a_report_sets_choice_mode_beside_generation_mode(
    tiny_model: Path, choice_run: Path, tmp_path: Path
) -> None:
    """A run folder holds one answer mode per benchmark (its section is one configuration): the
    two modes of one model go side by side when the report is given both folders, each with
    its finding and tables, and their per-item correctness is compared as two models are."""
    generate = _eval(tiny_model, tmp_path / "generate", "diseasematcher", "--max-tokens", "8")
    generate[generate.index("choice")] = "generate"
    assert main(generate) == 0
    assert (
        main(["report", str(tmp_path / "generate"), str(choice_run), "--out", str(tmp_path / "r")])
        == 0
    )
    page = (tmp_path / "r" / "report.html").read_text()
    findings = page[page.index("id='findings'") : page.index("id='scope'")]
    assert "(generate)" in findings and "(run)" in findings
    assert "choice mode (calibrated): accuracy" in findings
    assert "HIVE Table 1" in page and "DiseaseMatcher, choice mode: swaps" in page
    compared = page[page.index("id='compare_diseasematcher'") :]
    assert "12 items" in compared[: compared.index("Provenance")]
