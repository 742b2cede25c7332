"""What an OpenAI-compatible endpoint can do, as the HTTP engine's probe finds it: the
:class:`Capability` record (written to the manifest, named in the report) and the probes that
need no scoring (text and token-id prompts, batches, chat, ``n``, seeds, the tokenize route).
The scoring strategy is probed by the engine itself (:mod:`climb_vllm.engines.http`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from climb_vllm.engines.transport import Transport


@dataclass(frozen=True)
class Capability:
    """What the probe found at one endpoint.

    Attributes:
        url: the endpoint.
        server: "vllm", "llama.cpp" (llama-cpp-python's server) or "openai-compatible".
        version: the server's version where it says (vLLM's ``/version``; for a server that
            ``make serve`` started, the installed package's), else None.
        strategy: how it returns prompt log-probs (:data:`STRATEGIES`), None: it does not.
        completions: ``/v1/completions`` answers a text prompt.
        chat: ``/v1/chat/completions`` answers.
        token_ids: completions take token-id prompts.
        batch: completions take several prompts in one request.
        samples_n: ``n`` > 1 returns that many samples (else each sample is its own request).
        seeds: a repeated seed gives the same sample (None: not probed, as on vLLM's CPU
            build, which crashes on seeds).
        tokenize: the tokenize endpoint's path, if any.
        decided_by: for each capability above, the server's answer it was decided on
            (``HTTP 200, 1 choice``; ``HTTP 404: ...``; the error of a strategy's probe). Only
            a definite answer decides: a reset, a timeout or a 5xx is retried first, and one
            that persists stops the run instead (:meth:`Transport.ask`).
    """

    url: str
    server: str
    version: str | None
    strategy: str | None
    completions: bool = True
    chat: bool = True
    token_ids: bool = True
    batch: bool = True
    samples_n: bool = True
    seeds: bool | None = None
    tokenize: str | None = None
    decided_by: dict[str, str] = field(default_factory=dict)


def tokenize_path(transport: Transport, model: str) -> str | None:
    """The first endpoint's tokenize route: vLLM's ``/tokenize``, llama-cpp-python's
    ``/extras/tokenize``, or None."""
    for path, body in (
        ("/tokenize", {"model": model, "prompt": "x"}),
        ("/extras/tokenize", {"model": model, "input": "x"}),
    ):
        status, answer = transport.post(0, path, body)
        if status == 200 and isinstance(answer, dict) and "tokens" in answer:
            return path
    return None


def answers(
    transport: Transport, endpoint: int, model: str, path: str, body: dict[str, Any]
) -> tuple[Any, str]:
    """Whether a one-token request succeeds (for ``n``: how many choices came back), and the
    answer that decided it, in words.

    Args:
        transport: the engine's transport (it retries passing failures, so what comes back is
            the server's definite answer).
        endpoint: index of the endpoint.
        model: the served model name.
        path: ``/v1/completions`` or ``/v1/chat/completions``.
        body: the request's own fields.
    """
    payload = {"model": model, "max_tokens": 1, "temperature": 0.0, **body}
    status, answer = transport.post(endpoint, path, payload)
    if status != 200:
        return False, f"HTTP {status}: {_said(answer)}"
    if not isinstance(answer, dict) or not answer.get("choices"):
        return False, "HTTP 200 without choices"
    count = len(answer["choices"])
    return (count if body.get("n", 1) > 1 else True), f"HTTP 200, {count} choice(s)"


def _said(answer: Any) -> str:
    """The start of an error body: what the server said of the request."""
    if isinstance(answer, dict):
        error = answer.get("error", answer)
        message = error.get("message", error) if isinstance(error, dict) else error
        return str(message)[:160]
    return "no JSON body"


def seeds_repeat(transport: Transport, endpoint: int, model: str) -> bool:
    """Whether two samples with one seed (temperature 1) are the same text."""
    texts = []
    for _ in range(2):
        status, answer = transport.post(
            endpoint,
            "/v1/completions",
            {
                "model": model,
                "prompt": "The patient",
                "max_tokens": 8,
                "temperature": 1.0,
                "seed": 20211,
                "n": 1,
            },
        )
        if status != 200 or not isinstance(answer, dict) or not answer.get("choices"):
            return False
        texts.append(answer["choices"][0].get("text"))
    return bool(texts[0] == texts[1])
