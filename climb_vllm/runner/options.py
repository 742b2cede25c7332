"""The engine options every ``eval`` verb takes, each declared once (:data:`ENGINE_FLAGS`): its
flags, what it means and where its default comes from. The command line is built from these
declarations and reads its values back by them into one typed record, :class:`EngineOptions`;
:func:`climb_vllm.runner.run.resolve_engine` resolves that record into the engine configuration."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

from climb_vllm.core.config import EngineConfig


@dataclass(frozen=True)
class EngineOptions:
    """What the user asked of the engine, before it is resolved into :class:`EngineConfig`
    fields: one attribute per declaration of :data:`ENGINE_FLAGS` (see its help). A value left
    None takes :class:`EngineConfig`'s default (declared there once); ``engine`` None means http
    when endpoints are given, else local; ``endpoints`` empty with the http engine means the
    endpoints that ``climb-vllm serve`` recorded."""

    model: str | None = None
    tokenizer: str | None = None
    revision: str | None = None
    engine: Literal["local", "http"] | None = None
    endpoints: tuple[str, ...] = ()
    served_model: str | None = None
    adapter: str | None = None
    concurrency: int | None = None
    timeout: float | None = None
    max_retries: int | None = None
    rate: int | None = None
    device: str = "auto"
    dtype: str = "auto"
    display: str | None = None
    seeds: str | None = None


@dataclass(frozen=True)
class EngineFlag:
    """One engine option of every ``eval`` verb.

    Attributes:
        flags: its spellings, the first the main one (others: lm-evaluation-harness's and
            Inspect's words for the same thing).
        field: the :class:`EngineOptions` attribute it fills.
        help: what it means.
        value: how its value is read: ``text``, ``int``, ``float``, one of ``choices``, or
            ``repeat`` (one text per use; ``--adapter`` keeps them all for ``eval all``).
        choices: the allowed values of ``value="choice"``.
        default_of: the :class:`EngineConfig` field whose default ``--help`` shows (None: the
            :class:`EngineOptions` default, where it has one).
        metavar: the value's name in ``--help`` (None: the field's name).
    """

    flags: tuple[str, ...]
    field: str
    help: str
    value: Literal["text", "int", "float", "choice", "repeat"] = "text"
    choices: tuple[str, ...] = ()
    default_of: str | None = None
    metavar: str | None = None

    @property
    def default(self) -> Any:
        """The value argparse keeps when the option is not given."""
        if self.value == "repeat":
            return []
        own = {f.name: f.default for f in fields(EngineOptions)}[self.field]
        return None if self.default_of else own

    def help_text(self) -> str:
        """Its help with the default it takes."""
        if self.default_of:
            default = EngineConfig.model_fields[self.default_of].default
            return f"{self.help} (default: {default})"
        return f"{self.help} (default: {self.default})" if self.default else self.help


#: Every engine option, in ``--help`` order.
ENGINE_FLAGS: tuple[EngineFlag, ...] = (
    EngineFlag(
        ("--model",),
        "model",
        "local model folder, hub id or model source (converted once, see 'climb-vllm model "
        "get'); with --endpoint, a label",
    ),
    EngineFlag(("--tokenizer",), "tokenizer", "tokenizer folder or id, if not the model's"),
    EngineFlag(("--revision",), "revision", "hub revision of the model"),
    EngineFlag(
        ("--engine",),
        "engine",
        "local (in-process, the default without --endpoint) or http (servers)",
        value="choice",
        choices=("local", "http"),
    ),
    EngineFlag(
        ("--endpoint",),
        "endpoints",
        "OpenAI-compatible server URL, repeatable; default: the endpoints 'make serve' wrote to "
        "outputs/serve/endpoints.json when --engine http",
        value="repeat",
        metavar="URL",
    ),
    EngineFlag(("--served-model",), "served_model", "model name served at the endpoints"),
    EngineFlag(
        ("--adapter",),
        "adapter",
        "evaluate this LoRA adapter of the model: its folder (in-process engine, needs peft) or "
        "the name the servers serve it under ('serve --adapters NAME=PATH'); eval all: "
        "repeatable, runs the base model and then each adapter, each into its own run "
        "directory, and the report compares each adapter with the base",
        value="repeat",
    ),
    EngineFlag(
        ("--concurrency", "--max-connections"),
        "concurrency",
        "http requests in flight",
        value="int",
        default_of="concurrency",
    ),
    EngineFlag(("--rate",), "rate", "the most http requests per second", value="int"),
    EngineFlag(
        ("--timeout",),
        "timeout",
        "seconds one http request may take (default: sized from the request, 120 s plus a "
        "second per 20 prompt or answer tokens)",
        value="float",
    ),
    EngineFlag(
        ("--max-retries",),
        "max_retries",
        "attempts after the first for a failed http request",
        value="int",
        default_of="max_retries",
    ),
    EngineFlag(("--device",), "device", "auto, cpu or cuda"),
    EngineFlag(("--dtype",), "dtype", "auto, float32, bfloat16, float16 or float64"),
    EngineFlag(
        ("--display",),
        "display",
        "progress display",
        value="choice",
        choices=("rich", "plain", "none"),
        default_of="display",
    ),
    EngineFlag(
        ("--seeds",),
        "seeds",
        "per-request sampling seeds (http engine): auto sends them except to CPU servers that "
        "'make serve' started (vLLM's CPU build crashes on them); off samples unseeded, which "
        "each record notes with a null seed",
        value="choice",
        choices=("auto", "on", "off"),
        default_of="seeds",
    ),
)


def engine_options(values: dict[str, Any], adapter: str | None) -> EngineOptions:
    """The typed record of the engine options' parsed values.

    Args:
        values: each declaration's value by its field (as the command line parsed it).
        adapter: the adapter of this run ("" for the base model of ``eval all``).
    """
    found = {flag.field: values.get(flag.field, flag.default) for flag in ENGINE_FLAGS}
    found["endpoints"] = tuple(found["endpoints"])
    found["adapter"] = adapter or None
    return EngineOptions(**found)
