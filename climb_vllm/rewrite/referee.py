"""A learned referee for pronouns near a third party: keep the word (someone else's) or edit it
(the patient's), from a fine-tuned sentence encoder's reading of its context.

The referent rules (:mod:`~climb_vllm.rewrite.referents`) read grammar and word
lists; on excerpts they were not written from they choose barely better than editing every
pronoun (NOTES.md). Where another person of the patient's sex is named before a pronoun
in its sentence or the three sentences before, and no firm rule decides it, the rewrite asks this
referee instead. all-MiniLM-L6-v2 (the encoder the mapper uses), with its top
:data:`TUNED_LAYERS` layers fine-tuned on the labelled third-party excerpts, reads the pronoun's
sentence and up to two before it (:func:`window`: back to the nearest that names someone, else
that speaks of the patient, skipping none between); the last hidden state at the pronoun
(averaged over its word pieces) beside the mean over the window's tokens goes through a
logistic layer to give the probability that the pronoun is someone else's. The weights
(``data/referee/referee.npz``: the tuned layers as differences from the packaged encoder's,
and the logistic layer) are written by :mod:`~climb_vllm.rewrite.write_referee`;
their SOURCE.md says from which sets.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from climb_vllm.core.errors import UserError
from climb_vllm.resources.data import packaged
from climb_vllm.resources.encoder import Encoder, encoder_fingerprint
from climb_vllm.rewrite.mentions import sentence_bounds, words
from climb_vllm.rewrite.referent_words import is_person_word

#: Where the fitted weights live in the package.
WEIGHTS = ("referee", "referee.npz")
#: The encoder's top layers that fine-tuning changes (the lower ones stay the packaged ones).
TUNED_LAYERS = 6
#: Word pieces the encoder reads at most (a window is cut at its end past this).
MAX_TOKENS = 256
#: Characters read at most before and after the word: a very long sentence is cut there, so
#: that the word always lies within :data:`MAX_TOKENS` (the labelled excerpts are far shorter).
BEFORE, AFTER = 700, 300
#: A decision whose probability lies within this distance of 0.5 is marked uncertain.
UNCERTAIN_WITHIN = 0.3

#: One word to read: its text, and where the word starts and ends in it.
Item = tuple[str, int, int]


class Judge(Protocol):
    """What the rewrite asks in a referee's place: the :class:`Referee`, or the labels while
    it is tuned."""

    def decide(
        self, text: str, start: int, end: int, since: int | None = None
    ) -> tuple[bool, bool]:
        """(keep, uncertain) for the word at ``text[start:end]``, read from ``since`` when that
        is before its window."""
        ...

    def third_party_probability(
        self, text: str, start: int, end: int, since: int | None = None
    ) -> float:
        """The probability that the word at ``text[start:end]`` is someone else's."""
        ...


#: Sentences before the pronoun's that the referee may read.
LOOKBACK = 2
_TITLE = re.compile(r"\b(?:Dr|Mr|Ms|Mrs|Miss)\.?\s+[A-Z]")
_MENTION = re.compile(r"\b(?:he|him|his|himself|she|her|hers|herself|patient|pt)\b", re.I)


def names_someone(text: str, lo: int, hi: int) -> bool:
    """Whether ``text[lo:hi]`` names someone by role, kinship or title ("the nurse", "his
    son", "Dr. Lee")."""
    return bool(_TITLE.search(text, lo, hi)) or any(
        is_person_word(w.key) for w in words(text, lo, hi)
    )


def speaks_of_someone(text: str, lo: int, hi: int) -> bool:
    """Whether ``text[lo:hi]`` names someone or speaks of a person by a sex pronoun or as "the
    patient" (not "It came back high.")."""
    return bool(_MENTION.search(text, lo, hi)) or names_someone(text, lo, hi)


def window(text: str, start: int) -> tuple[int, int]:
    """(lo, hi) of what the referee reads for the pronoun at ``start`` in ``text``: its sentence,
    from the nearest of the :data:`LOOKBACK` sentences before it that names someone, else from
    the nearest that speaks of the patient (a pronoun, "patient"), else alone; at most
    :data:`BEFORE` characters before the pronoun and :data:`AFTER` after it.

    Sentences that speak of no one ("Vital signs are stable.") are read only between two that
    do: with the sentence before always read, such a sentence cost the referee 5-7 points of
    accuracy inside a longer note (NOTES.md, "Inside a longer note")."""
    lo, hi = sentence_bounds(text, start)
    earlier = []
    first = lo
    for _ in range(LOOKBACK):
        if first == 0:
            break
        first, _ = sentence_bounds(text, max(0, first - 2))
        earlier.append(first)
    named = [k for k in earlier if names_someone(text, k, lo)]
    spoken = [k for k in earlier if _MENTION.search(text, k, lo)]
    lo = (named or spoken or [lo])[0]
    return max(lo, start - BEFORE), min(hi, start + AFTER)


def reading(text: str, start: int, end: int, since: int | None = None) -> Item:
    """What the referee reads for the word at ``text[start:end]``: its :func:`window`, or from
    ``since`` when that is earlier (at most :data:`BEFORE` characters before the word), with
    the word's place in it."""
    lo, hi = window(text, start)
    if since is not None:
        lo = min(lo, max(since, start - BEFORE))
    return text[lo:hi], start - lo, end - lo


