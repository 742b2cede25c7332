"""Opening a run: the engine options every benchmark shares, the claim on the run directory, and
the engines that the benchmarks of one suite share.

Nothing here knows a benchmark by name: a benchmark builds its configuration (an
:class:`~climb_vllm.core.config.EngineConfig` subclass) and calls :func:`open_run`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from climb_vllm.core.config import EngineConfig
from climb_vllm.core.errors import NotApplicable, UserError
from climb_vllm.runner.options import EngineOptions

if TYPE_CHECKING:
    from pydantic import ValidationError

    from climb_vllm.core.store import RunStore
    from climb_vllm.engines.base import Engine

Config = TypeVar("Config", bound=EngineConfig)


def resolve_engine(options: EngineOptions) -> EngineConfig:
    """The engine configuration of ``options``: the one step from what the user asked to what
    the engine opens on. It picks the engine, reads the endpoints that ``serve`` recorded,
    resolves a model source to its folder and the device and dtype; options left unset keep
    :class:`EngineConfig`'s defaults (and stay unset, so a benchmark's configuration built from
    it applies its own).

    The model's name is decided here and nowhere else: the local engine's folder; for servers,
    ``--model`` (a label), else ``--served-model``, else "" until the servers are probed and
    name it (:func:`probe_served_model`).

    Raises:
        UserError: the local engine without a model, or an unusable device / dtype.
    """
    from climb_vllm.serving.state import read_endpoints

    engine_name = options.engine or ("http" if options.endpoints else "local")
    endpoints = options.endpoints or (read_endpoints() if engine_name == "http" else ())
    device: str | None = None
    dtype: str | None = None
    model = options.model or options.served_model or ""
    if engine_name == "local":
        if not options.model:
            raise UserError("No model given.", "pass --model PATH_OR_ID, or --endpoint URL.")
        from climb_vllm.models.loading import resolve_device
        from climb_vllm.models.sources import resolve

        device, dtype = resolve_device(options.device, options.dtype)
        model = resolve(options.model)  # a model source's name -> its converted folder
    settings: dict[str, Any] = {
        "model": model,
        "tokenizer": options.tokenizer,
        "revision": options.revision,
        "engine": engine_name,
        "device": device,
        "dtype": dtype,
        "endpoints": endpoints,
        "served_model": options.served_model,
        "adapter": options.adapter,
        "rate": options.rate,
    }
    for name in ("concurrency", "display", "seeds", "timeout", "max_retries"):
        value = getattr(options, name)
        if value is not None:
            settings[name] = value
    return EngineConfig(**settings)


def invalid_option(
    exc: ValidationError, benchmark: str, config_type: type[EngineConfig] = EngineConfig
) -> UserError:
    """The user-facing error for a pydantic validation error of a run configuration: the
    option as the user typed it (the field's :class:`~climb_vllm.core.flags.Flag`: the field
    ``name_set`` is ``--names``), its value, the bound it broke and a value that works.

    Args:
        exc: the validation error.
        benchmark: the benchmark's registry name.
        config_type: the configuration class whose fields declare the flags.
    """
    from climb_vllm.core.flags import flag_of

    first = exc.errors()[0]
    field = str(first["loc"][0]) if first["loc"] else ""
    flag = flag_of(config_type, field)
    given = first.get("input")
    bounds = first.get("ctx") or {}
    message = str(first["msg"])
    message = message[0].lower() + message[1:] if message else message
    if "ge" in bounds or "gt" in bounds:
        fix = f"use {flag} {bounds.get('ge', bounds.get('gt'))} or more"
    elif "le" in bounds or "lt" in bounds:
        fix = f"use {flag} {bounds.get('le', bounds.get('lt'))} or less"
    else:
        fix = "use an allowed value"
    return UserError(
        f"{flag} {given}: {message} ({benchmark}).",
        f"{fix} (see 'climb-vllm eval {benchmark} --help').",
    )


@dataclass
class EngineCache:
    """Engines opened by earlier benchmarks of one suite, keyed by their engine configuration, so
    that the model is loaded (or the servers probed) once for the whole suite.

    Attributes:
        engines: engine key -> (engine, the configuration fields it filled in).
    """

    engines: dict[str, tuple[Engine, dict[str, Any]]] = field(default_factory=dict)

    @staticmethod
    def key(config: EngineConfig) -> str:
        """The engine fields of a configuration as canonical JSON (the display excluded)."""
        fields = {
            k: v
            for k, v in config.model_dump().items()
            if k in EngineConfig.model_fields and k != "display"
        }
        return json.dumps(fields, sort_keys=True, default=str)


@dataclass(frozen=True)
class RunContext:
    """Where a benchmark writes and what it shares with the rest of a suite.

    Attributes:
        out: the run directory (None: ``outputs/runs/<model>/<run_id>``).
        run_id: the run's name under ``outputs/runs/<model>/``.
        quiet: keep the finished benchmark's tables off the terminal (a suite: they go to the
            report).
        engines: the suite's shared engines (None: a single benchmark opens its own).
    """

    out: Path | None = None
    run_id: str = "main"
    quiet: bool = False
    engines: EngineCache | None = None


def probe_served_model(config: Config) -> tuple[Engine | None, Config]:
    """Open the http engine early so that its probe can name the served model.

    Returns the engine (None for the local engine, opened later) and the configuration with
    ``served_model`` (and the model label) filled in.
    """
    from climb_vllm.engines.registry import open_engine

    if config.engine != "http":
        return None, config
    engine = open_engine(config)
    if config.served_model is None:
        facts = engine.describe()
        served = facts["served_model"]
        # A served adapter's runs are labelled by its base, so the report pairs them.
        base = (facts.get("adapter") or {}).get("base")
        config = config.model_copy(
            update={"served_model": served, "model": config.model or base or served}
        )
    return engine, config


def _existing_ancestor(path: Path) -> Path:
    """The nearest of ``path`` and its parents that exists now."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(path.anchor or ".")


