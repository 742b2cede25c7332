"""The one locator of the files packaged under ``climb_vllm/data/`` (each folder there carries
its SOURCE note and licence)."""

from __future__ import annotations

import importlib.resources
from pathlib import Path


def packaged(folder: str, name: str) -> Path:
    """The packaged file ``data/<folder>/<name>``.

    Args:
        folder: the data folder (``icd10cm``, ``names``, ``cases``, ``templates`` ...).
        name: the file's name inside it.
    """
    return Path(str(importlib.resources.files("climb_vllm") / "data" / folder / name))
