"""The cache folder shared by everything this package computes once and keeps (embedding
indexes, converted model folders): ``$CLIMB_VLLM_CACHE``, else ``$XDG_CACHE_HOME/climb-vllm``,
else ``~/.cache/climb-vllm``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """The cache folder (it may not exist yet)."""
    if os.environ.get("CLIMB_VLLM_CACHE"):
        return Path(os.environ["CLIMB_VLLM_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "climb-vllm"
