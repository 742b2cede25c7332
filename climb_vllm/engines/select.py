"""Opening the engine a run configuration names."""

from __future__ import annotations

from climb_vllm.config import EngineConfig
from climb_vllm.engines.base import Engine


def open_engine(config: EngineConfig) -> Engine:
    """The in-process engine, or the HTTP engine over ``config.endpoints``."""
    if config.engine == "http":
        from climb_vllm.engines.http import HttpEngine

        return HttpEngine(
            config.endpoints,
            served_model=config.served_model,
            tokenizer=config.tokenizer,
            strategy=config.strategy,
            concurrency=config.concurrency,
            rate=config.rate,
            prompts_per_request=config.prompts_per_request,
        )
    from climb_vllm.engines.local import LocalEngine

    return LocalEngine(
        config.model,
        tokenizer=config.tokenizer,
        revision=config.revision,
        device=config.device or "auto",
        dtype=config.dtype or "auto",
        batch_tokens=config.batch_tokens,
    )
