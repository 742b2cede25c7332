"""The engine interface: two primitives, ``score`` and ``generate``, over token ids and chats.

Benchmarks talk only to this interface, so the same benchmark code runs on the in-process
transformers engine or on a serving endpoint.

Token-boundary contract (every engine and every caller keeps it):
    For a prompt text T and a continuation text C (a name), the prefix ids are
    ``tok(T)`` with special tokens exactly as the tokenizer adds them (BOS for Llama-style
    tokenizers), and the continuation ids are ``tok(T + " " + C)[len(tok(T)):]``. The caller
    checks that ``tok(T)`` is a prefix of ``tok(T + " " + C)``; where it is not, the pair is
    scored as a full sequence from the longest common prefix (see
    :mod:`climb_vllm.engines.boundary`).
    ``score`` then returns ``sum_k log p(c_k | prefix, c_<k)`` for each continuation, computed
    from an fp32 log-softmax over the full vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class ScoreRequest:
    """A prefix and the continuations to score after it.

    Attributes:
        prefix: token ids of the prompt, special tokens included as the tokenizer adds them;
            never empty (the first continuation token is read from its last position).
        continuations: token-id tuples, each non-empty; the same prefix is computed once for all.
    """

    prefix: tuple[int, ...]
    continuations: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class ScoreResult:
    """Log-probabilities of each continuation of one :class:`ScoreRequest`, in its order.

    Attributes:
        logprobs: the sum of next-token log-probs over each continuation's tokens (nats).
        token_logprobs: the per-token values that make up each sum.
    """

    logprobs: tuple[float, ...]
    token_logprobs: tuple[tuple[float, ...], ...]


@dataclass(frozen=True)
class GenerateRequest:
    """One prompt to sample from.

    Attributes:
        messages: chat turns (``{"role": ..., "content": ...}``) rendered with the model's chat
            template; used when given.
        prompt: a raw text prompt, used when ``messages`` is empty.
        n: number of samples.
        seed: sampling seed; the same seed gives the same samples on the same engine.
        temperature: 0 means greedy decoding; None uses the model's own generation settings
            (its generation_config; servers apply theirs).
        top_p: nucleus mass; None as for temperature.
        max_tokens: the most new tokens per sample.
    """

    messages: tuple[dict[str, str], ...] = ()
    prompt: str = ""
    n: int = 1
    seed: int = 0
    temperature: float | None = 1.0
    top_p: float | None = 1.0
    max_tokens: int = 256


@dataclass(frozen=True)
class Generation:
    """The samples for one :class:`GenerateRequest`.

    Attributes:
        texts: one decoded completion per sample.
        finish_reasons: "stop" (end of sequence) or "length" (hit max_tokens), per sample.
        completion_tokens: new tokens per sample.
        prompt_tokens: tokens of the rendered prompt.
        seeded: whether the request's seed was used (False: the engine sampled unseeded because
            its server cannot take per-request seeds).
    """

    texts: tuple[str, ...]
    finish_reasons: tuple[str, ...]
    completion_tokens: tuple[int, ...]
    prompt_tokens: int
    seeded: bool = True


@dataclass
class EngineStats:
    """Work counters an engine keeps, read by the benchmark command.

    Attributes:
        forward_tokens: tokens fed through the model (padding excluded).
        padded_tokens: positions computed including padding.
        head_rows: positions at which the output head (lm_head) was evaluated.
        batches: forward passes.
    """

    forward_tokens: int = 0
    padded_tokens: int = 0
    head_rows: int = 0
    batches: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Engine(Protocol):
    """What every engine provides. See the module docstring for the token-boundary contract."""

    name: str
    stats: EngineStats
    #: the Hugging Face tokenizer that defines token ids for this engine's model
    tokenizer: Any

    def score(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        """Score every continuation of every request; results are in request order."""
        ...

    def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        """Sample completions for every request; results are in request order."""
        ...

    def describe(self) -> dict[str, Any]:
        """Facts for the run manifest: engine, model, revision, device, dtype, versions."""
        ...

    def close(self) -> None:
        """Release the model or connections."""
        ...
