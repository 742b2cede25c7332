"""Compiled decoder layers: the eager log-probs, and eager layers outside the scoring passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from climb_vllm.benchmarks.intrinsic import task as intrinsic
from climb_vllm.core.config import EngineConfig
from climb_vllm.core.errors import UserError
from climb_vllm.engines.base import GenerateRequest, ScoreRequest
from climb_vllm.engines.compiled import CompiledLayers
from climb_vllm.engines.local import LocalEngine
from climb_vllm.engines.registry import open_engine


@pytest.fixture(scope="module")
def compiled(tiny_model: Path) -> LocalEngine:
    # The first pass compiles one layer's graph for every layer (about 10-20 s on 2 cores).
    return LocalEngine(str(tiny_model), device="cpu", compile_layers=True)


@pytest.fixture(scope="module")
def requests(engine: Any) -> list[ScoreRequest]:
    return intrinsic.sample_requests(engine.tokenizer, 40, top_k=10, seed=5)


def test_compiled_layers_give_the_eager_log_probs(
    compiled: LocalEngine, engine: Any, requests: list[ScoreRequest]
) -> None:
    got = compiled.score(requests)
    want = engine.score(requests)
    worst = max(abs(a - b) for x, y in zip(got, want) for a, b in zip(x.logprobs, y.logprobs))
    assert worst < 1e-4
    assert compiled._compiled is not None
    assert compiled._compiled.first_pass_seconds is not None
    assert compiled.describe()["compiled_layers"] is True
    # Passes of other shapes reuse the graph (dynamic shapes) and stay equal.
    small = LocalEngine.with_scorer(compiled, "tree", batch_tokens=96)
    again = small.score(requests[:7])
    assert (
        max(abs(a - b) for x, y in zip(again, want[:7]) for a, b in zip(x.logprobs, y.logprobs))
        < 1e-4
    )


def test_generation_and_other_scorers_run_the_eager_layers(
    compiled: LocalEngine, engine: Any, requests: list[ScoreRequest]
) -> None:
    compiled.score(requests[:3])
    assert compiled._compiled is not None
    assert all("forward" not in vars(layer) for layer in compiled._compiled.layers)
    request = GenerateRequest(prompt="Chest pain and", max_tokens=6, temperature=0.0)
    assert compiled.generate([request])[0].texts == engine.generate([request])[0].texts
    eager = compiled.with_scorer("tree", compile_layers=False)
    assert eager._compiled is None and compiled._compiled is not None


def test_a_model_without_a_layer_list_is_refused() -> None:
    class Flat(torch.nn.Module):
        def get_decoder(self) -> Any:
            return torch.nn.Linear(2, 2)

    with pytest.raises(UserError, match="--compile needs a decoder with a list of layers"):
        CompiledLayers(Flat())


def test_a_failed_compile_is_one_error_that_names_the_fix(
    compiled: LocalEngine, requests: list[ScoreRequest], monkeypatch: pytest.MonkeyPatch
) -> None:
    from torch._dynamo.exc import InternalTorchDynamoError

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise InternalTorchDynamoError("no C++ compiler found")

    assert compiled._compiled is not None
    monkeypatch.setattr(compiled._compiled, "_forwards", [fails] * len(compiled._compiled.layers))
    with pytest.raises(UserError, match="Compiling the decoder layers failed") as caught:
        compiled.score(requests[:2])
    assert "run without --compile" in caught.value.fix
    # the layers are eager again after the failure
    assert all("forward" not in vars(layer) for layer in compiled._compiled.layers)


def test_compile_is_refused_for_servers() -> None:
    config = EngineConfig(
        model="m", engine="http", endpoints=("http://127.0.0.1:9",), compile_layers=True
    )
    with pytest.raises(UserError, match="in-process engine") as caught:
        open_engine(config)
    assert "drop --compile" in caught.value.fix
