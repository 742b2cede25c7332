"""Where a scoring call's time goes: one call under the torch profiler, its operators' own
(self) time grouped into matrix products, attention and everything else.

On a GPU the times are device times (the kernels each operator launched), so the shares say
how much of the device's work is the dense products that the FLOP count credits and how much is
the elementwise work around them (norms, rotary embeddings, activations, casts), which counts
no FLOPs but takes time. On the CPU they are the operators' own CPU times.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: Operators that are dense matrix products (their time is what the FLOP count covers).
MATMUL_OPS = frozenset(
    {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_scaled_mm"}
)
#: Operators shown by name in :func:`profile_call`'s ``top_ops``.
TOP = 8


def _kind(name: str) -> str:
    if name in MATMUL_OPS:
        return "matmul"
    if "attention" in name:
        return "attention"
    return "other"


def profile_call(call: Callable[[], object], device_type: str) -> dict[str, Any]:
    """Run ``call`` once under the torch profiler and share its operators' own time by kind.

    Args:
        call: the work to profile (it should wait for the device before returning, so that its
            kernels fall inside the profile).
        device_type: "cuda" to read device (kernel) times, anything else for CPU times.

    Returns:
        ``seconds`` (the call's wall time under the profiler), ``matmul_seconds``,
        ``matmul_share``, ``attention_share``, ``other_share`` (shares of the summed own time of
        ``aten::`` operators, which add up to 1) and ``top_ops`` (the largest operators with
        their shares, as text).
    """
    from torch.profiler import ProfilerActivity, profile

    gpu = device_type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
    with profile(activities=activities) as prof:
        start = time.perf_counter()
        call()
        seconds = time.perf_counter() - start
    # Only operators: kernels are listed too, and their time is already their operator's.
    own: dict[str, float] = {}
    for event in prof.key_averages():
        if event.key.startswith("aten::"):
            micros = event.self_device_time_total if gpu else event.self_cpu_time_total
            own[event.key] = own.get(event.key, 0.0) + float(micros) / 1e6
    total = sum(own.values()) or 1.0
    by_kind = {"matmul": 0.0, "attention": 0.0, "other": 0.0}
    for name, value in own.items():
        by_kind[_kind(name)] += value
    ranked = sorted(own.items(), key=lambda item: -item[1])[:TOP]
    return {
        "seconds": seconds,
        "matmul_seconds": by_kind["matmul"],
        "matmul_share": by_kind["matmul"] / total,
        "attention_share": by_kind["attention"] / total,
        "other_share": by_kind["other"] / total,
        "top_ops": ", ".join(f"{name} {value / total:.1%}" for name, value in ranked),
    }
