"""The vectors of a set of texts (ICD titles, or their other names): read from the disk cache,
else made and stored there, from the package's vectors, in bfloat16 or in float32.

Where vectors are approximate (packaged 8-bit ones, or computed under bfloat16 autocast), each
row carries a bound on its distance from the float32 vector, and the searches re-check every
answer in float32 (:mod:`~climb_vllm.icd_mapping.exact_search`).
``$CLIMB_VLLM_INDEX_PRECISION`` (auto, float32, bfloat16, packaged) chooses how a new cache is
made.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from climb_vllm.core.errors import UserError
from climb_vllm.core.progress import Progress
from climb_vllm.icd_mapping import packaged_vectors
from climb_vllm.resources.encoder import Encoder, encoder_fingerprint, native_precision

#: Titles per encode call: large enough for fast batches, small enough for a smooth progress bar.
_BLOCK = 2048
#: Bound on the distance between a name's bfloat16-computed unit vector and its float32 one:
#: twice the largest distance measured over the 2021 release's 120,111 names (0.0125). The
#: packaged rows carry their own bounds (``packaged_vectors``: at most 0.0127 + 0.001).
APPROXIMATION_ERROR = 0.025
#: Names embedded in float32 too whenever a cache of approximate vectors is built: a distance
#: above VERIFY_SHARE of the bound among them makes the build embed in float32 instead.
VERIFY_TEXTS = 256
VERIFY_SHARE = 0.6
#: Environment variable that chooses the vectors of a new cache: auto or one of PRECISIONS.
PRECISION_VARIABLE = "CLIMB_VLLM_INDEX_PRECISION"
#: Ways a new cache gets its vectors: computed here in float32 or bfloat16, or packaged.
PRECISIONS = ("float32", "bfloat16", "packaged")


def index_precision() -> str:
    """How new caches get their vectors: ``$CLIMB_VLLM_INDEX_PRECISION`` when it names a way;
    by default (``auto``) "packaged": the packaged vectors for the texts they hold
    (:mod:`~climb_vllm.icd_mapping.packaged_vectors`), the others embedded in
    :func:`native_precision`. Answers are float32-exact every way."""
    chosen = os.environ.get(PRECISION_VARIABLE, "auto").strip().lower() or "auto"
    if chosen not in ("auto", *PRECISIONS):
        raise UserError(
            f"{PRECISION_VARIABLE}={chosen!r} is not a precision.",
            f"set {PRECISION_VARIABLE} to auto, {', '.join(PRECISIONS)} (or unset it).",
        )
    return "packaged" if chosen == "auto" else chosen


#: What :func:`embedded` gives: (embeddings, encoder, approximate, bounds): ``bounds`` are
#: the rows' own bounds where known (None: :data:`APPROXIMATION_ERROR` for every row).
Embedded = tuple[npt.NDArray[np.float32], "Encoder | None", bool, npt.NDArray[np.float32] | None]


def embedded(
    texts: list[str],
    path: Path,
    encoder: Encoder | None,
    display: str,
    label: str,
    meta: dict[str, Any],
    precision: str = "float32",
) -> Embedded:
    """(embeddings, encoder, approximate, bounds) of ``texts``: from ``path`` when cached there
    (or from its approximate sibling, unless ``precision`` is float32), else made the
    ``precision`` way (one of :data:`PRECISIONS`) and stored. ``approximate`` says the vectors
    may differ from float32 ones; ``bounds`` by how much, row by row (None: by up to
    :data:`APPROXIMATION_ERROR`)."""
    rough = approximate_path(path)
    for candidate, approximate in ((path, False), (rough, True), (_legacy_path(path), True)):
        if candidate.exists() and not (approximate and precision == "float32"):
            embeddings = np.load(candidate)
            if embeddings.shape[0] == len(texts):
                return embeddings, encoder, approximate, _stored_bounds(candidate, len(texts))
    encoder = encoder or Encoder(device="cpu")
    made = _from_package(texts, encoder, display, label) if precision == "packaged" else None
    bounds = None
    if made is not None:
        embeddings, facts, bounds = made
        approximate = True
    else:
        chosen = native_precision() if precision == "packaged" else precision
        embeddings, approximate, facts = _computed(texts, encoder, display, label, chosen)
    target = rough if approximate else path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if bounds is not None:
            # Written before the vectors: a cache whose vectors exist has its bounds.
            _save(_bounds_path(target), bounds)
        else:
            # Bounds left by an earlier cache of the same texts would be too tight for these.
            _bounds_path(target).unlink(missing_ok=True)
        _save(target, embeddings)
        target.with_suffix(".json").write_text(json.dumps({**meta, **facts}))
    except OSError as exc:
        raise UserError(
            f"Cannot write the embedding cache in {path.parent} ({exc.strerror}).",
            "set CLIMB_VLLM_CACHE to a writable folder.",
        ) from exc
    return embeddings, encoder, approximate, bounds


def _save(target: Path, array: npt.NDArray[Any]) -> None:
    """Write ``array`` to ``target`` whole or not at all (renamed from a partial file)."""
    partial = target.with_suffix(f".{os.getpid()}.partial.npy")
    np.save(partial, array)
    partial.replace(target)


def _bounds_path(path: Path) -> Path:
    """Where the rows' own bounds of the approximate vectors in ``path`` are kept."""
    return path.with_suffix(".bounds.npy")


