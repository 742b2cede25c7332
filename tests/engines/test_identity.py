"""A resumed run refuses an engine whose model changed: weights replaced in place, or another
model served under the same name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.demo_model import build_demo_model
from climb_vllm.engines.identity import check_same_model, weights_fingerprint


def _eval(model: Path, out: Path) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "climb_vllm", "eval", "intrinsic", "--model", str(model),
        "--out", str(out), "--limit", "24", "--sensitivity-codes", "0", "--display", "none",
        "--chunk-size", "8",
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True)


def test_weights_replaced_in_place_are_refused_on_resume(tmp_path: Path) -> None:
    model = build_demo_model(tmp_path / "model", seed=1)
    first = _eval(model, tmp_path / "run")
    assert first.returncode == 0, first.stderr[-2000:]
    again = _eval(model, tmp_path / "run")  # the same weights: resumes (nothing to do)
    assert again.returncode == 0, again.stderr[-2000:]
    build_demo_model(model, seed=2)  # a "new epoch" written over the same folder
    mixed = _eval(model, tmp_path / "run")
    assert mixed.returncode == 2
    assert "mix two models' records" in mixed.stderr and "--out" in mixed.stderr
    assert mixed.stderr.count("error:") == 1


def test_fingerprint_sees_a_changed_tensor_and_ignores_notes(tmp_path: Path) -> None:
    model = build_demo_model(tmp_path / "model", seed=1)
    before = weights_fingerprint(model)
    (model / "NOTES.md").write_text("trained on Tuesday")
    assert weights_fingerprint(model) == before
    # Another training run of the same architecture: every tensor differs.
    rebuilt = build_demo_model(tmp_path / "other", seed=3)
    assert weights_fingerprint(rebuilt) != before


def test_another_model_behind_the_same_served_name_is_refused() -> None:
    before = {"served_model": "m", "served_models": [{"id": "m", "root": "/models/a"}]}
    after = {"served_model": "m", "served_models": [{"id": "m", "root": "/models/b"}]}
    with pytest.raises(UserError, match="/models/b"):
        check_same_model(before, after, Path("run"), "intrinsic")
    check_same_model(before, before, Path("run"), "intrinsic")
    # Facts a run recorded before identities were kept are not compared.
    check_same_model({"served_model": "m"}, after, Path("run"), "intrinsic")
