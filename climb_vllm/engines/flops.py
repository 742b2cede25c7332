"""Achieved FLOP/s of a scoring pass and the device's dense bf16 peak, for ``bench``.

The count is the dense matrix products of a causal LM: two FLOPs per weight per position for
the decoder's layers, plus the output head at the rows where it runs (the tree scorer runs it
only where a continuation token is read). Attention's score products are not counted: at rows
of a few hundred positions they add a few per cent, so the fraction of peak is a lower bound.
"""

from __future__ import annotations

from typing import Any

#: Dense bf16 tensor-core peaks (TFLOP/s, no sparsity) from the vendors' data sheets, matched
#: against ``torch.cuda.get_device_name`` by substring, most specific first.
PEAK_BF16_TFLOPS: tuple[tuple[str, float], ...] = (
    ("H200", 989.0),
    ("H100 PCIe", 756.0),
    ("H100", 989.0),
    ("GH200", 989.0),
    ("B200", 2250.0),
    ("A100", 312.0),
    ("L40S", 362.0),
    ("L4", 121.0),
    ("A10G", 125.0),
    ("RTX 4090", 165.0),
)


def peak_tflops(device_name: str | None) -> float | None:
    """The device's dense bf16 peak from :data:`PEAK_BF16_TFLOPS` (None: not in the table;
    ``bench --peak-tflops`` gives it)."""
    if not device_name:
        return None
    for key, value in PEAK_BF16_TFLOPS:
        if key in device_name:
            return value
    return None


def layer_weights(model: Any) -> int:
    """Weights that every position multiplies by: all parameters but the input embedding and
    the output head (which may be the same tensor)."""
    skip = {id(p) for p in model.get_input_embeddings().parameters()}
    skip |= {id(p) for p in model.get_output_embeddings().parameters()}
    return sum(p.numel() for p in model.parameters() if id(p) not in skip)


def forward_flops(model: Any, positions: int, head_rows: int) -> float:
    """Dense FLOPs of passes over ``positions`` positions with the head run at ``head_rows``.

    Args:
        model: the transformers model.
        positions: forward positions (padding excluded).
        head_rows: rows at which the output head ran.
    """
    head = model.get_output_embeddings().weight
    return float(2.0 * layer_weights(model) * positions + 2.0 * head.numel() * head_rows)
