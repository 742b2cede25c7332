"""A learned referee for pronouns near a third party: keep the word (someone else's) or edit it
(the patient's), from the sentence encoder's reading of its context.

The referent rules (:mod:`~climb_vllm.benchmarks.extrinsic.referents`) read grammar and word
lists; on excerpts they were not written from they choose barely better than editing every
pronoun (PERFORMANCE.md). Where another person of the patient's sex comes before a pronoun in
its sentence and no firm rule decides it, the rewrite asks this referee instead:
all-MiniLM-L6-v2 (the encoder the mapper already uses) reads the pronoun's sentence and the one
before it; the features are the encoder's last hidden state at the pronoun (averaged over its
word pieces) beside the mean over the window's tokens, and an L2-regularised logistic
regression turns them into the probability that the pronoun is someone else's. Its weights
(``data/referee/referee.npz``) were fitted on the labelled third-party excerpts by
:mod:`~climb_vllm.benchmarks.extrinsic.write_referee`; their SOURCE.md says which.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from climb_vllm.benchmarks.extrinsic.encoder import Encoder, encoder_fingerprint
from climb_vllm.benchmarks.extrinsic.mentions import sentence_bounds
from climb_vllm.core.errors import UserError
from climb_vllm.resources.data import packaged

#: Where the fitted weights live in the package.
WEIGHTS = ("referee", "referee.npz")
#: Word pieces the encoder reads at most (a window is cut at its end past this).
MAX_TOKENS = 256
#: Characters read at most before and after the word: a very long sentence is cut there, so
#: that the word always lies within :data:`MAX_TOKENS` (the labelled excerpts are far shorter).
BEFORE, AFTER = 700, 300
#: A decision whose probability lies within this distance of 0.5 is marked uncertain.
UNCERTAIN_WITHIN = 0.3


def window(text: str, start: int) -> tuple[int, int]:
    """(lo, hi) of the pronoun at ``start``'s sentence and the one before it in ``text``, at
    most :data:`BEFORE` characters before it and :data:`AFTER` after: what the referee reads
    (a note's excerpt in training was one or two sentences)."""
    lo, hi = sentence_bounds(text, start)
    if lo > 0:
        lo, _ = sentence_bounds(text, max(0, lo - 2))
    return max(lo, start - BEFORE), min(hi, start + AFTER)


def features(encoder: Encoder, items: Sequence[tuple[str, int, int]]) -> npt.NDArray[np.float32]:
    """One row per ``(text, start, end)``: the encoder's last hidden state at the word at
    ``text[start:end]`` (averaged over its word pieces) beside the mean over the window's
    tokens (:func:`window`), 2 x 384 values."""
    import torch

    # The sentence-transformers wrapper's first module holds the Hugging Face model.
    transformer: Any = encoder.model[0].auto_model
    tokenizer: Any = encoder.model.tokenizer
    rows = []
    for text, start, end in items:
        lo, hi = window(text, start)
        piece = text[lo:hi]
        encoded = tokenizer(
            piece,
            return_offsets_mapping=True,
            return_tensors="pt",
            truncation=True,
            max_length=MAX_TOKENS,
        )
        offsets = encoded.pop("offset_mapping")[0].tolist()
        with torch.no_grad():
            hidden = transformer(**encoded.to(transformer.device)).last_hidden_state[0].cpu()
        s, e = start - lo, end - lo
        at = [k for k, (a, b) in enumerate(offsets) if b > a and a < e and b > s]
        if not at:
            # Only when 700 characters make over 256 pieces: the last piece read stands in.
            at = [len(offsets) - 2]
        rows.append(torch.cat([hidden[at].mean(0), hidden[1:-1].mean(0)]).numpy())
    return np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)


def fit_logistic(
    x: npt.NDArray[np.float32], y: npt.NDArray[np.bool_], c: float, steps: int = 50
) -> tuple[npt.NDArray[np.float64], float]:
    """(coefficients, intercept) of the logistic regression minimising
    ``0.5 * |w|^2 + c * sum(log-loss)`` (scikit-learn's ``C``; the intercept unpenalised), by
    Newton's method."""
    data = np.hstack([x.astype(np.float64), np.ones((x.shape[0], 1))])
    target = y.astype(np.float64)
    weights = np.zeros(data.shape[1])
    penalty = np.eye(data.shape[1]) / c
    penalty[-1, -1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(data @ weights)))
        gradient = data.T @ (p - target) + penalty @ weights
        hessian = (data * (p * (1 - p))[:, None]).T @ data + penalty
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if np.abs(step).max() < 1e-8:
            break
    return weights[:-1], float(weights[-1])


class Referee:
    """The fitted referee.

    Args:
        encoder: the sentence encoder (loaded when None).
        path: the weights (the packaged ones when None).
    """

    def __init__(self, encoder: Encoder | None = None, path: Path | None = None) -> None:
        self.encoder = encoder or Encoder(device="cpu")
        stored = np.load(path or packaged(*WEIGHTS))
        fingerprint = str(stored["encoder"])
        if fingerprint != encoder_fingerprint():
            raise UserError(
                "The referee's weights were fitted on another encoder's features.",
                "refit them: python -m climb_vllm.benchmarks.extrinsic.write_referee",
            )
        self.coef = stored["coef"].astype(np.float64)
        self.intercept = float(stored["intercept"])
        self._cache: dict[tuple[str, int, int], float] = {}
        #: Words asked about since the last :meth:`clear` (cached answers included).
        self.asked = 0

    def clear(self) -> None:
        """Forget the cached answers and the count of words asked about."""
        self._cache.clear()
        self.asked = 0

    def third_party_probability(self, text: str, start: int, end: int) -> float:
        """The probability that the word at ``text[start:end]`` refers to someone other than
        the patient."""
        self.asked += 1
        lo, hi = window(text, start)
        key = (text[lo:hi], start - lo, end - lo)
        if key not in self._cache:
            row = features(self.encoder, [(key[0], key[1], key[2])])[0]
            self._cache[key] = float(1.0 / (1.0 + np.exp(-(row @ self.coef + self.intercept))))
        return self._cache[key]

    def decide(self, text: str, start: int, end: int) -> tuple[bool, bool]:
        """(keep, uncertain) for the word at ``text[start:end]``: keep when it is more likely
        someone else's; uncertain within :data:`UNCERTAIN_WITHIN` of even odds."""
        p = self.third_party_probability(text, start, end)
        return p > 0.5, abs(p - 0.5) < UNCERTAIN_WITHIN


@functools.lru_cache(maxsize=1)
def default_referee() -> Referee:
    """The packaged referee, loaded once per process on first use."""
    return Referee()


def describe(path: Path | None = None) -> dict[str, Any]:
    """What the weights file says of itself (the sets fitted on, their pronoun counts, C)."""
    stored = np.load(path or packaged(*WEIGHTS))
    return {key: stored[key].tolist() for key in stored.files if key not in ("coef",)}
