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


def _eval(model: Path, out: Path, *engine: str) -> subprocess.CompletedProcess[str]:
    """A small intrinsic run of ``model`` in process, or through ``engine``'s flags."""
    command = [
        sys.executable,
        "-m",
        "climb_vllm",
        "eval",
        "intrinsic",
        *(engine or ("--model", str(model))),
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


def test_the_tolerance_follows_the_measured_spread_within_its_floors() -> None:
    from climb_vllm.engines.identity import CEILING, FLOOR_FULL, FLOOR_HALF, FLOOR_SERVED, tolerance

    assert tolerance("float32", 0.0) == FLOOR_FULL
    assert tolerance(None, 1e-6) == FLOOR_SERVED  # a deterministic server
    assert tolerance("bfloat16", 0.0) == FLOOR_HALF
    assert tolerance(None, 0.01) == pytest.approx(0.1)  # ten times a noisy server's spread
    assert tolerance(None, 0.2) == CEILING
    # Runs recorded before the spread was measured keep the fixed values.
    assert tolerance("float32") == FLOOR_FULL and tolerance(None) == CEILING


def test_a_refusal_names_what_the_engine_holds_and_the_difference_against_the_tolerance() -> None:
    recorded = {
        "served_model": "m",
        "canary": [[-1.0, -2.0, -3.0]],
        "canary_spread": 1e-5,
        "served_models": [{"id": "m", "root": "/models/a"}],
    }
    now = {"canary": [[-1.0, -2.3, -3.0]], "served_models": [{"id": "m", "root": "/models/a"}]}
    with pytest.raises(UserError) as raised:
        check_same_model(recorded, now, Path("run"), "intrinsic")
    text = raised.value.message
    assert "records of m" in text and "m from /models/a" in text
    assert "by up to 0.3 nat; tolerance 0.02" in text and "spread 1e-05" in text
    local = {"model": "/m", "weights_fingerprint": "ab" * 32, "dtype": "float32"}
    with pytest.raises(UserError, match="weights fingerprint abababab"):
        check_same_model(
            local | {"canary": [[-1.0]], "canary_spread": 0.0},
            local | {"canary": [[-1.1]]},
            Path("run"),
            "biasmd",
        )


def _perturbed(folder: Path, scale: float) -> None:
    """Every weight of ``folder`` multiplied by 1 + ``scale`` x N(0, 1) (fixed seed): a
    checkpoint of the next epoch, a re-quantised file."""
    import torch
    from safetensors.torch import load_file, save_file

    generator = torch.Generator().manual_seed(0)
    for path in folder.glob("*.safetensors"):
        tensors = load_file(path)
        changed = {
            k: v * (1 + scale * torch.randn(v.shape, generator=generator))
            for k, v in tensors.items()
        }
        save_file(changed, path, metadata={"format": "pt"})


def test_a_served_checkpoint_changed_by_one_percent_is_refused_and_a_restart_resumes(
    tmp_path: Path,
) -> None:
    """On vLLM's CPU build (fp32): the same server restarted on the same weights resumes; the
    weights perturbed by 1% behind the same path (same /v1/models id and root) are refused
    by the canary's measured tolerance, naming what the endpoint holds."""
    from climb_vllm.serving.launch import serve
    from climb_vllm.serving.state import stop
    from tests.helpers import free_port, vllm_python

    model = build_demo_model(tmp_path / "checkpoint", seed=1)
    state = tmp_path / "endpoints.json"
    out = tmp_path / "run"

    def served_eval() -> subprocess.CompletedProcess[str]:
        url = serve([str(model)], port=free_port(), python=vllm_python(), cpu=True, state=state)
        try:
            return _eval(model, out, "--endpoint", url[0], "--tokenizer", str(model))
        finally:
            stop(state)

    first = served_eval()
    assert first.returncode == 0, first.stderr[-2000:]
    import json

    facts = json.loads((out / "manifest.json").read_text())["benchmarks"]["intrinsic"]["engine"]
    assert facts["canary_spread"] < 1e-3 and facts["canary_tolerance"] == 0.02
    again = served_eval()  # the same weights, a new server process
    assert again.returncode == 0, again.stderr[-2000:]
    _perturbed(model, 0.01)
    changed = served_eval()
    assert changed.returncode == 2, changed.stderr[-2000:]
    assert changed.stderr.count("error:") == 1
    assert "mix two models' records" in changed.stderr and "tolerance 0.02" in changed.stderr
    assert f"from {model}" in changed.stderr  # what the endpoint serves now: its root


def test_a_resume_keeps_the_first_canary_and_the_largest_spread() -> None:
    from climb_vllm.engines.identity import resumed_facts

    first = {"canary": [[-1.0, -2.0]], "canary_spread": 1e-5}
    now = {"canary": [[-1.001, -2.0]], "canary_spread": 4e-3, "dtype": None}
    facts = resumed_facts(first, now)
    assert facts["canary"] == [[-1.0, -2.0]] and facts["canary_spread"] == 4e-3
    assert facts["canary_tolerance"] == pytest.approx(0.04)
    assert now["canary"] == [[-1.001, -2.0]]  # the facts now are not changed in place
    assert resumed_facts({}, {"canary": None})["canary_spread"] is None
