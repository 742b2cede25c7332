"""Turning (prompt text, names) into score requests under the token-boundary contract.

The contract (see :mod:`climb_vllm.engines.base`): prefix ids = ``tok(T)`` with special tokens
as the tokenizer adds them; continuation ids = ``tok(T + " " + name)[len(prefix):]``. Every pair
is checked: when ``tok(T)`` is not a prefix of ``tok(T + " " + name)`` (a merge across the
boundary), that pair gets its own request, split at the longest common prefix, so it is scored
as the full sequence it really is rather than with a continuation that the model never sees.

Encoding ``T + " " + name`` for every pair costs 31 encodings per code (2.9 million for the full
release), most of the time of a run's set-up on a CPU. The encoder therefore checks each pair
on its *tail*: the last :data:`TAIL_WORDS` words of ``T`` (with the space before them). Every
prompt of a template ends with the same words, so the full release has one tail per template
and 30 tail encodings replace 2.9 million full ones. A pair's ids are then
``tok(T)[:-len(tok(W))] + tok(W + " " + name)``, which equals ``tok(T + " " + name)`` whenever no
merge joins the words before the tail to the tail: true by construction for tokenizers that
split text into words before merging (Llama 3's regex, GPT-2's byte level) and for those whose
vocabulary holds no token that spans a space between two words (Gemma 3's, but for ``">▁</"``).
Nothing is assumed silently:

- a text whose own ids do not end with its tail's ids (the tail's first word merged with the
  word before it) is planned pair by pair, in full;
- a (tail, name) pair that breaks the contract at the tail is planned in full for every text
  with that tail, and split as above;
- :data:`VERIFY_PAIRS` pairs of each call, drawn at random, are also encoded in full; one
  difference sends the whole call to the full path (and is counted).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from climb_vllm.engines.base import ScoreRequest

#: Words of a text's end that the boundary is checked on (see the module note).
TAIL_WORDS = 3
#: Pairs per call also encoded in full and compared with the tail's result.
VERIFY_PAIRS = 64


@dataclass(frozen=True)
class PlannedRequest:
    """A score request and, for each of its continuations, the index of the name it scores.

    Attributes:
        text_index: which prompt text the request belongs to.
        request: the engine request.
        name_indices: ``name_indices[j]`` is the name scored by ``request.continuations[j]``.
        split: True for a pair that broke the contract and is scored as a full sequence.
    """

    text_index: int
    request: ScoreRequest
    name_indices: tuple[int, ...]
    split: bool = False


@dataclass
class BoundaryCounts:
    """What the encoder did, summed over its calls (written to the run record).

    Attributes:
        tail_texts: texts planned from their tail.
        full_texts: texts planned pair by pair in full (their tail did not align, or a
            verification failed).
        verified_pairs: pairs encoded in full to check the tail's result.
        verification_failures: calls whose check found a difference (planned in full).
    """

    tail_texts: int = 0
    full_texts: int = 0
    verified_pairs: int = 0
    verification_failures: int = 0


class BoundaryEncoder:
    """Encodes prompts and names with one tokenizer, keeping the token-boundary contract.

    Args:
        tokenizer: a Hugging Face tokenizer (fast tokenizers batch-encode in Rust).
        tails: check pairs on the texts' tails (False: encode every pair in full).
        verify_pairs: pairs per call encoded in full to check the tail's result.
        seed: seed of the verification draw.
    """

    def __init__(
        self, tokenizer: Any, tails: bool = True, verify_pairs: int = VERIFY_PAIRS, seed: int = 0
    ) -> None:
        self.tokenizer = tokenizer
        self.tails = tails
        self.verify_pairs = verify_pairs
        self._draw = random.Random(seed)
        probe_with = list(tokenizer("x")["input_ids"])
        probe_without = list(tokenizer("x", add_special_tokens=False)["input_ids"])
        # Special tokens a tokenizer appends after the text (EOS for some) would sit between the
        # prompt and the name; they are cut so that the prefix ends where the text ends.
        start = _find(probe_with, probe_without)
        self._trailing = len(probe_with) - start - len(probe_without) if start >= 0 else 0
        self.mismatched_pairs = 0
        self.counts = BoundaryCounts()

    def _encode(self, texts: list[str], special: bool = True) -> list[list[int]]:
        backend = getattr(self.tokenizer, "backend_tokenizer", None)
        if backend is not None and hasattr(backend, "encode_batch_fast"):
            # The Rust tokenizer directly: the same ids as tokenizer(texts) (special tokens
            # included), in parallel and without building offsets or Python encodings.
            encoded = backend.encode_batch_fast(texts, add_special_tokens=special)
            ids = [e.ids for e in encoded]
        else:
            ids = self.tokenizer(texts, add_special_tokens=special)["input_ids"]
        if self._trailing and special:
            return [row[: len(row) - self._trailing] for row in ids]
        return [list(row) for row in ids]

    def plan(self, texts: Sequence[str], names: Sequence[str]) -> list[PlannedRequest]:
        """One request per text holding every name, plus one per pair that breaks the contract.

        Args:
            texts: prompt texts (for example "Cholera is related to the name:").
            names: the distinct names to score after each text (a space is inserted).
        """
        texts = list(texts)
        prefixes = self._encode(texts)
        if not self.tails:
            return self._plan_full(texts, names, prefixes, range(len(texts)))
        planned, full = self._plan_tails(texts, names, prefixes)
        if full:
            planned += self._plan_full(texts, names, prefixes, full)
        planned.sort(key=lambda p: p.text_index)
        return planned

    def _plan_tails(
        self, texts: list[str], names: Sequence[str], prefixes: list[list[int]]
    ) -> tuple[list[PlannedRequest], list[int]]:
        """Requests of the texts whose tail aligns, and the indices of the texts left to the
        full path."""
        tails = [_tail(text) for text in texts]
        distinct = sorted(set(tails))
        tail_ids = dict(zip(distinct, self._encode(distinct, special=False)))
        joined = self._encode([f"{w} {n}" for w in distinct for n in names], special=False)
        # Per tail: the names whose ids extend the tail's (shared), as one tuple of
        # continuations reused by every text with that tail; other names go to the full path.
        shared: dict[str, tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]] = {}
        broken: set[str] = set()
        for t, tail in enumerate(distinct):
            head = tail_ids[tail]
            conts: list[tuple[int, ...]] = []
            kept: list[int] = []
            for j in range(len(names)):
                ids = joined[t * len(names) + j]
                if len(ids) > len(head) and ids[: len(head)] == head:
                    conts.append(tuple(ids[len(head) :]))
                    kept.append(j)
            if len(kept) < len(names) or not head:
                broken.add(tail)
            shared[tail] = (tuple(conts), tuple(kept))
        planned: list[PlannedRequest] = []
        full: list[int] = []
        for i, (prefix, tail) in enumerate(zip(prefixes, tails)):
            head = tail_ids[tail]
            if (
                tail in broken
                or len(prefix) < len(head)
                or prefix[len(prefix) - len(head) :] != head
            ):
                full.append(i)
                continue
            continuations, indices = shared[tail]
            planned.append(PlannedRequest(i, ScoreRequest(tuple(prefix), continuations), indices))
        if planned and not self._verified(texts, names, planned):
            self.counts.verification_failures += 1
            return [], list(range(len(texts)))
        self.counts.tail_texts += len(planned)
        return planned, full

    def _verified(
        self, texts: list[str], names: Sequence[str], planned: list[PlannedRequest]
    ) -> bool:
        """Whether a random draw of the tail-planned pairs equals their full encoding."""
        draws = [
            (plan, self._draw.randrange(len(plan.name_indices)))
            for plan in self._draw.choices(planned, k=self.verify_pairs)
        ]
        full = self._encode([f"{texts[p.text_index]} {names[p.name_indices[k]]}" for p, k in draws])
        self.counts.verified_pairs += len(draws)
        return all(
            list(p.request.prefix) + list(p.request.continuations[k]) == ids
            for (p, k), ids in zip(draws, full)
        )

    def _plan_full(
        self,
        texts: list[str],
        names: Sequence[str],
        prefixes: list[list[int]],
        which: Sequence[int],
    ) -> list[PlannedRequest]:
        """Requests of the texts ``which``, every pair encoded in full and checked."""
        fulls = self._encode([f"{texts[i]} {n}" for i in which for n in names])
        planned: list[PlannedRequest] = []
        width = len(names)
        for k, i in enumerate(which):
            prefix = prefixes[i]
            shared: list[tuple[int, ...]] = []
            shared_names: list[int] = []
            for j in range(width):
                full = fulls[k * width + j]
                if len(full) > len(prefix) and full[: len(prefix)] == prefix:
                    shared.append(tuple(full[len(prefix) :]))
                    shared_names.append(j)
                    continue
                self.mismatched_pairs += 1
                common = _common_prefix(prefix, full)
                if common == 0 or common == len(full):
                    raise ValueError(f"name {names[j]!r} after {texts[i]!r} has no scorable tokens")
                planned.append(
                    PlannedRequest(
                        i,
                        ScoreRequest(tuple(full[:common]), (tuple(full[common:]),)),
                        (j,),
                        split=True,
                    )
                )
            if shared:
                planned.append(
                    PlannedRequest(
                        i, ScoreRequest(tuple(prefix), tuple(shared)), tuple(shared_names)
                    )
                )
        self.counts.full_texts += len(which)
        return planned


def _tail(text: str) -> str:
    """The last :data:`TAIL_WORDS` words of ``text`` with the space before them (the whole text
    when it has no more words than that)."""
    cut = len(text)
    for _ in range(TAIL_WORDS):
        cut = text.rfind(" ", 0, cut)
        if cut <= 0:
            return text
    return text[cut:]


def _find(haystack: list[int], needle: list[int]) -> int:
    for start in range(len(haystack) - len(needle) + 1):
        if haystack[start : start + len(needle)] == needle:
            return start
    return -1


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
