"""Batched sampling for the in-process engine, with one random stream per request.

Decoding one request at a time reads every weight once per new token for a single row; on a
CPU that read, not the arithmetic, sets the pace (a 1 GB fp32 model: about a tenth of a second
per token whatever the row count). So requests are decoded together: prompts left-padded into
one batch, a key-value cache, the output head at the last position only.

Each request keeps its own ``torch.Generator`` seeded with its seed, and its tokens are drawn
from that generator alone (inverse-CDF sampling with one uniform draw per sample and step), so
a request's samples do not depend on which other requests share its batch, or on the batch
size. Filtering follows the usual order: temperature, top-k, then top-p (nucleus) over the
sorted probabilities.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Settings:
    """How one request samples.

    Attributes:
        greedy: take the most probable token (temperature and nucleus ignored).
        temperature: logits are divided by it (> 0).
        top_p: nucleus mass kept (1: all).
        top_k: most probable tokens kept (0: all).
    """

    greedy: bool
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0


@dataclass(frozen=True)
class Row:
    """One sequence to decode: a sample of a request.

    Attributes:
        prompt: prompt token ids.
        settings: sampling settings of its request.
        stream: index of its request's random stream.
        max_tokens: the most new tokens.
    """

    prompt: tuple[int, ...]
    settings: Settings
    stream: int
    max_tokens: int


def plan_batches(rows: Sequence[Row], batch_tokens: int, max_rows: int = 64) -> list[list[int]]:
    """Row indices grouped into batches: rows sorted by prompt length (little padding), each
    batch holding at most ``max_rows`` rows and ``batch_tokens`` cached positions."""
    order = sorted(range(len(rows)), key=lambda i: (len(rows[i].prompt), i))
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        span = len(rows[i].prompt) + rows[i].max_tokens
        longest = max([span, *(len(rows[j].prompt) + rows[j].max_tokens for j in current)])
        if current and (len(current) >= max_rows or (len(current) + 1) * longest > batch_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


#: Candidates sorted first when a nucleus or top-k filter applies; the full vocabulary is sorted
#: only when these hold less than a row's nucleus (sorting 262k logits per row and step would
#: cost more than the model's own step on a CPU).
CANDIDATES = 1024


def _head_of(probs: Any, settings: Sequence[Settings]) -> tuple[Any, Any]:
    """Probabilities in descending order with their token ids: the whole vocabulary, or only
    the head that every row's filter can keep."""

    filtered = all(s.top_p < 1.0 or s.top_k > 0 for s in settings)
    size = probs.shape[1]
    wanted = max([CANDIDATES, *(s.top_k for s in settings)])
    if filtered and wanted < size:
        ordered, tokens = probs.topk(wanted, dim=-1)
        mass = ordered.sum(dim=-1)
        enough = all(
            (0 < s.top_k <= wanted) or float(m) >= s.top_p for s, m in zip(settings, mass.tolist())
        )
        if enough:
            return ordered, tokens
    result: tuple[Any, Any] = probs.sort(dim=-1, descending=True)
    return result


def _choose(logits: Any, rows: Sequence[Row], streams: Sequence[Any]) -> Any:
    """The next token of every row from its fp32 logits (one row per line)."""
    import torch

    chosen = logits.argmax(dim=-1)
    sampled = [r for r, row in enumerate(rows) if not row.settings.greedy]
    if not sampled:
        return chosen
    index = torch.tensor(sampled, device=logits.device)
    scale = torch.tensor(
        [rows[r].settings.temperature for r in sampled], device=logits.device
    ).unsqueeze(1)
    probs = torch.softmax(logits.index_select(0, index) / scale, dim=-1)
    ordered, tokens = _head_of(probs, [rows[r].settings for r in sampled])
    keep = torch.ones_like(ordered, dtype=torch.bool)
    for k, r in enumerate(sampled):
        top_k = rows[r].settings.top_k
        if top_k > 0:
            keep[k, top_k:] = False
    # Nucleus: keep the smallest head whose mass reaches top_p (the first token always).
    top_p = torch.tensor([rows[r].settings.top_p for r in sampled], device=logits.device)
    before = ordered.cumsum(dim=-1) - ordered
    keep &= before < top_p.unsqueeze(1)
    keep[:, 0] = True
    mass = torch.where(keep, ordered, torch.zeros_like(ordered)).cumsum(dim=-1)
    draws = torch.stack(
        [torch.rand((), generator=streams[rows[r].stream], dtype=torch.float64) for r in sampled]
    ).to(device=logits.device, dtype=mass.dtype)
    target = draws * mass[:, -1]
    position = torch.searchsorted(mass, target.unsqueeze(1)).clamp(max=mass.shape[1] - 1)
    chosen[index] = tokens.gather(1, position).squeeze(1)
    return chosen


