"""The resume canary: stored pairs scored again must give the stored log-probs, in-process and
on every served endpoint; another model is refused with one message."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from climb_vllm.benchmarks.intrinsic.canary import check_canary
from climb_vllm.benchmarks.intrinsic.config import IntrinsicConfig
from climb_vllm.benchmarks.intrinsic.task import IntrinsicTask, plan_chunk, records_frame
from climb_vllm.core.errors import UserError
from climb_vllm.core.store import RunStore
from climb_vllm.engines.boundary import BoundaryEncoder, PlannedRequest
from climb_vllm.engines.http import HttpEngine
from climb_vllm.models.demo_model import build_demo_model


def _run(model: Path, out: Path) -> RunStore:
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
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return RunStore(out)


def _canary(store: RunStore, engine: Any, dtype: str | None) -> dict[str, Any] | None:
    config = IntrinsicConfig.from_section(store.section("intrinsic"))
    task = IntrinsicTask.from_config(config)
    descriptions = dict(zip(task.ontology.table["code"], task.ontology.table["description"]))
    encoder = BoundaryEncoder(engine.tokenizer)

    def plan(codes: Sequence[str]) -> list[PlannedRequest]:
        return plan_chunk(encoder, codes, descriptions, task.distinct_names, config.template)

    frame: Callable[..., Any] = lambda codes, planned, found: records_frame(  # noqa: E731
        codes, task.distinct_names, planned, found
    )
    return check_canary(store, "intrinsic", engine, plan, frame, dtype)


@pytest.fixture(scope="module")
def runs(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunStore]:
    root = tmp_path_factory.mktemp("canary")
    other = build_demo_model(root / "other-model", seed=2)
    return {"same": _run(tiny_model, root / "same"), "other": _run(other, root / "other")}


def test_the_same_model_passes_in_process(runs: dict[str, RunStore], engine: Any) -> None:
    found = _canary(runs["same"], engine, "float32")
    assert found is not None and found["max_abs_diff"] < 1e-3 and len(found["codes"]) == 2


def test_another_model_in_process_is_refused(runs: dict[str, RunStore], engine: Any) -> None:
    with pytest.raises(UserError, match="mix two models' records") as caught:
        _canary(runs["other"], engine, "float32")
    assert "the in-process model" in caught.value.message


def test_every_endpoint_is_checked_and_another_served_model_is_refused(
    runs: dict[str, RunStore], vllm_server: str, tiny_model: Path
) -> None:
    http = HttpEngine([vllm_server], tokenizer=str(tiny_model))
    found = _canary(runs["same"], http, None)
    # The served model wrote nothing here, yet gives the in-process run's values.
    assert found is not None and found["endpoints"] == 1 and found["max_abs_diff"] < 1e-3
    with pytest.raises(UserError, match=vllm_server):
        _canary(runs["other"], http, None)


def test_a_fresh_run_has_nothing_to_compare(tmp_path: Path, engine: Any) -> None:
    store = RunStore(tmp_path / "empty")
    assert check_canary(store, "intrinsic", engine, lambda c: [], lambda *a: None, None) is None  # type: ignore[arg-type]
