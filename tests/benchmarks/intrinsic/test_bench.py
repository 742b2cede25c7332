"""The benchmark command computes its ratios from real runs (no timing is asserted here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from climb_vllm.benchmarks.intrinsic.bench import scoring_bench
from climb_vllm.cli import main


def test_bench_reports_work_ratios_and_agreement(tiny_model: Path, tmp_path: Path) -> None:
    results = scoring_bench(tiny_model, codes=30, device="cpu", batch_tokens=4096)
    assert results["pairs"] == 30 * 30
    assert results["P1_ratio"] > 10
    assert results["P1_max_abs_logprob_diff"] < 1e-4


def test_bench_command_writes_json(tiny_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    argv = ["bench", "--model", str(tiny_model), "--codes", "24", "--device", "cpu", "--json",
            str(out)]  # fmt: skip
    assert main(argv) == 0
    assert json.loads(out.read_text())["codes"] == 24


@pytest.mark.parametrize("option", ["--grading", "--mapping"])
def test_bench_sizes_below_one_are_refused(option: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", option, "0"]) == 2
    assert f"{option} must be at least 1" in capsys.readouterr().err
