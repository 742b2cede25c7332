"""Opening a run: the one step from the engine options to the engine configuration, where the
model's name is decided."""

from __future__ import annotations

from pathlib import Path

import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.runner.options import EngineOptions
from climb_vllm.runner.run import resolve_engine


def test_a_served_runs_model_is_the_label_else_the_served_name_else_left_to_the_probe() -> None:
    served = EngineOptions(endpoints=("http://127.0.0.1:1",))
    assert resolve_engine(served).engine == "http"
    assert resolve_engine(served).model == ""  # the probe names it
    named = EngineOptions(model="my-label", served_model="x", endpoints=("http://127.0.0.1:1",))
    assert (resolve_engine(named).model, resolve_engine(named).served_model) == ("my-label", "x")
    by_server = EngineOptions(served_model="x", endpoints=("http://127.0.0.1:1",))
    assert resolve_engine(by_server).model == "x"


def test_a_local_run_needs_a_model_and_keeps_unset_options_unset(tiny_model: Path) -> None:
    with pytest.raises(UserError, match="--model"):
        resolve_engine(EngineOptions())
    config = resolve_engine(EngineOptions(model=str(tiny_model), device="cpu", dtype="float32"))
    assert (config.model, config.engine, config.device) == (str(tiny_model), "local", "cpu")
    # What the user left unset stays unset: a benchmark's configuration applies its defaults.
    assert "concurrency" not in config.model_fields_set and "display" not in config.model_fields_set
