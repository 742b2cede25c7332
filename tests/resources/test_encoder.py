"""The encoder: its bfloat16 copy gives the autocast vectors, and leaves the float32 model."""

from __future__ import annotations

import numpy as np


def test_bfloat16_weights_cast_once_give_the_autocast_vectors_bit_for_bit(encoder) -> None:  # type: ignore[no-untyped-def]
    import torch

    texts = ["Essential (primary) hypertension", "Type 2 diabetes mellitus without complications"]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = encoder.model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    expected = expected / np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_array_equal(encoder.encode(texts, bfloat16=True), expected)
    # The float32 model is untouched: float32 vectors are not bfloat16 ones.
    assert encoder.model[0].auto_model.encoder.layer[0].output.dense.weight.dtype == torch.float32
    assert not np.array_equal(encoder.encode(texts), expected)
