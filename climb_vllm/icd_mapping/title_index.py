"""Sentence embeddings of ICD-10-CM titles and a FAISS index over them, cached on disk.

CliBench maps a free-text diagnosis to the code whose title is nearest by cosine similarity of
all-MiniLM-L6-v2 embeddings (:mod:`~climb_vllm.resources.encoder`). Embedding the
95,358 titles of the 2021 release takes minutes on two cores, so the embeddings and the index
are built once per (release, code set, encoder) and stored under the cache folder
(``$CLIMB_VLLM_CACHE``, else ``$XDG_CACHE_HOME/climb-vllm``, else ``~/.cache/climb-vllm``);
later runs load them in well under a second.

A new cache (:mod:`~climb_vllm.icd_mapping.vector_cache`) takes the vectors of the
texts the package holds (:mod:`~climb_vllm.icd_mapping.packaged_vectors`: every title
and other name of the 2021 release, stored in 8 bits) and embeds only the others, under
bfloat16 autocast where the CPU computes it natively (about twice as fast as float32). Such
vectors only find candidates: every answer is decided on float32 vectors
(:mod:`~climb_vllm.icd_mapping.exact_search`), so the answers are a float32 index's.
``$CLIMB_VLLM_INDEX_PRECISION`` (auto, float32, bfloat16, packaged) overrides the choice.

Search is exact: ``IndexFlatIP`` on unit vectors (inner product = cosine). An HNSW graph was
measured (NOTES.md): it found the brute-force nearest title for only 98.3% of distinct
paraphrases at efSearch 256, and was no faster than exact search at efSearch 768 (99.5%); a
mapping a user cannot reproduce by brute force is not worth the time saved. Equal similarities
(ICD-10-CM repeats some titles) go to the earlier code of the release, as CliBench's
``list.index(max(...))`` does; similarities within 1e-5 are equal, so that the batch a vector
was computed in never decides.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from climb_vllm.core.cache import cache_root
from climb_vllm.core.errors import UserError
from climb_vllm.icd_mapping.exact_search import (
    Rescorer,
    nearest_accepted,
    nearest_of,
    resolve,
    top_k,
    window,
)
from climb_vllm.icd_mapping.vector_cache import (
    APPROXIMATION_ERROR,
    embedded,
    index_precision,
    row_bounds,
    stored_path,
)
from climb_vllm.resources.encoder import ENCODER, Encoder, encoder_fingerprint

if TYPE_CHECKING:
    from climb_vllm.resources.ontology import Ontology

#: Neighbours fetched per query, so that titles tied with the k-th one can be ordered by row.
CANDIDATES = 32
#: Version of the rules that make the other names (part of their cache key).
NAMES_RULES = "2"


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
        approximate: which rows are approximate (bfloat16-computed or packaged; None: none
            are); their order is re-checked in float32
            (:mod:`~climb_vllm.icd_mapping.exact_search`).
        encoder: the encoder for those checks (loaded on first need when None).
        bounds: each row's bound on the distance between its vector and its float32 one
            (None: :data:`APPROXIMATION_ERROR` for every approximate row, 0 for the others).
    """

    codes: list[str]
    titles: list[str]
    embeddings: npt.NDArray[np.float32]
    index: Any
    key: str
    path: Path | None = None
    title_rows: int = -1
    approximate: npt.NDArray[np.bool_] | None = None
    encoder: Encoder | None = None
    bounds: npt.NDArray[np.float32] | None = None

    def __post_init__(self) -> None:
        if self.title_rows < 0:
            self.title_rows = len(self.codes)
        if self.approximate is not None and not self.approximate.any():
            self.approximate = None
        if self.approximate is None:
            self.bounds = np.zeros(len(self.codes), np.float32)
        elif self.bounds is None:
            self.bounds = np.where(self.approximate, APPROXIMATION_ERROR, 0).astype(np.float32)
        else:
            self.bounds = np.where(self.approximate, self.bounds, 0).astype(np.float32)
        # The largest bound: how far an unfetched row may rise above its approximate rank.
        self.error = float(self.bounds.max()) if len(self.bounds) else 0.0
        # Exact vectors of approximate rows are kept beside the cache, per index (its key).
        folder = self.path.parent / f"exact-{self.key.replace('+', '-')}" if self.path else None
        self.rescorer = Rescorer(
            self.embeddings, self.approximate, self.titles, self._embed, folder
        )

    def _bounds(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The bounds of ``rows`` (0 where a row is -1, FAISS's padding)."""
        assert self.bounds is not None
        return np.where(rows >= 0, self.bounds[np.maximum(rows, 0)], 0).astype(np.float32)

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if self.encoder is None:
            self.encoder = Encoder(device="cpu")
        return self.encoder.encode(texts)

    def _candidates(
        self, queries: npt.NDArray[np.float32], depth: int
    ) -> list[tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]]:
        """Per query, (approximate similarities, rows) of FAISS's nearest rows, enough of them
        to hold every row that may be among the exact top ``depth`` (exact_search.window)."""
        total = len(self.codes)
        fetch = min(total, max(depth, CANDIDATES) * (2 if self.error else 1))
        out: list[tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]] = [
            (np.zeros(0, np.float32), np.zeros(0, np.int64))
        ] * len(queries)
        todo = np.arange(len(queries))
        while todo.size:
            _, rows = self.index.search(queries[todo], fetch)
            safe = np.where(rows >= 0, rows, 0)
            # Re-scored the same way for every candidate: FAISS's own sums may round apart.
            sims = np.einsum("qd,qkd->qk", queries[todo], self.embeddings[safe])
            sims = np.where(rows >= 0, sims, -np.inf).astype(np.float32)
            again = []
            for i, query in enumerate(todo):
                out[query] = (sims[i], rows[i])
                valid = rows[i] >= 0
                if self.error and fetch < total and valid.any():
                    found = sims[i][valid]
                    # A row not fetched has at most the lowest fetched similarity, and at
                    # most the largest bound: fetch more while it could still qualify.
                    bounds = self._bounds(rows[i][valid])
                    if found.min() + self.error >= window(found, bounds, depth):
                        again.append(query)
            todo = np.array(again, dtype=np.int64)
            fetch = min(total, fetch * 2)
        return out

    def search(
        self, queries: npt.NDArray[np.float32], k: int = 1
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """(similarities, row numbers) of the ``k`` nearest titles of each query row, best
        first; equal similarities are ordered by row (release order). Rows of -1 mean fewer
        than ``k`` titles exist."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        top_sims = np.full((queries.shape[0], k), -np.inf, np.float32)
        top_rows = np.full((queries.shape[0], k), -1, np.int64)
        if queries.shape[0] == 0:
            return top_sims, top_rows
        found = self._candidates(queries, k)
        jobs = [
            top_k(query, sims, rows, self._bounds(rows), k, self.rescorer)
            for query, (sims, rows) in zip(queries, found)
        ]
        for i, (sims, rows) in enumerate(resolve(jobs, self.rescorer)):
            top_sims[i, : len(rows)] = sims
            top_rows[i, : len(rows)] = rows
        return top_sims, top_rows

    def nearest_accepted(
        self,
        queries: npt.NDArray[np.float32],
        accepts: Sequence[Callable[[int], bool]],
        depth: int = CANDIDATES,
    ) -> list[tuple[float, int]]:
        """Per query, (similarity, row) of the nearest of its ``depth`` nearest rows that its
        ``accepts`` function takes, else of its nearest row; (-inf, -1) for an empty index."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.shape[0] == 0:
            return []
        found = self._candidates(queries, depth)
        jobs = [
            nearest_accepted(query, sims, rows, self._bounds(rows), depth, accept, self.rescorer)
            for query, (sims, rows), accept in zip(queries, found, accepts)
        ]
        return resolve(jobs, self.rescorer)

    def search_rows(
        self, queries: npt.NDArray[np.float32], rows: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """(similarity, row) of the nearest of the given ``rows`` for each query (exact, by
        brute force: meant for small row sets such as the Z codes); ties go to the lower row."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.shape[0] == 0 or rows.size == 0:
            count = queries.shape[0]
            return np.full(count, -np.inf, np.float32), np.full(count, -1, np.int64)
        rows = np.sort(rows)
        sims = queries @ self.embeddings[rows].T
        bounds = self._bounds(rows)
        jobs = [
            nearest_of(query, sims[i], rows, bounds, self.rescorer)
            for i, query in enumerate(queries)
        ]
        answers = resolve(jobs, self.rescorer)
        return (
            np.array([a[0] for a in answers], np.float32),
            np.array([a[1] for a in answers], np.int64),
        )

    def describe(self) -> dict[str, Any]:
        """Facts for the manifest."""
        return {
            "encoder": ENCODER,
            "titles": self.title_rows,
            "other_names": len(self.codes) - self.title_rows,
            "key": self.key,
            "cache": str(self.path) if self.path else None,
            "search": "exact (faiss IndexFlatIP on unit vectors)",
            "vectors": "float32"
            if self.approximate is None
            else "approximate (packaged 8-bit or bfloat16), re-checked in float32",
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


def build_or_load(
    ontology: Ontology,
    codes: Sequence[str] | None = None,
    encoder: Encoder | None = None,
    cache: Path | None = None,
    display: str = "rich",
    names: bool = False,
    precision: str | None = None,
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
        precision: how a cache built now gets its vectors, one of :data:`PRECISIONS`
            (default: :func:`index_precision`).
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
    precision = precision or index_precision()
    embeddings, encoder, rough, bounds = embedded(
        titles, path, encoder, display, "embedding ICD titles", meta, precision
    )
    path = stored_path(path, rough)
    if not names:
        approximate = np.full(len(chosen), rough)
        return TitleIndex(
            chosen,
            titles,
            embeddings,
            _index(embeddings),
            key,
            path,
            -1,
            approximate,
            encoder,
            row_bounds(rough, bounds, len(chosen)),
        )
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

    extra, encoder, extra_rough, extra_bounds = embedded(
        extra_names,
        folder / f"names-{names_key}.npy",
        encoder,
        display,
        "embedding other ICD names",
        {**meta, "names": len(extra_names)},
        precision,
    )
    every = np.concatenate([embeddings, extra])
    approximate = np.concatenate([np.full(len(chosen), rough), np.full(len(extra), extra_rough)])
    return TitleIndex(
        chosen + extra_codes,
        titles + extra_names,
        every,
        _index(every),
        f"{key}+{names_key}",
        path,
        title_rows=len(chosen),
        approximate=approximate,
        encoder=encoder,
        bounds=np.concatenate(
            [
                row_bounds(rough, bounds, len(chosen)),
                row_bounds(extra_rough, extra_bounds, len(extra)),
            ]
        ),
    )
