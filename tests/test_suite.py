"""``climb-vllm eval all`` on the tiny model: one run directory, one display, the report, and a
suite killed mid-way that resumes without lost or duplicated records."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import polars as pl
import pytest

from climb_vllm.benchmarks.registry import REGISTRY
from climb_vllm.cli import main
from tests.helpers import kill_after_chunks, suite_command


@pytest.fixture(autouse=True)
def _cache(mapping_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLIMB_VLLM_CACHE", str(mapping_cache))


def _ids(run: Path, benchmark: str, key: list[str]) -> list[tuple[object, ...]]:
    frame = pl.read_parquet(run / "records" / benchmark / "chunk-*.parquet")
    return sorted(frame.select(key).rows())


def test_suite_fills_one_run_directory_and_writes_the_report(
    suite_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = json.loads((suite_run / "manifest.json").read_text())
    assert set(manifest["benchmarks"]) == set(REGISTRY)
    for benchmark in REGISTRY:
        assert (suite_run / "results" / benchmark / "metrics.json").is_file(), benchmark
    templates = pl.read_parquet(suite_run / "records" / "intrinsic-templates" / "*.parquet")
    assert set(templates["kind"]) == {"content-free", "code"}
    assert templates["template"].n_unique() == 4  # the paper's and three more
    intrinsic = json.loads((suite_run / "results" / "intrinsic" / "metrics.json").read_text())
    assert {"calibrated_table1", "sensitivity", "base_rates"} <= set(intrinsic)
    assert (suite_run / "report" / "report.html").is_file()


def test_suite_display_has_a_row_per_benchmark(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = suite_command(
        tiny_model, out, "--display", "plain", "--benchmarks", "biasmd,intrinsic", "--no-report"
    )
    assert main(argv) == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.startswith("suite: ")]
    assert lines, captured.err
    last = lines[-1]
    # suite order, whatever order --benchmarks names them in; counts, rate, errors, ETA
    assert last.index("intrinsic") < last.index("biasmd")
    for benchmark in ("intrinsic", "biasmd"):
        assert re.search(rf"{benchmark} (\d+)/\1 \([\d.,]+/s, retried 0, failed 0, ETA", last), last
    assert "waiting" not in last
    assert captured.out.strip().endswith(str(out))  # --no-report prints the run directory
    assert not (out / "report").exists()
    assert set(json.loads((out / "manifest.json").read_text())["benchmarks"]) == {
        "intrinsic",
        "biasmd",
    }


def test_killed_suite_resumes_without_lost_or_duplicated_records(
    tiny_model: Path, suite_run: Path, tmp_path: Path
) -> None:
    resumed = tmp_path / "resumed"
    argv = suite_command(tiny_model, resumed, "--display", "none")
    # Killed once the extrinsic benchmark has written its first chunk (intrinsic is done).
    kill_after_chunks(
        [sys.executable, "-m", "climb_vllm", *argv], resumed / "records" / "extrinsic", 1
    )
    assert not (resumed / "records" / "biasmd").exists()
    assert main(argv) == 0
    # Scoring is deterministic: the intrinsic records equal the uninterrupted run's.
    for benchmark in ("intrinsic", "intrinsic-templates"):

        def frame(run: Path, name: str = benchmark) -> pl.DataFrame:
            data = pl.read_parquet(run / "records" / name / "chunk-*.parquet")
            return data.drop("token_logprobs", strict=False).sort(pl.all())

        assert frame(resumed).equals(frame(suite_run)), benchmark
    for benchmark, key in (
        ("extrinsic", ["id", "sample"]),
        ("biasmd", ["id", "sample"]),
        ("diseasematcher", ["id", "sample"]),
    ):
        ids = _ids(resumed, benchmark, key)
        assert ids == _ids(suite_run, benchmark, key)  # nothing lost
        assert len(ids) == len(set(ids))  # nothing twice
    assert (resumed / "report" / "report.html").is_file()


def test_unknown_benchmark_is_one_clear_error(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = suite_command(tiny_model, tmp_path / "run", "--benchmarks", "intrinsic,extrinsc")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "extrinsc" in err and "choose from intrinsic,extrinsic,biasmd,diseasematcher" in err
    assert not (tmp_path / "run").exists()


def test_suite_against_a_real_vllm_server(
    vllm_server: str, tiny_model: Path, tmp_path: Path
) -> None:
    """Every benchmark against vLLM's own server (its CPU build): the http engine is probed
    once and shared; sampling is unseeded there (that build crashes on per-request seeds with
    chunked prefill), which every record and the report say."""
    out = tmp_path / "run"
    argv = [
        "eval",
        "all",
        "--endpoint",
        vllm_server,
        "--tokenizer",
        str(tiny_model),
        "--limit",
        "4",
        "--limit-intrinsic",
        "60",
        "--sensitivity-codes",
        "0",
        "--index-limit",
        "300",
        "--max-tokens",
        "24",
        "--out",
        str(out),
        "--display",
        "none",
    ]
    assert main(argv) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    sections = manifest["benchmarks"]
    assert set(sections) == set(REGISTRY) and "failed" not in manifest
    for section in sections.values():
        assert section["engine"]["engine"] == "http"
        assert section["config"]["served_model"] == "tiny"
        assert section["engine"]["endpoints"][0]["server"] == "vllm"
        assert section["engine"]["per_request_seeds"] is False
    for benchmark in ("extrinsic", "biasmd", "diseasematcher"):
        records = pl.read_parquet(out / "records" / benchmark / "chunk-*.parquet")
        assert records.height > 0 and records["seed"].null_count() == records.height
    page = (out / "report" / "report.html").read_text()
    assert "vllm" in page and vllm_server in page  # provenance names the server
    assert "not sent: the server takes no per-request seeds" in page
    for name in ("extrinsic_table7", "biasmd_accuracy", "diseasematcher_table1"):
        assert (out / "report" / "tables" / f"{name}.csv").is_file(), name
