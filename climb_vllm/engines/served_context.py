"""The context length a server allocates for its model, asked of the server itself.

A run that cuts notes to fit the model's context must use the context the server was started
with, not the one the model's config allows: Gemma 3 allows 32,768 tokens, and ``serve`` starts
it with 4,096 (its model file). vLLM says so in ``/v1/models`` (``max_model_len``); llama-cpp-
python's server does not, so ``serve`` records the context it started each server with in the
endpoints file, and that record is read for a server ``serve`` started.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

#: Seconds the one ``/v1/models`` request may take: the engine's own checks come later and
#: report an unreachable server with their fix.
TIMEOUT = 10.0


def _listed(url: str, served_model: str | None) -> int | None:
    """``max_model_len`` of the served model in ``url``'s ``/v1/models`` (None when absent,
    when the server does not answer, or when several models are served and none is named)."""
    import httpx

    from climb_vllm.engines.transport import api_key

    key = api_key()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        answer = httpx.get(url.rstrip("/") + "/v1/models", headers=headers, timeout=TIMEOUT)
        entries = json.loads(answer.text).get("data", []) if answer.status_code == 200 else []
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    if served_model is None:
        bases = [e for e in entries if not e.get("parent")]
        entries = bases if len(bases) == 1 else []
    found = [e.get("max_model_len") for e in entries if served_model in (None, e.get("id"))]
    value = found[0] if found else None
    return int(value) if isinstance(value, int) and value > 0 else None


def served_context(
    endpoints: Sequence[str], served_model: str | None = None, state: Path | None = None
) -> int | None:
    """The context length (tokens) every endpoint serves ``served_model`` with: the smallest
    over the endpoints, so that a prompt fitted to it fits each; None when an endpoint does
    not say (the caller then falls back on the model's own configuration).

    Args:
        endpoints: server base URLs.
        served_model: the model name the servers serve (None: the only one each serves).
        state: the endpoints file of ``serve`` (None: the default one).
    """
    from climb_vllm.serving.state import own_server

    contexts = []
    for url in endpoints:
        context = _listed(url, served_model)
        if context is None:
            recorded = (own_server(url, state) or {}).get("context")
            context = int(str(recorded)) if recorded else None
        if context is None:
            return None
        contexts.append(context)
    return min(contexts) if contexts else None
