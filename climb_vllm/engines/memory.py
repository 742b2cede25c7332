"""How many positions one forward pass may hold, from the memory there is.

A pass's memory is dominated by two terms: the decoder's transient activations, proportional
to positions x (hidden + intermediate size), and the output head's logits with their fp32
log-softmax, proportional to the rows the head runs at x the vocabulary. With a 262,144-token
vocabulary (Gemma 3) the head needs about 3 MB per row in fp32, so the fixed 8,192 positions of
earlier versions asked for 26 GB on the naive path. The budget here assumes the head runs at
every position (true of the naive scorer and of lm-eval's HFLM; the tree scorers run it at
fewer rows), so that no scorer sized by it runs out of memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Share of the free memory one pass may use by default (the rest: the records being written,
#: the tokenizer, the allocator's slack, other processes).
DEFAULT_SHARE = 0.5
#: Bounds of the automatic size. 8,192 was the fixed default; on 2 CPU cores larger passes are
#: slower (cache effects), on GPUs larger passes fill the device better.
CPU_CAP = 8192
GPU_CAP = 65536
FLOOR = 64


def free_bytes(device: str) -> int:
    """Memory available to a new allocation: the GPU's free memory, or on the CPU the smaller of
    the kernel's MemAvailable and what the cgroup limit leaves."""
    if device.startswith("cuda"):
        import torch

        free, _ = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    available = _meminfo_available()
    limit = _cgroup_left()
    return min(v for v in (available, limit) if v is not None) if (available or limit) else 4 << 30


def _meminfo_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _cgroup_left() -> int | None:
    """What a cgroup v2 memory limit leaves (None where there is no limit)."""
    base = Path("/sys/fs/cgroup")
    try:
        limit = (base / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return int(limit) - int((base / "memory.current").read_text().strip())
    except (OSError, ValueError):
        return None


def bytes_per_position(config: Any, element_bytes: int, width: int) -> int:
    """Peak bytes one position of a pass costs (see the module note).

    Args:
        config: the model's transformers config (hidden_size, intermediate_size, vocab_size,
            num_attention_heads).
        element_bytes: bytes per value of the model's dtype.
        width: the longest row (the attention mask and scores grow with it).
    """
    text = getattr(config, "text_config", None) or config
    hidden = int(getattr(text, "hidden_size", 4096))
    intermediate = int(getattr(text, "intermediate_size", 4 * hidden) or 4 * hidden)
    vocab = int(getattr(text, "vocab_size", 32000))
    heads = int(getattr(text, "num_attention_heads", 32))
    activations = (8 * hidden + 3 * intermediate) * element_bytes
    attention = width * (element_bytes + heads * 4)
    # logits in the model's dtype, their fp32 copy and the fp32 log-softmax
    head = vocab * (element_bytes + 8)
    return activations + attention + head


def positions_per_pass(
    config: Any,
    element_bytes: int,
    device: str,
    width: int = 512,
    share: float = DEFAULT_SHARE,
    free: int | None = None,
) -> int:
    """The positions one forward pass may hold: ``share`` of the free memory over
    :func:`bytes_per_position`, a multiple of 64 between :data:`FLOOR` and the device's cap.

    Args:
        config: the model's config.
        element_bytes: bytes per value of the model's dtype.
        device: "cpu" or "cuda[:n]".
        width: the longest row expected.
        share: share of the free memory a pass may use.
        free: free bytes (None: measured now, after the model is loaded).
    """
    budget = share * (free_bytes(device) if free is None else free)
    positions = int(budget // bytes_per_position(config, element_bytes, width))
    cap = GPU_CAP if device.startswith("cuda") else CPU_CAP
    return max(FLOOR, min(cap, positions // 64 * 64))
