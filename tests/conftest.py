"""Shared fixtures: one tiny random Llama model built offline per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from climb_vllm.demo_model import build_demo_model


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
