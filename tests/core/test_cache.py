"""The shared cache folder follows the environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from climb_vllm.core.cache import cache_root


def test_cache_root_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CLIMB_VLLM_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv("CLIMB_VLLM_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_root() == tmp_path / "climb-vllm"
    assert os.environ["XDG_CACHE_HOME"] == str(tmp_path)
