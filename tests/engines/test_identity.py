"""A resumed run refuses an engine whose model changed: weights replaced in place, or another
model served under the same name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.engines.identity import (
    canary,
    check_replicas_agree,
    check_same_model,
    weights_fingerprint,
)
from climb_vllm.models.demo_model import build_demo_model


def _eval(model: Path, out: Path) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        "-m",
        "climb_vllm",
        "eval",
        "intrinsic",
        "--model",
        str(model),
        "--out",
        str(out),
        "--limit",
        "24",
        "--sensitivity-codes",
        "0",
        "--display",
        "none",
        "--chunk-size",
        "8",
    ]
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


def test_canary_texts_tell_models_apart_within_the_dtype_tolerance() -> None:
    recorded = {"model": "m", "canary": [[-1.0, -2.0, -3.0]], "dtype": "float32"}
    close = {"canary": [[-1.0, -2.0002, -3.0]], "dtype": "float32"}
    check_same_model(recorded, close, Path("run"), "biasmd")
    with pytest.raises(UserError, match="canary texts"):
        check_same_model(
            recorded, {"canary": [[-1.0, -2.5, -3.0]], "dtype": "float32"}, Path("run"), "biasmd"
        )
    # Servers (dtype unknown) get the half-precision tolerance: tenths of a nat pass.
    check_same_model(recorded, {"canary": [[-1.2, -2.3, -3.0]]}, Path("run"), "biasmd")


def test_a_replica_serving_another_model_is_refused_at_the_first_start() -> None:
    facts = {
        "endpoints": [{"url": "http://a"}, {"url": "http://b"}],
        "canary": [[-1.0, -2.0, -3.0], [-4.0, -2.0, -3.0]],
    }
    with pytest.raises(UserError, match="http://b and http://a"):
        check_replicas_agree(facts)
    check_replicas_agree({"canary": [[-1.0, -2.0]]})


def test_canary_of_the_served_model_equals_the_in_process_one(
    engine: Any, vllm_server: str, tiny_model: Path
) -> None:
    from climb_vllm.engines.http import HttpEngine

    local = canary(engine)
    served = canary(HttpEngine([vllm_server], tokenizer=str(tiny_model)))
    assert local is not None and served is not None and len(local[0]) == 3
    assert max(abs(a - b) for a, b in zip(local[0], served[0])) < 1e-3
