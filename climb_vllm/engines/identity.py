"""What a run's model is, cheaply enough to check on every start, so that a resumed run never
mixes two models' records.

In-process: a folder's weights fingerprint hashes, for every weight file, its size, its first
64 KiB (a safetensors header names every tensor, shape and dtype) and 32 blocks of 64 KiB spread
evenly through it. Retrained or replaced weights change every tensor, so any sampled block
differs; reading 2 MiB per file takes milliseconds, where hashing a 1 GB file whole takes
seconds. Config, tokenizer and chat-template files are hashed whole; other files (notes,
licences) are left out.

Served: what each endpoint's ``/v1/models`` says of the served model (its id, the path or hub id
it was loaded from, its context length).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from climb_vllm.core.errors import UserError

#: Files holding weights (hashed by samples) rather than settings (hashed whole).
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".ckpt")
#: Settings files that shape the model's outputs (config, tokenizer, chat template); other files
#: in a model folder (notes, licences) do not change what the model computes.
SETTINGS_SUFFIXES = (".json", ".model", ".jinja", ".txt")
_BLOCK = 64 * 1024
_SAMPLES = 32


def weights_fingerprint(folder: Path) -> str:
    """SHA-256 over the folder's settings files and samples of its weight files (see the
    module note); the same folder gives the same value, a changed tensor a different one."""
    digest = hashlib.sha256()
    for item in sorted(folder.iterdir()):
        if not item.is_file() or item.suffix not in (*WEIGHT_SUFFIXES, *SETTINGS_SUFFIXES):
            continue
        digest.update(item.name.encode())
        size = item.stat().st_size
        digest.update(str(size).encode())
        if item.suffix in SETTINGS_SUFFIXES:
            digest.update(item.read_bytes())
            continue
        with item.open("rb") as stream:
            digest.update(stream.read(_BLOCK))
            span = max(size - _BLOCK, 0)
            for k in range(_SAMPLES):
                stream.seek(span * k // (_SAMPLES - 1))
                digest.update(stream.read(_BLOCK))
    return digest.hexdigest()


#: Engine facts that identify the model, compared on every resume.
IDENTITY_KEYS = ("weights_fingerprint", "served_models")


def check_same_model(
    previous: dict[str, Any], current: dict[str, Any], run: Path, benchmark: str
) -> None:
    """Refuse to resume when the model behind the engine changed since the run's records began.

    Args:
        previous: the engine facts the run's manifest holds (from its first start).
        current: the engine facts now.
        run: the run directory (named in the message).
        benchmark: the benchmark being resumed.

    Raises:
        UserError: an identity fact differs (names the run's model, what the engine holds now,
            and the fix).
    """
    for key in IDENTITY_KEYS:
        before, now = previous.get(key), current.get(key)
        if before is None or now is None or before == now:
            continue
        model = previous.get("model") or previous.get("served_model") or "its model"
        raise UserError(
            f"{run} holds {benchmark} records of {model} ({key} {_short(before)}), but the "
            f"engine now holds another model ({key} {_short(now)}): resuming would mix two "
            "models' records.",
            "restore the run's model (the same weights, or the same model behind the servers), "
            "or start a new run with another --out / --run-id.",
        )


def _short(value: Any) -> str:
    text = str(value)
    return text[:16] if len(text) == 64 else text[:200]
