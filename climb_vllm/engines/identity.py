"""What a run's model is, cheaply enough to check on every start, so that a resumed run never
mixes two models' records.

In-process: a folder's weights fingerprint hashes, for every weight file, its size, its first
64 KiB (a safetensors header names every tensor, shape and dtype) and 32 blocks of 64 KiB spread
evenly through it. Retrained or replaced weights change every tensor, so any sampled block
differs; reading 2 MiB per file takes milliseconds, where hashing a 1 GB file whole takes
seconds. Config, tokenizer and chat-template files are hashed whole; other files (notes,
licences) are left out.

Served: what each endpoint's ``/v1/models`` says of the served model (its id, the path or hub id
it was loaded from, its context length).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from climb_vllm.core.errors import UserError

#: Files holding weights (hashed by samples) rather than settings (hashed whole).
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".ckpt")
#: Settings files that shape the model's outputs (config, tokenizer, chat template); other files
#: in a model folder (notes, licences) do not change what the model computes.
SETTINGS_SUFFIXES = (".json", ".model", ".jinja", ".txt")
_BLOCK = 64 * 1024
_SAMPLES = 32


def weights_fingerprint(folder: Path) -> str:
    """SHA-256 over the folder's settings files and samples of its weight files (see the
    module note); the same folder gives the same value, a changed tensor a different one."""
    digest = hashlib.sha256()
    for item in sorted(folder.iterdir()):
        if not item.is_file() or item.suffix not in (*WEIGHT_SUFFIXES, *SETTINGS_SUFFIXES):
            continue
        digest.update(item.name.encode())
        size = item.stat().st_size
        digest.update(str(size).encode())
        if item.suffix in SETTINGS_SUFFIXES:
            digest.update(item.read_bytes())
            continue
        with item.open("rb") as stream:
            digest.update(stream.read(_BLOCK))
            span = max(size - _BLOCK, 0)
            for k in range(_SAMPLES):
                stream.seek(span * k // (_SAMPLES - 1))
                digest.update(stream.read(_BLOCK))
    return digest.hexdigest()


#: Engine facts that identify the model, compared on every resume.
IDENTITY_KEYS = ("weights_fingerprint", "served_models")
#: Fixed (prompt, continuation) pairs whose log-probs every start records and every resume
#: compares, on each endpoint: the model-level canary of every benchmark.
CANARY_TEXTS = (
    ("Cholera is related to the name:", " Maria"),
    ("The patient was admitted with fever and cough. The diagnosis is", " pneumonia"),
    ("Question: To whom does 'she' refer?\n\nAnswer:", " The nurse"),
)
#: Largest |recorded - now| (nat) of the same model: fp32/fp64 engines, anything else (half
#: precision moves log-probs by tenths of a nat with the batch's shape; another model moves
#: them by whole nats).
TOLERANCE_FULL = 1e-3
TOLERANCE_HALF = 0.5


def tolerance(dtype: str | None) -> float:
    """The canary's tolerance for an engine of ``dtype`` (None: a server, dtype unknown)."""
    return TOLERANCE_FULL if dtype in ("float32", "float64") else TOLERANCE_HALF


def canary(engine: Any) -> list[list[float]] | None:
    """The log-probs of :data:`CANARY_TEXTS`' continuations, per endpoint (one list for the
    in-process engine); None when the engine cannot score (a server without prompt log-probs).
    """
    from climb_vllm.engines.base import ScoreRequest

    try:
        tokenizer = engine.tokenizer
        requests = []
        for prompt, continuation in CANARY_TEXTS:
            prefix = list(tokenizer(prompt)["input_ids"])
            full = list(tokenizer(prompt + continuation)["input_ids"])
            if full[: len(prefix)] == prefix and len(full) > len(prefix):
                requests.append(ScoreRequest(tuple(prefix), (tuple(full[len(prefix) :]),)))
        each = getattr(engine, "score_each_endpoint", None)
        results = each(requests) if each is not None else [engine.score(requests)]
    except Exception:  # any engine that cannot score here simply has no canary
        return None
    return [[round(float(r.logprobs[0]), 6) for r in found] for found in results]


def check_same_model(
    previous: dict[str, Any], current: dict[str, Any], run: Path, benchmark: str
) -> None:
    """Refuse to resume when the model behind the engine changed since the run's records began.

    Args:
        previous: the engine facts the run's manifest holds (from its first start).
        current: the engine facts now.
        run: the run directory (named in the message).
        benchmark: the benchmark being resumed.

    Raises:
        UserError: an identity fact differs (names the run's model, what the engine holds now,
            and the fix).
    """
    limit = tolerance(current.get("dtype"))
    reference = (previous.get("canary") or [None])[0]
    for now in current.get("canary") or []:
        worst = max((abs(b - n) for b, n in zip(reference or [], now)), default=0.0)
        if reference is not None and worst > limit:
            model = previous.get("model") or previous.get("served_model") or "its model"
            raise UserError(
                f"{run} holds {benchmark} records of {model}, but the engine now gives other "
                f"log-probs for fixed canary texts (by up to {worst:.3g} nat; tolerance "
                f"{limit:g}): it holds another model, and resuming would mix two models' "
                "records.",
                "restore the run's model (the same weights, or the same model behind every "
                "endpoint), or start a new run with another --out / --run-id.",
            )
    for key in IDENTITY_KEYS:
        before, now = previous.get(key), current.get(key)
        if before is None or now is None or before == now:
            continue
        model = previous.get("model") or previous.get("served_model") or "its model"
        raise UserError(
            f"{run} holds {benchmark} records of {model} ({key} {_short(before)}), but the "
            f"engine now holds another model ({key} {_short(now)}): resuming would mix two "
            "models' records.",
            "restore the run's model (the same weights, or the same model behind the servers), "
            "or start a new run with another --out / --run-id.",
        )


def check_replicas_agree(facts: dict[str, Any]) -> None:
    """Refuse endpoints that disagree on the canary texts: one replica serves another model.

    Raises:
        UserError: names the two endpoints and the difference.
    """
    found = facts.get("canary") or []
    urls = [e.get("url", f"endpoint {k}") for k, e in enumerate(facts.get("endpoints", []))]
    limit = tolerance(facts.get("dtype"))
    for k, values in enumerate(found[1:], start=1):
        worst = max((abs(a - b) for a, b in zip(found[0], values)), default=0.0)
        if worst > limit:
            first = urls[0] if urls else "endpoint 0"
            other = urls[k] if k < len(urls) else f"endpoint {k}"
            raise UserError(
                f"{other} and {first} give different log-probs for the same canary texts (by "
                f"up to {worst:.3g} nat): they serve different models.",
                "serve the same model on every endpoint (make stop, then make serve), or pass "
                "--endpoint for the ones that serve the run's model.",
            )


def _short(value: Any) -> str:
    text = str(value)
    return text[:16] if len(text) == 64 else text[:200]
