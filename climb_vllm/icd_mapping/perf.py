"""``climb-vllm bench --mapping N``: free-text diagnosis -> ICD code mapping speed (P5).

Measures, over every code of the 2021 release and its other names (the default mapper's index;
the embedding caches are built first if missing):

- what the other names add to building the index: embedding the titles of 2,000 sampled codes
  and then their other names (inclusion terms, Includes notes, forms without nonessential
  modifiers), timed on the same encoder; the build-time ratio is (titles + names) / titles;
- loading the cached index (embeddings from disk into a FAISS index), then making the mapper
  (its exact-name table and the words that are not abbreviations);
- mapping N diagnosis texts of a realistic run: a model names the same diagnosis across the
  variants, placements and samples of a case, so N points hold N/5 distinct texts; of these
  30% are titles as written (any case), 20% titles with a one-letter slip, 50% short
  paraphrases (the first words of a title, lower case);
- mapping N distinct texts none of which is a title (the worst case: every text is embedded);
- the nearest-title search alone: the exact FAISS index beside brute-force numpy cosine (one
  matrix product and an argmax) on the same query embeddings, and the share of queries for
  which FAISS finds a title as similar as the brute-force best.

Texts are drawn from the release's titles with a fixed seed.

``climb-vllm bench --index-build [N]`` (:func:`index_build_bench`) times a first run's index
build in float32, in bfloat16 and from the packaged vectors, and checks that all three give
the same answers.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import numpy as np


def _slip(text: str, rng: random.Random) -> str:
    """The text with one letter dropped (a typo), away from the first letter."""
    letters = [i for i, ch in enumerate(text) if ch.isalpha() and i > 0]
    if not letters:
        return text
    cut = rng.choice(letters)
    return text[:cut] + text[cut + 1 :]


def realistic_texts(titles: list[str], count: int, seed: int = 0) -> list[str]:
    """``count`` texts with ``count // 5`` distinct ones, in the mix the module docstring gives."""
    rng = random.Random(seed)
    distinct: list[str] = []
    for title in rng.sample(titles, max(1, count // 5)):
        roll = rng.random()
        if roll < 0.3:
            distinct.append(title if rng.random() < 0.5 else title.lower())
        elif roll < 0.5:
            distinct.append(_slip(title, rng))
        else:
            distinct.append(" ".join(title.split()[: rng.randint(2, 5)]).lower())
    texts = [distinct[i % len(distinct)] for i in range(count)]
    rng.shuffle(texts)
    return texts


def distinct_paraphrases(titles: list[str], count: int, seed: int = 1) -> list[str]:
    """``count`` distinct texts that are not titles: a title's first words plus a marker."""
    rng = random.Random(seed)
    picked = rng.sample(titles, count)
    return [
        f"{' '.join(t.split()[: rng.randint(2, 6)]).lower()} (suspected {i})"
        for i, t in enumerate(picked)
    ]


def contextual_texts(count: int) -> tuple[list[str], list[tuple[str, ...]]]:
    """``count`` abbreviations of several senses (the packaged abbreviations in context, in
    turn), each with the pieces of a distinct context (the item's, numbered)."""
    from climb_vllm.icd_mapping.mapping_accuracy import load_contexts
    from climb_vllm.icd_mapping.senses import chunks

    items = load_contexts()
    picked = [items[k % len(items)] for k in range(count)]
    return [i.text for i in picked], [
        chunks(f"{i.context} Note {k}.") for k, i in enumerate(picked)
    ]


def mapping_bench(count: int) -> dict[str, Any]:
    """Run the measurements above with ``count`` texts; returns the results table."""
    import torch

    from climb_vllm.icd_mapping.icdmap import Mapper
    from climb_vllm.icd_mapping.title_index import build_or_load, other_names
    from climb_vllm.resources.encoder import Encoder
    from climb_vllm.resources.ontology import load_ontology

    ontology = load_ontology("2021")
    encoder = Encoder(device="cpu")
    sample = ontology.stratified_subset(2000, seed=0)
    descriptions = dict(zip(ontology.table["code"], ontology.table["description"]))
    encoder.encode(["warm-up text"])
    start = time.perf_counter()
    encoder.encode([descriptions[c] for c in sample])
    titles_s = time.perf_counter() - start
    _, names = other_names(ontology, sample)
    start = time.perf_counter()
    encoder.encode(names)
    names_s = time.perf_counter() - start
    build_or_load(ontology, None, encoder, display="plain", names=True)  # fill the caches
    start = time.perf_counter()
    index = build_or_load(ontology, None, encoder, display="none", names=True)
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    mapper = Mapper(ontology, index, encoder)
    mapper_s = time.perf_counter() - start
    mapper.map_texts(["warm-up text"])
    titles = index.titles[: index.title_rows]

    texts = realistic_texts(titles, count)
    start = time.perf_counter()
    matches = mapper.map_texts(texts)
    realistic_s = time.perf_counter() - start
    methods = {m: sum(x.method == m for x in matches) / len(matches) for m in ("exact",)}

    hard = distinct_paraphrases(titles, count)
    start = time.perf_counter()
    mapper.map_texts(hard)
    hard_s = time.perf_counter() - start

    # Abbreviations of several senses, each in its own context (the worst case for senses:
    # every text is matched once per context, and every piece is embedded).
    ambiguous, contexts = contextual_texts(max(1, count // 10))
    start = time.perf_counter()
    mapper.map_texts(ambiguous)
    plain_s = time.perf_counter() - start
    start = time.perf_counter()
    mapper.map_texts(ambiguous, contexts)
    context_s = time.perf_counter() - start

    start = time.perf_counter()
    queries = encoder.encode(hard)
    embed_s = time.perf_counter() - start
    start = time.perf_counter()
    faiss_sims, _ = index.search(queries, 1)
    faiss_s = time.perf_counter() - start
    start = time.perf_counter()
    similarities = queries @ index.embeddings.T
    numpy_rows = np.argmax(similarities, axis=1)
    numpy_s = time.perf_counter() - start
    best = similarities[np.arange(len(numpy_rows)), numpy_rows]
    return {
        "titles_indexed": index.title_rows,
        "other_names_indexed": len(index.codes) - index.title_rows,
        "sample_embed_titles_s": titles_s,
        "sample_embed_other_names_s": names_s,
        "index_build_ratio": (titles_s + names_s) / titles_s,
        "torch_threads": torch.get_num_threads(),
        "index_load_s": load_s,
        "mapper_init_s": mapper_s,
        f"map_{count}_realistic_s": realistic_s,
        "realistic_distinct_texts": len(set(texts)),
        "realistic_exact_share": methods["exact"],
        f"map_{count}_distinct_s": hard_s,
        f"map_{len(ambiguous)}_ambiguous_without_context_s": plain_s,
        f"map_{len(ambiguous)}_ambiguous_each_in_its_context_s": context_s,
        "embed_distinct_s": embed_s,
        "search_faiss_s": faiss_s,
        "search_numpy_bruteforce_s": numpy_s,
        "search_speedup": numpy_s / faiss_s if faiss_s else float("nan"),
        # On a bfloat16 index the brute force runs on its approximate vectors, which are
        # within index.error of the exact similarity the search returns.
        "index_vectors": index.describe()["vectors"],
        "faiss_finds_bruteforce_best": float(
            np.mean(np.isclose(faiss_sims[:, 0], best, atol=1e-5 + index.error))
        ),
    }


def index_build_bench(count: int) -> dict[str, Any]:
    """A first run's index build, timed three ways (each in a fresh cache folder, encoder load
    included): float32, bfloat16 and from the packaged vectors; then every index answers the
    same 2,000 paraphrases and the same realistic texts through the mapper, and the answers
    are compared with the float32 index's (they must be identical).

    Args:
        count: codes indexed (a stratified sample; the release's size or more: every code).
    """
    import tempfile

    from climb_vllm.icd_mapping.icdmap import Mapper
    from climb_vllm.icd_mapping.title_index import build_or_load
    from climb_vllm.icd_mapping.vector_cache import PRECISIONS
    from climb_vllm.resources.encoder import Encoder, native_precision
    from climb_vllm.resources.ontology import load_ontology

    ontology = load_ontology("2021")
    codes = None if count >= len(ontology.codes) else ontology.stratified_subset(count, seed=0)
    results: dict[str, Any] = {"codes": count if codes is not None else len(ontology.codes)}
    results["native_precision_here"] = native_precision()
    indexes = {}
    with tempfile.TemporaryDirectory() as scratch:
        for precision in PRECISIONS:
            start = time.perf_counter()
            indexes[precision] = build_or_load(
                ontology,
                codes,
                None,
                cache=Path(scratch) / precision,
                display="plain",
                names=True,
                precision=precision,
            )
            results[f"first_build_{precision}_s"] = time.perf_counter() - start
        for precision in PRECISIONS[1:]:
            results[f"speedup_{precision}"] = (
                results["first_build_float32_s"] / results[f"first_build_{precision}_s"]
            )
        encoder = Encoder(device="cpu")
        titles = indexes["float32"].titles[: indexes["float32"].title_rows]
        # A realistic run repeats each of count / 5 sampled titles: at most every title.
        texts = distinct_paraphrases(titles, min(2000, len(titles))) + realistic_texts(
            titles, min(2000, 5 * len(titles))
        )
        answers = {}
        for precision, index in indexes.items():
            start = time.perf_counter()
            answers[precision] = [m.code for m in Mapper(ontology, index, encoder).map_texts(texts)]
            results[f"map_{len(texts)}_texts_{precision}_s"] = time.perf_counter() - start
        for precision in PRECISIONS[1:]:
            results[f"{precision}_rows_rechecked"] = indexes[precision].rescorer.embedded
            same = [a == b for a, b in zip(answers["float32"], answers[precision])]
            results[f"identical_answers_{precision}"] = f"{sum(same)} / {len(same)}"
    return results
