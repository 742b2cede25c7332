"""The engine part of every run configuration: validated, frozen, hashable; unknown options are
errors. Each benchmark's configuration (in its folder) extends :class:`EngineConfig`."""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: Fields that change how fast a run goes but not what it computes; excluded from the hash so a
#: resumed run may use another batch size or display.
_NOT_HASHED = frozenset(
    {"batch_tokens", "display", "endpoints", "concurrency", "rate", "prompts_per_request"}
)


class EngineConfig(BaseModel):
    """How a run reaches its model: the fields every benchmark's configuration shares.

    Attributes:
        model: local model folder or hub id.
        tokenizer: tokenizer folder or id when it differs from the model.
        revision: hub revision of the model.
        engine: "local" (in-process transformers) or "http" (servers).
        device: resolved device ("cpu" or "cuda") of the local engine.
        dtype: resolved weight dtype of the local engine.
        endpoints: server base URLs of the http engine (not hashed: a restarted server may
            move to another port).
        served_model: the model name the servers serve (http engine).
        strategy: http scoring strategy, "auto" or a named one.
        concurrency / rate / prompts_per_request: http client settings (not hashed).
        batch_tokens: positions per forward pass of the local engine (not hashed).
        display: progress display (not hashed).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    tokenizer: str | None = None
    revision: str | None = None
    engine: Literal["local", "http"] = "local"
    device: Literal["cpu", "cuda"] | None = "cpu"
    dtype: Literal["float32", "bfloat16", "float16"] | None = "float32"
    endpoints: tuple[str, ...] = ()
    served_model: str | None = None
    strategy: Literal["auto", "trie", "prompt_logprobs", "echo"] = "auto"
    concurrency: int = Field(default=64, ge=1)
    rate: int | None = Field(default=None, ge=1)
    prompts_per_request: int = Field(default=256, ge=1, le=1024)
    batch_tokens: int = Field(default=8192, ge=64)
    display: Literal["rich", "plain", "none"] = "rich"

    def hashed_fields(self) -> dict[str, object]:
        """The fields that define the records (all but speed and display settings)."""
        return {k: v for k, v in self.model_dump().items() if k not in _NOT_HASHED}

    def config_hash(self) -> str:
        """SHA-256 of the hashed fields as canonical JSON."""
        blob = json.dumps(self.hashed_fields(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()
