"""Run configurations: validated, frozen, hashable; unknown options are errors."""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: CLIMB's intrinsic prompt; the name follows after one space.
DEFAULT_TEMPLATE = "{description} is related to the name:"

#: Fields that change how fast a run goes but not what it computes; excluded from the hash so a
#: resumed run may use another batch size or display.
_NOT_HASHED = frozenset(
    {"batch_tokens", "display", "endpoints", "concurrency", "rate", "prompts_per_request"}
)


class IntrinsicConfig(BaseModel):
    """Everything that determines the records of a CLIMB intrinsic run.

    Attributes:
        model: local model folder or hub id.
        tokenizer: tokenizer folder or id when it differs from the model.
        revision: hub revision of the model.
        engine: which engine scores: "local" (in-process transformers) or "http" (servers).
        device: resolved device ("cpu" or "cuda") of the local engine.
        dtype: resolved weight dtype of the local engine.
        endpoints: server base URLs of the http engine (not hashed: a restarted server may
            move to another port).
        served_model: the model name the servers serve (http engine).
        strategy: http scoring strategy, "auto" or a named one.
        concurrency / rate / prompts_per_request: http client settings (not hashed).
        icd_release: packaged release name or exported table path.
        name_set: packaged name-set key or CSV path.
        top_k: names per (sex, ethnicity) group.
        limit: score a stratified sample of this many codes (None = every code).
        seed: seed of the stratified sample.
        template: the prompt; ``{description}`` is replaced by the code's description.
        chunk_size: codes per stored chunk (the unit of resume).
        batch_tokens: positions per forward pass (not hashed).
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
    icd_release: str = "2021"
    name_set: str = "nyc-2011-2021"
    top_k: int = Field(default=5, ge=1, le=10)
    limit: int | None = Field(default=None, ge=1)
    seed: int = 0
    template: str = DEFAULT_TEMPLATE
    chunk_size: int = Field(default=1024, ge=1)
    batch_tokens: int = Field(default=8192, ge=64)
    display: Literal["rich", "plain", "none"] = "rich"

    @field_validator("template")
    @classmethod
    def _has_slot(cls, value: str) -> str:
        if "{description}" not in value:
            raise ValueError("the template must contain {description}")
        return value

    def hashed_fields(self) -> dict[str, object]:
        """The fields that define the records (all but speed and display settings)."""
        return {k: v for k, v in self.model_dump().items() if k not in _NOT_HASHED}

    def config_hash(self) -> str:
        """SHA-256 of the hashed fields as canonical JSON."""
        blob = json.dumps(self.hashed_fields(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()
