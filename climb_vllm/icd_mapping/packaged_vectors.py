"""Packaged embeddings of ICD-10-CM names, so that a first run need not embed them.

Embedding the 2021 release's 120,111 titles and other names with all-MiniLM-L6-v2 costs 2-6
minutes on two cores. ``data/embeddings/`` holds their float32 unit vectors, computed once
with the packaged encoder and stored in 8 bits per component (one float32 scale per row), each
row found by a 64-bit digest of its text. A new cache takes the rows whose texts the file
holds and embeds only the others (a later release's new titles, names added since).

The stored vectors are approximate: after dequantising and renormalising, a row lies at most
0.0127 from the vector the encoder computes (mean 0.0074). Each row's own distance is measured
when the file is written and stored with it, and that distance plus :data:`DRIFT` is the
row's bound in the searches: like bfloat16-computed vectors, the stored ones only find
candidates, and every answer is decided on float32 vectors computed here
(:mod:`~climb_vllm.icd_mapping.exact_search`). A sample of the rows a cache takes is
embedded again when it is built, and the file is not used if one of them is farther from its
vector than its stored distance plus half the margin (another encoder, another numerical
library).

``python -m climb_vllm.icd_mapping.write_vectors`` writes the file again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from climb_vllm.resources.data import packaged

#: The data folder and the files in it (vectors and their facts).
FOLDER = "embeddings"
VECTORS = "icd10cm_names_minilm_int8.npz"
FACTS = "icd10cm_names_minilm_int8.json"
#: Largest code of a component: symmetric 8-bit codes, -127..127.
_LEVELS = 127
#: Margin added to each row's stored distance for the float32 vectors of another machine
#: (other kernels round differently: about 1e-5 apart, measured on a sample at every build).
DRIFT = 0.001


def digests(texts: Sequence[str]) -> npt.NDArray[np.uint64]:
    """A 64-bit BLAKE2b digest of each text (UTF-8), the key a row is found by: among the
    file's ~120,000 texts a chance collision has odds of about 1 in 2.5 billion."""
    return np.array(
        [
            int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            for t in texts
        ],
        dtype=np.uint64,
    )


def quantize(
    vectors: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """(codes, scales): each row stored as ``round(v / scale)`` with ``scale = max|v| / 127``."""
    peak = np.abs(vectors).max(axis=1)
    scales = np.where(peak > 0, peak / _LEVELS, 1.0).astype(np.float32)
    codes = np.clip(np.rint(vectors / scales[:, None]), -_LEVELS, _LEVELS).astype(np.int8)
    return codes, scales


def dequantize(
    codes: npt.NDArray[np.int8], scales: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """Unit vectors from stored rows (renormalised, so similarities stay cosines)."""
    vectors = codes.astype(np.float32) * scales[:, None]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.where(norms > 0, norms, 1.0), dtype=np.float32)


@dataclass
class PackagedVectors:
    """The packaged rows, sorted by digest.

    Attributes:
        keys: each row's text digest (:func:`digests`), ascending.
        codes / scales: each row's 8-bit components and scale (:func:`quantize`).
        distances: each row's distance from its float32 vector, measured when written.
        facts: how the file was made (encoder, release, rows, largest distance measured).
    """

    keys: npt.NDArray[np.uint64]
    codes: npt.NDArray[np.int8]
    scales: npt.NDArray[np.float32]
    distances: npt.NDArray[np.float32]
    facts: dict[str, Any]

    def lookup(
        self, texts: Sequence[str]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.float32]]:
        """(vectors, found, distances): one unit vector per text and its stored distance
        (zeros where ``found`` is False)."""
        wanted = digests(texts)
        at = np.searchsorted(self.keys, wanted)
        inside = at < len(self.keys)
        found = np.zeros(len(texts), dtype=bool)
        found[inside] = self.keys[at[inside]] == wanted[inside]
        vectors = np.zeros((len(texts), self.codes.shape[1]), dtype=np.float32)
        distances = np.zeros(len(texts), dtype=np.float32)
        if found.any():
            vectors[found] = dequantize(self.codes[at[found]], self.scales[at[found]])
            distances[found] = self.distances[at[found]]
        return vectors, found, distances


def load(fingerprint: str, folder: Path | None = None) -> PackagedVectors | None:
    """The packaged vectors when they were made by the encoder ``fingerprint`` names (see
    :func:`~climb_vllm.resources.encoder.encoder_fingerprint`); None when the
    file is absent or was made by another encoder.

    Args:
        fingerprint: the installed encoder's fingerprint.
        folder: where the files are (default: the package's data folder).
    """
    vectors_path = folder / VECTORS if folder else packaged(FOLDER, VECTORS)
    facts_path = folder / FACTS if folder else packaged(FOLDER, FACTS)
    try:
        facts = json.loads(facts_path.read_text())
        if facts.get("encoder") != fingerprint:
            return None
        with np.load(vectors_path) as stored:
            return PackagedVectors(
                stored["keys"], stored["codes"], stored["scales"], stored["distances"], facts
            )
    except (OSError, ValueError, KeyError):
        return None


def write(
    texts: Sequence[str],
    vectors: npt.NDArray[np.float32],
    facts: dict[str, Any],
    folder: Path,
    limit: float,
) -> dict[str, Any]:
    """Store ``vectors`` (float32 unit vectors, one row per text) under ``folder``; returns
    the facts written. Repeated texts are stored once.

    Args:
        texts: the text of each row.
        vectors: their float32 embeddings.
        facts: what to record with them (encoder fingerprint, release, command).
        folder: the destination folder.
        limit: the largest distance a stored row may have from its float32 vector; a row
            farther than that is an error, not a file.
    """
    keys = digests(texts)
    unique, first = np.unique(keys, return_index=True)
    if len(set(texts)) != len(unique):
        raise ValueError("two different texts share a digest")
    codes, scales = quantize(vectors[first])
    distances = np.linalg.norm(dequantize(codes, scales) - vectors[first], axis=1)
    # Rounded up to float32, so that a stored distance is never below the true one.
    stored = np.nextafter(distances.astype(np.float32), np.float32(np.inf))
    distance = float(distances.max())
    if distance > limit:
        raise ValueError(f"a stored row is {distance:.4f} from its vector (limit {limit})")
    folder.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(folder / VECTORS, keys=unique, codes=codes, scales=scales, distances=stored)
    out = {**facts, "rows": len(unique), "max_distance": distance}
    (folder / FACTS).write_text(json.dumps(out, indent=1) + "\n")
    return out