def _remove_empty(path: Path, keep: Path) -> None:
    """Remove ``path`` and its parents below ``keep`` while they are empty."""
    for folder in (path, *path.parents):
        if folder == keep or keep not in folder.parents:
            return
        try:
            folder.rmdir()
        except OSError:  # not empty (or not ours to remove): stop here
            return


def _identity_facts(engine: Engine) -> dict[str, Any]:
    """The engine's facts for the manifest, with the canary, how far it moves by itself (its
    spread over a repeat and another batch composition) and the resume tolerance that follows;
    endpoints that disagree are refused here."""
    from climb_vllm.engines.identity import (
        canary,
        canary_spread,
        check_replicas_agree,
        tolerance,
    )

    facts = engine.describe()
    values = canary(engine)
    spread = canary_spread(engine, values) if values is not None else None
    facts |= {"canary": values, "canary_spread": spread}
    facts["canary_tolerance"] = tolerance(facts.get("dtype"), spread)
    check_replicas_agree(facts)
    return facts


def _shared_engine(config: Config, context: RunContext, key: Any) -> tuple[Engine | None, Config]:
    """The suite's engine under ``key`` (:meth:`EngineCache.key` of ``config``) with the served
    model it found, when one is open; else the served model probed
    (:func:`probe_served_model`; None for the engine)."""
    shared = context.engines
    if shared is not None and key in shared.engines:
        engine, update = shared.engines[key]
        return engine, config.model_copy(update=update)
    return probe_served_model(config)


def _folder_label(config: EngineConfig) -> str:
    """The model's name in the default run folder: an adapter's runs live beside its base's,
    ``outputs/runs/<model>+<adapter>/<run-id>``."""
    label = config.model
    if config.adapter:
        label += "+" + (Path(config.adapter).name or config.adapter)
    return label


def _refuse_unscorable(engine: Engine, benchmark: str) -> None:
    """NotApplicable when ``engine`` cannot return log-probs of given continuations."""
    reason = getattr(engine, "cannot_score", lambda: None)()
    if reason is not None:
        raise NotApplicable(
            f"{benchmark} needs prompt log-probs, which {reason}.",
            "serve the model with vLLM (make serve MODEL=...) or llama.cpp's server "
            "(make serve MODEL=... SERVER=llamacpp), or run it in process (--engine local).",
        )


def open_run(
    config: Config, context: RunContext, benchmark: str, *, scores: bool = False, **facts: Any
) -> tuple[RunStore, Engine, Config]:
    """Claim the run directory for ``benchmark`` and open the engine.

    Refuses a directory whose earlier run of ``benchmark`` had another configuration, records
    the engine and ``facts`` in the manifest, and says when it resumes.

    Args:
        config: the benchmark's configuration.
        context: the run folder and the suite's shared engines.
        benchmark: the benchmark's registry name (its manifest section).
        scores: the benchmark needs log-probs of given continuations (``Engine.score``).
        facts: more provenance for the manifest section (datasets, prompts, seeds).

    Returns:
        (store, engine, config) with the served model filled into ``config`` for http engines.

    Raises:
        NotApplicable: ``scores`` and the engine cannot score (nothing is written).
    """
    from climb_vllm.core.store import RunStore, default_run_dir
    from climb_vllm.engines.registry import open_engine

    key, shared = EngineCache.key(config), context.engines
    engine, config = _shared_engine(config, context, key)
    run_dir = context.out or default_run_dir(_folder_label(config), context.run_id)
    existed = _existing_ancestor(run_dir)
    store = RunStore(run_dir)
    # A start that fails (a typo in the tokenizer, a missing model) must leave nothing behind,
    # and nothing that refuses the corrected command: check the directory first, open the
    # engine, then claim; the folders made for a run that never opened are removed.
    store.check_claim(benchmark, config.hashed_fields(), config.config_hash())
    try:
        engine = engine or open_engine(config)
    except BaseException:
        _remove_empty(run_dir, existed)
        raise
    if scores:
        # Before the claim: the run folder keeps nothing that would refuse the same command
        # against a server that can score.
        _refuse_unscorable(engine, benchmark)
    facts_now = _identity_facts(engine)
    # A resume writes nothing in the claim, so the model is compared after it: a different
    # model is refused with the directory as it was.
    resumed = store.claim(benchmark, config.hashed_fields(), config.config_hash())
    if resumed:
        from climb_vllm.engines.identity import check_same_model, resumed_facts

        previous = store.section(benchmark).engine
        check_same_model(previous, facts_now, run_dir, benchmark)
        facts_now = resumed_facts(previous, facts_now)
    if shared is not None:
        shared.engines[key] = (engine, {"served_model": config.served_model, "model": config.model})
    store.annotate(benchmark, engine=facts_now, analysis=config.analysis_fields(), **facts)
    if resumed and config.display != "none":
        print(f"resuming {run_dir}", file=sys.stderr)
    return store, engine, config
