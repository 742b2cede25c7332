"""The declarative serving configuration: the vLLM flags scoring relies on (written once, here),
and the files of the top-level ``server/`` folder: hardware presets (``hardware/<name>.yaml``)
and per-model files (``models/<name>.yaml``), so that ``make serve MODEL=<file name>`` works as
well as ``MODEL=<hub id or folder>``. ``server/README.md`` says which flags matter and why.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from climb_vllm.core.errors import UserError

#: vLLM accepts at most this many ids in ``logprob_token_ids``; the trie strategy asks for at
#: most this many per request.
MAX_LOGPROB_IDS = 128

#: Every server needs these, whatever the hardware: prefix caching (the trie strategy re-reads
#: each diagnosis's prefix), raw log-probs (unprocessed full-vocabulary values, not the sampler's)
#: and at least the number of ``logprob_token_ids`` one scoring request asks for. The one place
#: they are written: ``climb-vllm serve`` adds them and a test checks docker/compose.yaml.
SCORING_FLAGS: tuple[str, ...] = (
    "--enable-prefix-caching",
    "--logprobs-mode",
    "raw_logprobs",
    "--max-logprobs",
    str(MAX_LOGPROB_IDS),
)

#: Environment variable naming the serving configuration folder (default: the checkout's
#: ``server/``).
SERVER_DIR_VARIABLE = "CLIMB_VLLM_SERVER_DIR"


class ModelFile(BaseModel):
    """One model as ``server/models/<name>.yaml`` describes it.

    Attributes:
        model: hub id or local folder.
        revision: hub commit to serve (None: the newest).
        served_name: the name requests use.
        tensor_parallel_size: GPUs per server.
        max_model_len: context length the server allocates for.
        dtype: weight dtype on GPUs (the CPU preset's fp32 wins on CPU).
        chat_template: a Jinja template file, relative to the server folder, for base models
            that ship none (None: the tokenizer's own).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    revision: str | None = None
    served_name: str
    tensor_parallel_size: int = Field(default=1, ge=1)
    max_model_len: int | None = Field(default=None, ge=16)
    dtype: str | None = None
    chat_template: str | None = None


class HardwarePreset(BaseModel):
    """``server/hardware/<name>.yaml``: flags and environment for one kind of machine."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    flags: tuple[str, ...] = ()
    environment: dict[str, str] = {}


def server_dir() -> Path:
    """The serving configuration folder: ``$CLIMB_VLLM_SERVER_DIR``, else the checkout's
    ``server/``, else ``./server``."""
    configured = os.environ.get(SERVER_DIR_VARIABLE)
    if configured:
        return Path(configured)
    checkout = Path(__file__).resolve().parents[1] / "server"
    return checkout if checkout.is_dir() else Path("server")


def _load(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise UserError(f"{path} could not be read ({exc}).", "fix or remove the file.") from exc
    if not isinstance(data, dict):
        raise UserError(f"{path} is not a YAML mapping.", "write 'key: value' lines.")
    return data


def model_file(name: str, folder: Path | None = None) -> ModelFile | None:
    """The model file ``models/<name>.yaml`` of the server folder, or None if there is none.

    Raises:
        UserError: the file exists but is malformed (names the field and the fix).
    """
    path = (folder or server_dir()) / "models" / f"{name}.yaml"
    if "/" in name or not path.is_file():
        return None
    try:
        return ModelFile(**_load(path))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UserError(
            f"{path}: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}.",
            "see server/README.md for the fields of a model file.",
        ) from exc


def hardware_preset(name: str, folder: Path | None = None) -> HardwarePreset:
    """The hardware preset ``hardware/<name>.yaml`` ("gpu" or "cpu").

    Raises:
        UserError: the file is missing or malformed.
    """
    base = folder or server_dir()
    path = base / "hardware" / f"{name}.yaml"
    if not path.is_file():
        raise UserError(
            f"The hardware preset {path} does not exist.",
            f"run from the climb-vllm checkout or set {SERVER_DIR_VARIABLE} to its server/ folder.",
        )
    try:
        return HardwarePreset(**_load(path))
    except ValidationError as exc:
        raise UserError(f"{path} is malformed: {exc.errors()[0]['msg']}.", "fix the file.") from exc


def model_flags(spec: ModelFile, folder: Path | None = None) -> list[str]:
    """The vLLM flags of a model file (beside the model and served name)."""
    flags: list[str] = []
    if spec.revision:
        flags += ["--revision", spec.revision]
    if spec.max_model_len:
        flags += ["--max-model-len", str(spec.max_model_len)]
    if spec.dtype:
        flags += ["--dtype", spec.dtype]
    if spec.chat_template:
        template = (folder or server_dir()) / spec.chat_template
        if not template.is_file():
            raise UserError(
                f"The chat template {template} of {spec.served_name} does not exist.",
                "fix chat_template in its model file (a path relative to the server folder).",
            )
        flags += ["--chat-template", str(template.resolve())]
    return flags
