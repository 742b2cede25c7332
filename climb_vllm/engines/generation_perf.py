"""``climb-vllm bench --generation N``: in-process generation, N requests decoded together
against the same requests one at a time, in one run (a ratio, not an absolute target)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from climb_vllm.engines.base import GenerateRequest

#: Clinical prompts of several lengths (the rows of a batch are padded to the longest).
PROMPTS = (
    "Patient with chest pain radiating to the left arm. Diagnosis:",
    "A 67-year-old woman with fever, productive cough and right lower lobe crackles. The most "
    "likely diagnosis is",
    "Question: To whom does 'she' refer in the following text: 'The nurse told the doctor that "
    "she was late'?\n\nAnswer:",
)


def generation_bench(
    model: Path | None, requests: int, max_tokens: int = 48, device: str = "auto"
) -> dict[str, Any]:
    """Seconds to sample ``requests`` answers of ``max_tokens`` tokens (temperature 0.8, top-p
    0.9) in one call, and the same requests one call each.

    Args:
        model: the model folder (None: build the tiny demo model now).
        requests: answers to sample.
        max_tokens: new tokens per answer (the engine stops early at an end token).
        device: "auto", "cpu" or "cuda".
    """
    import tempfile

    from climb_vllm.engines.local import LocalEngine

    with tempfile.TemporaryDirectory() as tmp:
        if model is None:
            from climb_vllm.models.demo_model import build_demo_model

            model = build_demo_model(Path(tmp) / "tiny")
        engine = LocalEngine(str(model), device=device)
        chosen = [
            GenerateRequest(
                prompt=PROMPTS[i % len(PROMPTS)],
                seed=i,
                temperature=0.8,
                top_p=0.9,
                max_tokens=max_tokens,
            )
            for i in range(requests)
        ]
        engine.generate(chosen[:1])  # warm-up
        start = time.perf_counter()
        together = engine.generate(chosen)
        batched = time.perf_counter() - start
        start = time.perf_counter()
        alone = [engine.generate([request])[0] for request in chosen]
        single = time.perf_counter() - start
    tokens = sum(sum(g.completion_tokens) for g in together)
    return {
        "model": str(model),
        "requests": requests,
        "max_tokens": max_tokens,
        "new_tokens": tokens,
        "batched_seconds": batched,
        "one_at_a_time_seconds": single,
        "batched_tokens_per_second": tokens / batched,
        "speedup_batched_vs_one_at_a_time": single / batched,
        "same_samples_alone_and_batched": together == alone,
    }
