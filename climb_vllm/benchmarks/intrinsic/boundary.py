"""Turning (prompt text, names) into score requests under the token-boundary contract.

The contract (see :mod:`climb_vllm.engines.base`): prefix ids = ``tok(T)`` with special tokens
as the tokenizer adds them; continuation ids = ``tok(T + " " + name)[len(prefix):]``. Every pair
is checked: when ``tok(T)`` is not a prefix of ``tok(T + " " + name)`` (a merge across the
boundary), that pair gets its own request, split at the longest common prefix, so it is scored
as the full sequence it really is rather than with a continuation that the model never sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from climb_vllm.engines.base import ScoreRequest


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


class BoundaryEncoder:
    """Encodes prompts and names with one tokenizer, keeping the token-boundary contract.

    Args:
        tokenizer: a Hugging Face tokenizer (fast tokenizers batch-encode in Rust).
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        probe_with = list(tokenizer("x")["input_ids"])
        probe_without = list(tokenizer("x", add_special_tokens=False)["input_ids"])
        # Special tokens a tokenizer appends after the text (EOS for some) would sit between the
        # prompt and the name; they are cut so that the prefix ends where the text ends.
        start = _find(probe_with, probe_without)
        self._trailing = len(probe_with) - start - len(probe_without) if start >= 0 else 0
        self.mismatched_pairs = 0

    def _encode(self, texts: list[str]) -> list[list[int]]:
        backend = getattr(self.tokenizer, "backend_tokenizer", None)
        if backend is not None and hasattr(backend, "encode_batch_fast"):
            # The Rust tokenizer directly: the same ids as tokenizer(texts) (special tokens
            # included), in parallel and without building offsets or Python encodings.
            ids = [e.ids for e in backend.encode_batch_fast(texts, add_special_tokens=True)]
        else:
            ids = self.tokenizer(texts)["input_ids"]
        if self._trailing:
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
        fulls = self._encode([f"{t} {n}" for t in texts for n in names])
        planned: list[PlannedRequest] = []
        width = len(names)
        for i, prefix in enumerate(prefixes):
            shared: list[tuple[int, ...]] = []
            shared_names: list[int] = []
            for j in range(width):
                full = fulls[i * width + j]
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
        return planned


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
