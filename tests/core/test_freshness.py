"""Stored results are read back only while their inputs are those they were made from: the
report after an eval does not compute them again, and any change to the records or the
configuration makes it recompute."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from climb_vllm.benchmarks.intrinsic.benchmark import IntrinsicBenchmark
from climb_vllm.cli import main
from climb_vllm.core import freshness
from climb_vllm.report.html import write_report


@pytest.fixture
def run(tiny_model: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    argv = [
        "eval",
        "intrinsic",
        "--model",
        str(tiny_model),
        "--limit",
        "30",
        "--sensitivity-codes",
        "0",
        "--out",
        str(out),
        "--display",
        "none",
    ]
    assert main(argv) == 0
    return out


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("recomputed")


def test_an_eval_stamps_its_results_and_the_report_reads_them(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = json.loads((run / "results" / "intrinsic" / "metrics.json").read_text())
    assert freshness.current_metrics(run, "intrinsic") == stored
    monkeypatch.setattr(IntrinsicBenchmark, "results", _refuse)
    assert write_report([run], run / "report").is_file()  # nothing recomputed


def test_changed_records_or_configuration_are_recomputed(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunk = next((run / "records" / "intrinsic").glob("chunk-*.parquet"))
    info = chunk.stat()
    os.utime(chunk, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    assert freshness.current_metrics(run, "intrinsic") is None
    monkeypatch.setattr(IntrinsicBenchmark, "results", _refuse)
    with pytest.raises(AssertionError, match="recomputed"):
        write_report([run], run / "report")
    monkeypatch.undo()
    assert main(["rescore", str(run)]) == 0  # recomputes and stamps again
    assert freshness.current_metrics(run, "intrinsic") is not None
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["benchmarks"]["intrinsic"]["config"]["sex_rule"] = "listed"
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert freshness.current_metrics(run, "intrinsic") is None


def test_no_stamp_no_reuse(run: Path) -> None:
    (run / "results" / "intrinsic" / freshness.STAMP).unlink()
    assert freshness.current_metrics(run, "intrinsic") is None


def test_an_input_file_the_configuration_names_is_part_of_the_stamp(
    run: Path, tmp_path: Path
) -> None:
    named = tmp_path / "inputs.csv"
    named.write_text("a\n")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["benchmarks"]["intrinsic"]["config"]["names_file"] = str(named)
    (run / "manifest.json").write_text(json.dumps(manifest))
    freshness.mark(run, "intrinsic")
    assert freshness.current_metrics(run, "intrinsic") is not None
    named.write_text("a changed file\n")
    assert freshness.current_metrics(run, "intrinsic") is None
