"""The output head (lm_head) run apart from the decoder, at the positions a scorer reads.

The tree scorers read a few positions of each row, so they run the decoder alone and the head
and the log-softmax only at those positions: with a large vocabulary (Gemma's 262,144 tokens)
the head at every position would not fit in memory. :func:`split_matches` checks once per
model that decoder + head reproduces the model's own logits, since an architecture that
post-processes its logits in a way this module does not know would give wrong numbers.
"""

from __future__ import annotations

from typing import Any


def at_least_fp32(logits: Any) -> Any:
    """Logits in fp32, or in fp64 when the model runs in fp64 (for rounding checks)."""
    import torch

    return logits.to(torch.promote_types(logits.dtype, torch.float32))


def head_logits(model: Any, hidden: Any) -> Any:
    """The model's logits at ``hidden`` (rows of the decoder's last hidden state), with
    Gemma-style final soft-capping where the config asks for it."""
    logits = model.get_output_embeddings()(hidden)
    cap = getattr(model.config, "final_logit_softcapping", None)
    if cap:
        logits = (logits / cap).tanh() * cap
    return logits


def split_matches(model: Any, probe_ids: list[int], device: Any) -> bool:
    """Whether decoder + output head reproduces ``model``'s own logits on ``probe_ids``.

    Args:
        model: a transformers causal LM.
        probe_ids: the token ids of a short text.
        device: where the model is.
    """
    import torch

    try:
        decoder = model.get_decoder()
        head = model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return False
    if decoder is None or head is None:
        return False
    with torch.inference_mode():
        probe = torch.tensor([probe_ids]).to(device)
        full = model(input_ids=probe).logits.float()
        split = head_logits(model, decoder(input_ids=probe).last_hidden_state).float()
    return bool(torch.allclose(full, split, atol=1e-3, rtol=1e-3))


class HeadLogprobs:
    """log p(target) from a model's output head at chosen rows of the decoder's output.

    On the CPU in fp32 the logits go into one buffer kept across passes and the normaliser is
    taken in place: with a large vocabulary the logits of a pass are hundreds of MB, and
    allocating them afresh twice per pass (logits, then log-softmax) costs a page fault per
    4 KiB, a third of a pass's time (measured in PERFORMANCE.md "Names per group"). The values
    equal log_softmax's to float rounding.

    Args:
        model: the causal LM; its head is read at each call, so a later cast (the bench's
            float32 reference) is followed.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self._buffer: Any = None  # the head's logits, reused across passes (CPU, fp32)

    def __call__(self, hidden: Any, where: Any, targets: Any) -> Any:
        """log p(``targets[i]``) at ``hidden``'s row ``where[i]``, for every i (fp32 or fp64).

        Args:
            hidden: (rows, hidden size) decoder outputs at the rows that are read.
            where: for each target, the row of ``hidden`` it is read at.
            targets: the token ids whose log-probabilities are wanted.
        """
        import torch

        head = self.model.get_output_embeddings()
        weight: Any = getattr(head, "weight", None)
        plain = (
            isinstance(head, torch.nn.Linear)
            and head.bias is None
            and weight is not None
            and weight.dtype == torch.float32
            and weight.device.type == "cpu"
            and hidden.dtype == torch.float32
        )
        if not plain:
            logprobs = torch.log_softmax(at_least_fp32(head_logits(self.model, hidden)), dim=-1)
            return logprobs[where, targets]
        rows, vocab = hidden.shape[0], weight.shape[0]
        if self._buffer is None or self._buffer.shape[0] < rows:
            self._buffer = torch.empty((rows, vocab), dtype=torch.float32)
        logits = self._buffer[:rows]
        torch.mm(hidden, weight.t(), out=logits)
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        if cap:
            logits.div_(cap).tanh_().mul_(cap)
        chosen = logits[where, targets]  # a copy, taken before the buffer is overwritten
        top = logits.max(dim=-1, keepdim=True).values
        total = logits.sub_(top).exp_().sum(dim=-1).log_()
        return chosen - (top.squeeze(1) + total)[where]