def tokenize(
    tokenizer: Any, items: Sequence[Item], whole: bool = False
) -> list[tuple[list[int], list[int]]]:
    """(word-piece ids of the window, positions of the word's pieces) per item.

    Args:
        tokenizer: the encoder's tokenizer (a fast one: it gives character offsets).
        items: ``(text, start, end)``, the word being ``text[start:end]``.
        whole: read each text whole (it is already what is to be read), not its
            :func:`window`.
    """
    rows = []
    for text, start, end in items:
        lo, hi = (0, len(text)) if whole else window(text, start)
        encoded = tokenizer(
            text[lo:hi], return_offsets_mapping=True, truncation=True, max_length=MAX_TOKENS
        )
        s, e = start - lo, end - lo
        offsets = encoded["offset_mapping"]
        at = [k for k, (a, b) in enumerate(offsets) if b > a and a < e and b > s]
        # Only when 700 characters make over 256 pieces: the last piece read stands in.
        rows.append((list(encoded["input_ids"]), at or [len(offsets) - 2]))
    return rows


def pooled(transformer: Any, rows: Sequence[tuple[list[int], list[int]]]) -> Any:
    """The referee's features as a torch tensor, one row per tokenized item (:func:`tokenize`):
    the last hidden state at the word (mean over its pieces) beside the mean over the window's
    pieces (the [CLS] and [SEP] markers left out), 2 x 384 values. Differentiable: fine-tuning
    and reading share it."""
    import torch

    width = max(len(ids) for ids, _ in rows)
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    mask = torch.zeros(len(rows), width, dtype=torch.long)
    word = torch.zeros(len(rows), width)
    for i, (pieces, at) in enumerate(rows):
        ids[i, : len(pieces)] = torch.tensor(pieces)
        mask[i, : len(pieces)] = 1
        word[i, at] = 1.0
    hidden = transformer(input_ids=ids, attention_mask=mask).last_hidden_state
    inner = mask.float()
    inner[:, 0] = 0.0
    inner[torch.arange(len(rows)), mask.sum(1) - 1] = 0.0
    mean = (hidden * inner[..., None]).sum(1) / inner.sum(1, keepdim=True)
    at_word = (hidden * word[..., None]).sum(1) / word.sum(1, keepdim=True)
    return torch.cat([at_word, mean], 1)


def tuned_names(transformer: Any) -> list[str]:
    """Names of the parameters fine-tuning changes: those of the top :data:`TUNED_LAYERS`."""
    first = len(transformer.encoder.layer) - TUNED_LAYERS
    prefixes = tuple(f"encoder.layer.{k}." for k in range(first, first + TUNED_LAYERS))
    return [name for name, _ in transformer.named_parameters() if name.startswith(prefixes)]


class Referee:
    """The fitted referee.

    Args:
        encoder: the packaged sentence encoder (loaded when None; never changed: the referee
            tunes a copy).
        path: the weights (the packaged ones when None).
    """

    def __init__(self, encoder: Encoder | None = None, path: Path | None = None) -> None:
        import torch

        stored = np.load(path or packaged(*WEIGHTS))
        layers = [key for key in stored.files if key.startswith("delta/")]
        if str(stored["encoder"]) != encoder_fingerprint() or not layers:
            raise UserError(
                "The referee's weights were fitted on another encoder, or are in an old format.",
                "refit them: python -m climb_vllm.rewrite.write_referee",
            )
        source = encoder or Encoder(device="cpu")
        self.tokenizer: Any = source.model.tokenizer
        # The sentence-transformers wrapper's first module holds the Hugging Face model.
        hugging_face: Any = source.model[0].auto_model
        self.transformer: Any = copy.deepcopy(hugging_face).cpu().eval()
        parameters = dict(self.transformer.named_parameters())
        with torch.no_grad():
            for name in tuned_names(self.transformer):
                delta = torch.from_numpy(stored[f"delta/{name}"].astype(np.float32))
                parameters[name] += delta
        self.coef = stored["coef"].astype(np.float64)
        self.intercept = float(stored["intercept"])
        self._cache: dict[Item, float] = {}
        #: Words asked about since the last :meth:`clear` (cached answers included).
        self.asked = 0

    def clear(self) -> None:
        """Forget the cached answers and the count of words asked about."""
        self._cache.clear()
        self.asked = 0

    def probabilities(self, items: Sequence[Item], whole: bool = False) -> list[float]:
        """The probability that each word is someone else's (no cache, no count); ``whole``:
        each text is read whole, not its :func:`window`."""
        import torch

        with torch.no_grad():
            rows = tokenize(self.tokenizer, items, whole)
            x = pooled(self.transformer, rows).double().numpy()
        return [float(p) for p in 1.0 / (1.0 + np.exp(-(x @ self.coef + self.intercept)))]

    def third_party_probability(
        self, text: str, start: int, end: int, since: int | None = None
    ) -> float:
        """The probability that the word at ``text[start:end]`` refers to someone other than
        the patient, read from its :func:`window`, or from ``since`` when that is earlier."""
        self.asked += 1
        key = reading(text, start, end, since)
        if key not in self._cache:
            self._cache[key] = self.probabilities([key], whole=True)[0]
        return self._cache[key]

    def decide(
        self, text: str, start: int, end: int, since: int | None = None
    ) -> tuple[bool, bool]:
        """(keep, uncertain) for the word at ``text[start:end]`` (read from ``since`` when
        that is before its window): keep when it is more likely someone else's; uncertain
        within :data:`UNCERTAIN_WITHIN` of even odds."""
        p = self.third_party_probability(text, start, end, since)
        return p > 0.5, abs(p - 0.5) < UNCERTAIN_WITHIN


@functools.lru_cache(maxsize=1)
def default_referee() -> Referee:
    """The packaged referee, loaded once per process on first use."""
    return Referee()


def describe(path: Path | None = None) -> dict[str, Any]:
    """What the weights file says of itself (the sets fitted on, their pronoun counts, the
    fine-tuning's settings)."""
    stored = np.load(path or packaged(*WEIGHTS))
    kept = [key for key in stored.files if key != "coef" and not key.startswith("delta/")]
    return {key: stored[key].tolist() for key in kept}
