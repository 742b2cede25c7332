"""Every engine by name, and opening the one a run configuration names. Adding an engine is one
module under ``engines/`` and one entry here."""

from __future__ import annotations

from collections.abc import Callable

from climb_vllm.core.config import EngineConfig
from climb_vllm.core.errors import UserError
from climb_vllm.engines.base import Engine


def _http(config: EngineConfig) -> Engine:
    """The HTTP engine over ``config.endpoints`` (vLLM or any OpenAI-compatible server)."""
    from climb_vllm.engines.http import HttpEngine

    if config.compile_layers:
        raise UserError(
            "--compile applies to the in-process engine; the servers run their own kernels.",
            "drop --compile when evaluating through --endpoint or --engine http.",
        )
    return HttpEngine(
        config.endpoints,
        served_model=config.adapter or config.served_model,
        tokenizer=config.tokenizer,
        strategy=config.strategy,
        concurrency=config.concurrency,
        timeout=config.timeout,
        retries=config.max_retries,
        rate=config.rate,
        prompts_per_request=config.prompts_per_request,
        seeds=config.seeds,
    )


def _local(config: EngineConfig) -> Engine:
    """The in-process transformers engine on ``config.model``."""
    from climb_vllm.engines.local import LocalEngine

    return LocalEngine(
        config.model,
        tokenizer=config.tokenizer,
        revision=config.revision,
        device=config.device or "auto",
        dtype=config.dtype or "auto",
        batch_tokens=config.batch_tokens,
        scorer=config.scorer,
        row_tokens=config.row_tokens,
        adapter=config.adapter,
        compile_layers=config.compile_layers,
    )


#: engine name (``EngineConfig.engine``) -> opener. Heavy imports happen inside each opener.
ENGINES: dict[str, Callable[[EngineConfig], Engine]] = {"local": _local, "http": _http}


def open_engine(config: EngineConfig) -> Engine:
    """The engine ``config.engine`` names, opened on ``config``."""
    if config.engine not in ENGINES:
        raise UserError(
            f"Unknown engine {config.engine!r}.", f"choose one of {', '.join(ENGINES)}."
        )
    return ENGINES[config.engine](config)
