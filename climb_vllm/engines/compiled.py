"""The decoder's layers compiled with ``torch.compile`` for the scoring passes.

A scoring pass in eager mode runs each layer's elementwise work (the RMS norms with their
float32 casts, the rotary embedding, SiLU, the residual adds) as separate kernels around the
matrix products; on an H100 that work took about a third of the tree scorer's device time
(PERFORMANCE.md, "Where the time goes"). Compiling a layer fuses it into a few kernels, and
leaves the matrix products and attention to the same library kernels as before.

Why layers and not the whole model: every layer of a decoder runs the same code, so one
compiled graph serves them all (the weights are its inputs), which keeps the first call's
compile time to one layer's. The layers are compiled only while a scoring pass runs
(:meth:`CompiledLayers.active`): generation keeps the eager layers, whose key-value cache
would make each layer a graph of its own.

The passes have a different number of rows and columns each time, so the graph is compiled
with dynamic shapes once instead of once per shape.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from climb_vllm.core.errors import UserError


class CompiledLayers:
    """A model's decoder layers with compiled forwards, swapped in on demand.

    Args:
        model: a transformers causal LM whose decoder (``get_decoder()``) holds its layers in a
            ``layers`` list, as Llama, Gemma, Mistral and Qwen do.

    Raises:
        UserError: the model's decoder has no ``layers`` list to compile.
    """

    def __init__(self, model: Any) -> None:
        import torch

        decoder = model.get_decoder() if hasattr(model, "get_decoder") else None
        layers = getattr(decoder, "layers", None)
        if not isinstance(layers, torch.nn.ModuleList) or len(layers) == 0:
            raise UserError(
                f"--compile needs a decoder with a list of layers; {type(model).__name__} has "
                "none.",
                "run without --compile (the eager layers give the same log-probs).",
            )
        self.layers: list[Any] = list(layers)
        # torch.compile is lazy: nothing compiles until the first pass.
        self._forwards = [torch.compile(layer.forward, dynamic=True) for layer in self.layers]
        #: seconds of the first compiled pass (the compile included); None until it ran
        self.first_pass_seconds: float | None = None

    @contextmanager
    def active(self) -> Iterator[None]:
        """Within this block the layers run their compiled forwards; after it, the eager ones."""
        for layer, forward in zip(self.layers, self._forwards):
            layer.forward = forward  # an instance attribute hides the class's method
        start = time.perf_counter()
        try:
            yield
        except Exception as exc:
            # The compile runs inside the first pass: its failures (no C++ compiler for the
            # CPU backend, an operator the compiler cannot trace) come from torch's compiler
            # packages and are the user's to route around, unlike a failure of the pass itself.
            if type(exc).__module__.startswith(("torch._dynamo", "torch._inductor")):
                raise UserError(
                    f"Compiling the decoder layers failed ({type(exc).__name__}: "
                    f"{str(exc).splitlines()[0][:200] if str(exc) else ''}).",
                    "run without --compile (the eager layers give the same log-probs); on a "
                    "CPU, torch.compile also needs a C++ compiler (gcc or clang).",
                ) from exc
            raise
        finally:
            for layer in self.layers:
                vars(layer).pop("forward", None)
            if self.first_pass_seconds is None:
                self.first_pass_seconds = time.perf_counter() - start
