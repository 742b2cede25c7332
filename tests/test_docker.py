"""The Compose file's structure (no Docker engine needed), and its vLLM flags against vLLM."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from climb_vllm.serving.config import SCORING_FLAGS, hardware_preset
from tests.helpers import vllm_python

COMPOSE = Path(__file__).parents[1] / "docker" / "compose.yaml"


def _compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return data


def _contains(flags: list[str], block: tuple[str, ...]) -> bool:
    """Whether ``block`` occurs in ``flags`` as consecutive items."""
    return any(tuple(flags[i : i + len(block)]) == block for i in range(len(flags)))


def test_contains_needs_the_values_beside_their_flags() -> None:
    assert _contains(["--a", "1", "--b"], ("--a", "1"))
    assert not _contains(["--a", "--b", "1"], ("--a", "1"))


def _servers(compose: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in compose["services"].items() if k.startswith("vllm-")}


def test_one_vllm_service_per_gpu_with_health_checks() -> None:
    servers = _servers(_compose())
    assert len(servers) >= 2
    gpus = []
    for service in servers.values():
        assert service["image"].startswith("vllm/vllm-openai")
        devices = service["deploy"]["resources"]["reservations"]["devices"]
        assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]
        gpus += devices[0]["device_ids"]
        assert "/health" in " ".join(service["healthcheck"]["test"])
        assert any("huggingface" in v for v in service["volumes"])
        flags = [str(a) for a in service["command"]]
        assert "--served-model-name" in flags
        # The scoring flags as written once in the code, and the GPU preset of server/.
        for required in (SCORING_FLAGS, hardware_preset("gpu").flags):
            assert _contains(flags, required), required
    assert sorted(gpus) == [str(i) for i in range(len(gpus))]  # each GPU once


def test_evaluator_waits_for_every_server_and_uses_each() -> None:
    compose = _compose()
    servers = _servers(compose)
    evaluator = compose["services"]["evaluator"]
    assert set(evaluator["depends_on"]) == set(servers)
    assert all(d["condition"] == "service_healthy" for d in evaluator["depends_on"].values())
    command = evaluator["command"]
    endpoints = [command[i + 1] for i, a in enumerate(command) if a == "--endpoint"]
    assert endpoints == [f"http://{name}:8000" for name in servers]
    served = {s["command"][s["command"].index("--served-model-name") + 1] for s in servers.values()}
    assert served == {command[command.index("--served-model") + 1]}
    assert (COMPOSE.parent / evaluator["build"]["dockerfile"].split("/")[-1]).exists()


def test_compose_flags_exist_in_vllms_own_cli() -> None:
    flags = {a for s in _servers(_compose()).values() for a in s["command"] if a.startswith("--")}
    shown = subprocess.run(
        [vllm_python(), "-m", "vllm.entrypoints.openai.api_server", "--help=all"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert shown.returncode == 0, shown.stderr[-1000:]
    missing = [f for f in flags if f not in shown.stdout]
    assert not missing


def test_the_evaluator_runs_the_suite_on_a_pinned_tested_vllm() -> None:
    compose = _compose()
    command = compose["services"]["evaluator"]["command"]
    assert command[:2] == ["eval", "all"]
    shown = subprocess.run(
        [vllm_python(), "-c", "import vllm; print(vllm.__version__)"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert shown.returncode == 0, shown.stderr[-1000:]
    tested = shown.stdout.strip().split("+")[0]
    images = {s["image"] for s in _servers(compose).values()}
    assert images == {f"vllm/vllm-openai:v{tested}"}
    dockerfile = (COMPOSE.parent / "Dockerfile").read_text()
    assert f"ARG BASE=vllm/vllm-openai:v{tested}" in dockerfile