def _decode_batch(
    model: Any, members: Sequence[Row], streams: Sequence[Any], ends: Any, pad: int, cache: str
) -> tuple[list[Any], Any]:
    """Decode one batch of rows, left-padded with ``pad``, until every row ends or reaches its
    limit. Returns the chosen tokens of each step (a tensor over the rows) and whether each
    row stopped at one of ``ends``; ``cache``: the name of the model's key-value cache argument."""
    import torch

    device = next(model.parameters()).device
    width = max(len(r.prompt) for r in members)
    ids = torch.full((len(members), width), pad, dtype=torch.long)
    mask = torch.zeros((len(members), width), dtype=torch.long)
    for b, row in enumerate(members):
        ids[b, width - len(row.prompt) :] = torch.tensor(row.prompt)
        mask[b, width - len(row.prompt) :] = 1
    ids, mask = ids.to(device), mask.to(device)
    positions = (mask.cumsum(dim=-1) - 1).clamp(min=0)
    limits = torch.tensor([r.max_tokens for r in members], device=device)
    done = torch.zeros(len(members), dtype=torch.bool, device=device)
    stopped = torch.zeros_like(done)
    new: list[Any] = []
    with torch.inference_mode():
        out = model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
        )
        for step in range(int(limits.max())):
            token = _choose(out.logits[:, -1, :].float(), members, streams)
            token = torch.where(done, torch.full_like(token, pad), token)
            new.append(token)
            ended = torch.isin(token, ends) & ~done
            stopped |= ended
            done |= ended | (step + 1 >= limits)
            if bool(done.all()):
                break
            mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
            positions = positions[:, -1:] + 1
            out = model(
                input_ids=token.unsqueeze(1),
                attention_mask=mask,
                position_ids=positions,
                use_cache=True,
                logits_to_keep=1,
                **{cache: getattr(out, cache)},
            )
    return new, stopped


def decode(
    model: Any,
    rows: Sequence[Row],
    seeds: Sequence[int],
    eos: Sequence[int],
    pad: int,
    batch_tokens: int,
) -> list[tuple[list[int], bool]]:
    """Decode every row; returns per row its new token ids (the end token cut) and whether it
    stopped at an end token.

    Args:
        model: a transformers causal LM (with a key-value cache and ``logits_to_keep``).
        rows: the sequences to decode.
        seeds: the seed of each random stream (``Row.stream`` indexes it).
        eos: token ids that end a sequence.
        pad: the id that fills the left padding.
        batch_tokens: the most cached positions of one batch (rows x longest span).
    """
    import torch

    device = next(model.parameters()).device
    streams = []
    for seed in seeds:
        stream = torch.Generator(device="cpu")
        stream.manual_seed(seed)
        streams.append(stream)
    ends = torch.tensor(sorted(set(eos)) or [-1], device=device)
    # transformers 5 names the key-value cache "cache"; earlier versions "past_key_values".
    cache = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    results: list[tuple[list[int], bool]] = [([], False)] * len(rows)
    for batch in plan_batches(rows, batch_tokens):
        members = [rows[i] for i in batch]
        new, stopped = _decode_batch(model, members, streams, ends, pad, cache)
        generated = torch.stack(new, dim=1).tolist() if new else [[] for _ in batch]
        for b, i in enumerate(batch):
            tokens = generated[b][: members[b].max_tokens]
            cut = next((k for k, t in enumerate(tokens) if t in set(eos)), None)
            results[i] = (tokens if cut is None else tokens[:cut], bool(stopped[b]))
    return results
