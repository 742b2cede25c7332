"""The engine part of every run configuration: validated, frozen, hashable; unknown options are
errors. Each benchmark's configuration (in its folder) extends :class:`EngineConfig`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from climb_vllm.core.flags import Flag
from climb_vllm.core.manifest import Section

Config = TypeVar("Config", bound="EngineConfig")

#: Fields that change how fast a run goes but not what it computes; excluded from the hash so a
#: resumed run may use another batch size or display.
_NOT_HASHED = frozenset(
    {
        "batch_tokens",
        "scorer",
        "row_tokens",
        "compile_layers",
        "display",
        "endpoints",
        "concurrency",
        "rate",
        "timeout",
        "max_retries",
        "prompts_per_request",
        "seeds",
    }
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
        adapter: a LoRA adapter: its folder (local engine, merged in with peft) or the name the
            servers serve it under (http engine; requests name it instead of the base).
        concurrency / rate: http client settings (not hashed).
        timeout: seconds one http request may take (None: sized from the request: 120 s plus
            a second per 20 prompt or answer tokens); not hashed.
        max_retries: attempts after the first for a failed http request (not hashed).
        strategy, prompts_per_request, batch_tokens, scorer, row_tokens, compile_layers: the
            scoring options (see each field's description); all but ``strategy`` not hashed:
            they change how fast log-probs come, not what they are (within float rounding).
        display: progress display (not hashed).
        seeds: per-request sampling seeds of the http engine: "auto" (on, except for CPU
            servers that ``serve`` started), "on" or "off". Not hashed: every record stores the
            seed it was sampled with, or null when it was sampled unseeded.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    tokenizer: str | None = None
    revision: str | None = None
    engine: Literal["local", "http"] = "local"
    device: Literal["cpu", "cuda"] | None = "cpu"
    dtype: Literal["float32", "bfloat16", "float16", "float64"] | None = "float32"
    endpoints: tuple[str, ...] = ()
    served_model: str | None = None
    adapter: str | None = None
    # The scoring options below are offered by the benchmarks that score (their flags).
    strategy: Annotated[
        Literal["auto", "trie", "prompt_logprobs", "echo", "echo_text"], Flag("--strategy")
    ] = Field(default="auto", description="http scoring strategy (auto: probe each endpoint)")
    concurrency: int = Field(default=64, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    max_retries: int = Field(default=6, ge=0)
    rate: int | None = Field(default=None, ge=1)
    prompts_per_request: Annotated[int, Flag("--prompts-per-request")] = Field(
        default=256, ge=1, le=1024, description="prompts per completions request"
    )
    batch_tokens: Annotated[int | None, Flag("--batch-tokens")] = Field(
        default=None,
        ge=64,
        description="positions per forward pass (default: sized from the free memory)",
    )
    scorer: Annotated[Literal["tree", "prefix", "naive"], Flag("--scorer")] = Field(
        default="tree",
        description="local engine's layout: tree (shared description heads), prefix (each "
        "prompt once) or naive (every pair alone); same log-probs within float rounding",
    )
    row_tokens: Annotated[int, Flag("--row-tokens")] = Field(
        default=256, ge=16, description="nodes per token-tree row of the tree scorer"
    )
    compile_layers: Annotated[bool, Flag("--compile")] = Field(
        default=False,
        description="local engine: run the scoring passes through decoder layers compiled with "
        "torch.compile (fuses the elementwise work around the matrix products; the first pass "
        "pays the compile; same log-probs within float rounding)",
    )
    display: Literal["rich", "plain", "none"] = "rich"
    seeds: Literal["auto", "on", "off"] = "auto"

    #: Fields that change only how the stored records are summarised, not the records: they are
    #: not hashed (a finished run may be tabulated again with another value) and are recorded
    #: in the manifest section's ``analysis`` by every run. Subclasses name theirs.
    ANALYSIS: ClassVar[frozenset[str]] = frozenset()

    def hashed_fields(self) -> dict[str, object]:
        """The fields that define the records (all but speed, display and analysis settings)."""
        skip = _NOT_HASHED | self.ANALYSIS
        return {k: v for k, v in self.model_dump().items() if k not in skip}

    def analysis_fields(self) -> dict[str, object]:
        """The analysis settings (see :data:`ANALYSIS`) as stored in the manifest."""
        return {k: v for k, v in self.model_dump().items() if k in self.ANALYSIS}

    def extend(self, config_type: type[Config], values: Mapping[str, Any]) -> Config:
        """A benchmark's configuration: ``config_type`` with the fields set here and
        ``values``, the benchmark's options (they win over an engine field of the same name,
        such as ``--strategy``). A field set in neither keeps ``config_type``'s default.

        Raises:
            pydantic.ValidationError: a value outside its field's type or bounds.
        """
        return config_type(**(self.model_dump(exclude_unset=True) | dict(values)))

    @classmethod
    def from_section(cls: type[Config], section: Section) -> Config:
        """The configuration a manifest section records: its hashed fields and its latest
        analysis settings (defaults for a run made before a setting existed)."""
        return cls(**section.config, **section.analysis)

    def config_hash(self) -> str:
        """SHA-256 of the hashed fields as canonical JSON."""
        blob = json.dumps(self.hashed_fields(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()