def _stored_bounds(path: Path, rows: int) -> npt.NDArray[np.float32] | None:
    """The rows' own bounds kept beside ``path`` (None when there are none)."""
    try:
        bounds = np.load(_bounds_path(path))
    except (OSError, ValueError):
        return None
    return bounds.astype(np.float32) if bounds.shape == (rows,) else None


def stored_path(path: Path, approximate: bool) -> Path:
    """The file that holds the vectors cached for ``path``: ``path`` itself for float32 ones,
    else its approximate sibling (or the older name of one, where only that exists)."""
    if not approximate:
        return path
    rough = approximate_path(path)
    return rough if rough.exists() or not _legacy_path(path).exists() else _legacy_path(path)


def approximate_path(path: Path) -> Path:
    """Where a cache of approximate vectors (bfloat16-computed or packaged) is kept."""
    return path.with_suffix(".approx.npy")


def _legacy_path(path: Path) -> Path:
    """The name such a cache had when only bfloat16 made approximate vectors (still read)."""
    return path.with_suffix(".bf16.npy")


def _computed(
    texts: list[str], encoder: Encoder, display: str, label: str, precision: str
) -> tuple[npt.NDArray[np.float32], bool, dict[str, Any]]:
    """(embeddings, approximate, facts) of ``texts`` embedded here in ``precision``."""
    approximate = precision == "bfloat16"
    embeddings = _embed_all(encoder, texts, display, label, approximate)
    facts: dict[str, Any] = {}
    if approximate and texts:
        # Checked, not assumed: a sample embedded in float32 too must sit well inside the bound
        # the searches rely on, else the whole set is embedded in float32.
        sample = np.sort(np.random.default_rng(0).permutation(len(texts))[:VERIFY_TEXTS])
        distance = _distance(encoder, [texts[i] for i in sample], embeddings[sample])
        facts["bfloat16_check"] = {"texts": len(sample), "max_distance": distance}
        if distance > APPROXIMATION_ERROR * VERIFY_SHARE:
            approximate = False
            embeddings = _embed_all(encoder, texts, display, f"{label} (float32)", False)
    return embeddings, approximate, facts


def _distance(encoder: Encoder, texts: list[str], vectors: npt.NDArray[np.float32]) -> float:
    """The largest distance between ``vectors`` and the texts' float32 embeddings."""
    exact = encoder.encode(texts)
    return float(np.linalg.norm(vectors - exact, axis=1).max()) if texts else 0.0


def _from_package(
    texts: list[str], encoder: Encoder, display: str, label: str
) -> tuple[npt.NDArray[np.float32], dict[str, Any], npt.NDArray[np.float32]] | None:
    """(embeddings, facts, bounds): the packaged vectors of the texts they hold, each bounded
    by its stored distance plus ``DRIFT``, and the others embedded in
    :func:`native_precision`; None when the package holds none of the texts, was made by
    another encoder, or a row of a sample lies farther from this machine's float32 vector
    than its stored distance plus half the margin."""
    stored = packaged_vectors.load(encoder_fingerprint())
    if stored is None:
        return None
    vectors, found, distances = stored.lookup(texts)
    held = np.flatnonzero(found)
    if held.size == 0:
        return None
    sample = held[np.sort(np.random.default_rng(0).permutation(held.size)[:VERIFY_TEXTS])]
    exact = encoder.encode([texts[i] for i in sample])
    measured = np.linalg.norm(vectors[sample] - exact, axis=1)
    drift = float((measured - distances[sample]).max())
    if drift > packaged_vectors.DRIFT / 2:
        return None
    missing = np.flatnonzero(~found)
    rest, rough, facts = _computed(
        [texts[i] for i in missing], encoder, display, label, native_precision()
    )
    vectors[missing] = rest
    bounds = distances + packaged_vectors.DRIFT
    bounds[missing] = APPROXIMATION_ERROR if rough else 0.0
    facts["packaged"] = {
        "rows": int(held.size),
        "embedded_here": int(missing.size),
        "check": {
            "texts": int(sample.size),
            "max_distance": float(measured.max()),
            "max_above_stored": drift,
        },
    }
    return vectors, facts, bounds


def _embed_all(
    encoder: Encoder, texts: list[str], display: str, label: str, bfloat16: bool
) -> npt.NDArray[np.float32]:
    """Embeddings of ``texts`` in their order, computed shortest first: batches of texts of
    about one length carry little padding (15-30% faster than release order on 2 cores)."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), encoder.dimension), np.float32)
    with Progress(label, len(texts), display) as progress:
        for start in range(0, len(texts), _BLOCK):
            rows = order[start : start + _BLOCK]
            out[rows] = encoder.encode([texts[i] for i in rows], bfloat16=bfloat16)
            progress.advance(len(rows))
    return out


def row_bounds(
    approximate: bool, bounds: npt.NDArray[np.float32] | None, rows: int
) -> npt.NDArray[np.float32]:
    """Each row's bound: its own where known, else :data:`APPROXIMATION_ERROR` for
    approximate vectors and 0 for float32 ones."""
    if bounds is not None and approximate:
        return bounds
    return np.full(rows, APPROXIMATION_ERROR if approximate else 0.0, np.float32)
