"""The in-process engine: a transformers causal LM on CPU or CUDA, with prefix-shared scoring.

Token-boundary contract: prefix ids are ``tok(T)`` with special tokens as the tokenizer adds them
(BOS for Llama-style tokenizers); continuation ids are ``tok(T + " " + C)[len(tok(T)):]``;
:mod:`climb_vllm.boundary` builds requests that keep it. ``score`` returns the sum over the
continuation's tokens of ``log p(c_k | prefix, c_<k)`` from an fp32 log-softmax.

Prefix-shared scoring (the default). All continuations of a request form a trie. One forward pass
per request computes the prefix once and, after it, one extra position per *internal* trie node
(a partial name that has a further token), under a tree attention mask: each node attends to the
whole prefix and to its own ancestors, at the position it would have in the plain sequence. The
first token of every name is read from the last prefix position, later tokens from their parent
node's position, so each name tail is scored against the prefix's keys and values without
recomputing them. The output head (lm_head) and the log-softmax run only at those read
positions. Requests are sorted by length and packed into batches under a token budget.

Naive scoring (``prefix_sharing=False``) feeds every (prefix + continuation) as its own sequence
and evaluates the head at every position, as plain transformers scoring does; it is the baseline
for the benchmark and the reference for the equality tests.

This module imports only torch, transformers and numpy, so it runs on machines that have nothing
else installed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from climb_vllm.engines.base import (
    EngineStats,
    GenerateRequest,
    Generation,
    ScoreRequest,
    ScoreResult,
)
from climb_vllm.errors import UserError

DTYPES = ("auto", "float32", "bfloat16", "float16")
DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class _Trie:
    """The layout of a request's continuations after its prefix.

    Attributes:
        tokens: token fed at each internal node, in node order.
        depths: 1-based depth of each node (its offset after the prefix).
        ancestors: ``ancestors[m]`` lists node m and its ancestor nodes.
        reads: per continuation, per token: (read row, token id); row 0 is the last prefix
            position, row 1 + m is node m.
    """

    tokens: tuple[int, ...]
    depths: tuple[int, ...]
    ancestors: tuple[tuple[int, ...], ...]
    reads: tuple[tuple[tuple[int, int], ...], ...]

    @staticmethod
    def build(continuations: tuple[tuple[int, ...], ...]) -> _Trie:
        index: dict[tuple[int, ...], int] = {}
        tokens: list[int] = []
        depths: list[int] = []
        ancestors: list[tuple[int, ...]] = []
        reads: list[tuple[tuple[int, int], ...]] = []
        for cont in continuations:
            if not cont:
                raise ValueError("empty continuation: every name must have at least one token")
            row_reads: list[tuple[int, int]] = [(0, cont[0])]
            for k in range(1, len(cont)):
                key = cont[:k]
                if key not in index:
                    parent = index.get(cont[: k - 1])
                    index[key] = len(tokens)
                    tokens.append(cont[k - 1])
                    depths.append(k)
                    ancestors.append((ancestors[parent] if parent is not None else ()) + (index[key],))
                row_reads.append((1 + index[key], cont[k]))
            reads.append(tuple(row_reads))
        return _Trie(tuple(tokens), tuple(depths), tuple(ancestors), tuple(reads))


def _fingerprint(path: Path) -> str:
    """A cheap identity of a local model folder: config, tokenizer files, and weight sizes."""
    digest = hashlib.sha256()
    for item in sorted(path.iterdir()):
        if item.suffix in (".json", ".model", ".txt", ".jinja"):
            digest.update(item.name.encode())
            digest.update(item.read_bytes())
        elif item.is_file():
            digest.update(f"{item.name}:{item.stat().st_size}".encode())
    return digest.hexdigest()


def resolve_device(device: str, dtype: str) -> tuple[str, str]:
    """Turn "auto" device and dtype choices into concrete ones; UserError for bad choices.

    Args:
        device: "auto", "cpu" or "cuda".
        dtype: "auto", "float32", "bfloat16" or "float16".
    """
    import torch

    if device not in DEVICES:
        raise UserError(f"Unknown device {device!r}.", f"use one of {', '.join(DEVICES)}.")
    if dtype not in DTYPES:
        raise UserError(f"Unknown dtype {dtype!r}.", f"use one of {', '.join(DTYPES)}.")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise UserError("--device cuda was asked for but torch sees no GPU.", "use --device cpu.")
    if dtype == "auto":
        dtype = "bfloat16" if device == "cuda" else "float32"
    return device, dtype


class LocalEngine:
    """A transformers model in this process.

    Args:
        model: a local folder (config, weights, tokenizer) or a Hugging Face hub id.
        tokenizer: tokenizer folder or id when it differs from ``model``.
        revision: hub revision (branch, tag or commit) for hub ids.
        device: "auto" (CUDA when available), "cpu" or "cuda".
        dtype: "auto" (bfloat16 on CUDA, float32 on CPU), "float32", "bfloat16" or "float16".
        batch_tokens: the most positions (padding included) in one forward pass.
        prefix_sharing: use the prefix-shared tree layout (True) or naive full sequences.
    """

    name = "local"

    def __init__(
        self,
        model: str,
        *,
        tokenizer: str | None = None,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        batch_tokens: int = 8192,
        prefix_sharing: bool = True,
    ) -> None:
        import torch
        import transformers

        transformers.utils.logging.disable_progress_bar()
        device, dtype = resolve_device(device, dtype)
        if batch_tokens < 64:
            raise UserError(f"--batch-tokens {batch_tokens} is too small.", "use 64 or more.")
        self.model_id = model
        self.revision = revision
        self.device = torch.device(device)
        self.dtype_name = dtype
        self.batch_tokens = batch_tokens
        self.prefix_sharing = prefix_sharing
        self.stats = EngineStats()
        self._tries: dict[tuple[tuple[int, ...], ...], _Trie] = {}
        local = Path(model).expanduser()
        looks_like_path = model.startswith((".", "/", "~")) or model.count("/") > 1
        if looks_like_path and not local.exists():
            raise UserError(
                f"Model folder {model} does not exist.",
                "pass a folder with config.json, weights and tokenizer, or a hub id such as "
                "org/name; 'climb-vllm demo-model DIR' builds a tiny one.",
            )
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                tokenizer or model, revision=revision
            )
        except Exception as exc:  # transformers raises OSError/ValueError/HF errors here
            raise UserError(
                f"Cannot load a tokenizer from {tokenizer or model!r} ({type(exc).__name__}).",
                "give a model folder that contains tokenizer files, or pass --tokenizer PATH_OR_ID.",
            ) from exc
        try:
            self.model = transformers.AutoModelForCausalLM.from_pretrained(
                str(local) if local.exists() else model,
                revision=revision,
                dtype=getattr(torch, dtype),
                attn_implementation="sdpa",
            )
        except Exception as exc:
            raise UserError(
                f"Cannot load a causal language model from {model!r} ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0][:200] if str(exc) else ''}).",
                "pass a local folder with config.json and weights, or a reachable hub id.",
            ) from exc
        self.model.to(self.device).eval()
        self._fingerprint = _fingerprint(local) if local.is_dir() else None
        self._split_head = self._check_split_head()

    # -- scoring ---------------------------------------------------------------------------

    def score(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        """Log-probabilities of every continuation of every request (input order)."""
        for request in requests:
            if not request.prefix:
                raise ValueError("a score request needs a non-empty prefix")
        if self.prefix_sharing:
            return self._score_tree(requests)
        return self._score_full(requests)

    def _trie(self, continuations: tuple[tuple[int, ...], ...]) -> _Trie:
        trie = self._tries.get(continuations)
        if trie is None:
            trie = _Trie.build(continuations)
            if len(self._tries) < 4096:
                self._tries[continuations] = trie
        return trie

    def _batches(self, lengths: list[int]) -> Iterator[list[int]]:
        """Indices sorted by length, cut so that rows x longest row stays within the budget."""
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        batch: list[int] = []
        for i in order:
            if batch and (len(batch) + 1) * lengths[i] > self.batch_tokens:
                yield batch
                batch = []
            batch.append(i)
        if batch:
            yield batch

    def _score_tree(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        import torch

        tries = [self._trie(r.continuations) for r in requests]
        lengths = [len(r.prefix) + len(t.tokens) for r, t in zip(requests, tries)]
        results: list[ScoreResult | None] = [None] * len(requests)
        for batch in self._batches(lengths):
            width = max(lengths[i] for i in batch)
            ids = torch.zeros((len(batch), width), dtype=torch.long)
            positions = torch.zeros((len(batch), width), dtype=torch.long)
            allowed = torch.zeros((len(batch), width, width), dtype=torch.bool)
            causal = torch.ones((width, width), dtype=torch.bool).tril()
            rows: list[int] = []
            targets: list[int] = []
            for b, i in enumerate(batch):
                prefix, trie = requests[i].prefix, tries[i]
                p, n = len(prefix), len(trie.tokens)
                ids[b, :p] = torch.tensor(prefix)
                positions[b, :p] = torch.arange(p)
                allowed[b, :p, :p] = causal[:p, :p]
                if n:
                    ids[b, p : p + n] = torch.tensor(trie.tokens)
                    positions[b, p : p + n] = p - 1 + torch.tensor(trie.depths)
                    allowed[b, p : p + n, :p] = True
                    for m, chain in enumerate(trie.ancestors):
                        allowed[b, p + m, [p + a for a in chain]] = True
                # Padding rows look at position 0 only, so no softmax row is empty.
                allowed[b, p + n :, 0] = True
                for reads in trie.reads:
                    for row, token in reads:
                        rows.append(b * width + (p - 1 if row == 0 else p + row - 1))
                        targets.append(token)
            values = self._forward_select(ids, positions, allowed, rows, targets)
            self.stats.forward_tokens += sum(lengths[i] for i in batch)
            cursor = 0
            for i in batch:
                sums: list[float] = []
                per_token: list[tuple[float, ...]] = []
                for reads in tries[i].reads:
                    chunk = tuple(values[cursor : cursor + len(reads)])
                    cursor += len(reads)
                    per_token.append(chunk)
                    sums.append(float(sum(chunk)))
                results[i] = ScoreResult(tuple(sums), tuple(per_token))
        return [r for r in results if r is not None]

    def _forward_select(
        self,
        ids: Any,
        positions: Any,
        allowed: Any,
        rows: list[int],
        targets: list[int],
    ) -> list[float]:
        """Run one tree-masked batch; return log p(target) at each flat (batch*width) row."""
        import torch

        batch, width = ids.shape
        dtype = self.model.dtype
        mask = torch.zeros((batch, 1, width, width), dtype=dtype)
        mask.masked_fill_(~allowed[:, None], torch.finfo(dtype).min)
        row_index = torch.tensor(rows, device=self.device)
        target_index = torch.tensor(targets, device=self.device)
        with torch.inference_mode():
            inputs = {
                "input_ids": ids.to(self.device),
                "attention_mask": mask.to(self.device),
                "position_ids": positions.to(self.device),
            }
            if self._split_head:
                hidden = self.model.get_decoder()(**inputs).last_hidden_state
                unique_rows = row_index.unique()
                picked = hidden.reshape(batch * width, -1).index_select(0, unique_rows)
                logits = self._head(picked)
                where = torch.searchsorted(unique_rows, row_index)
                logprobs = torch.log_softmax(logits.float(), dim=-1)
                values = logprobs[where, target_index]
                self.stats.head_rows += int(unique_rows.numel())
            else:
                logits = self.model(**inputs).logits.reshape(batch * width, -1)
                logprobs = torch.log_softmax(logits.float(), dim=-1)
                values = logprobs[row_index, target_index]
                self.stats.head_rows += batch * width
        self.stats.padded_tokens += batch * width
        self.stats.batches += 1
        result: list[float] = values.cpu().tolist()
        return result

    def _head(self, hidden: Any) -> Any:
        logits = self.model.get_output_embeddings()(hidden)
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        if cap:
            logits = (logits / cap).tanh() * cap
        return logits

    def _check_split_head(self) -> bool:
        """Whether decoder + output head reproduces the model's own logits.

        Computing the head only at read positions needs the decoder and the head separately.
        Architectures that post-process logits in ways this engine does not know would give
        wrong numbers that way, so the split is verified once on a probe and the engine falls
        back to the model's full forward (head at every position) when it does not match.
        """
        import torch

        try:
            decoder = self.model.get_decoder()
            head = self.model.get_output_embeddings()
        except (AttributeError, NotImplementedError):
            return False
        if decoder is None or head is None:
            return False
        probe = torch.tensor([list(self.tokenizer("Cholera is related to the name:")["input_ids"])])
        with torch.inference_mode():
            probe = probe.to(self.device)
            full = self.model(input_ids=probe).logits.float()
            split = self._head(decoder(input_ids=probe).last_hidden_state).float()
        return bool(torch.allclose(full, split, atol=1e-3, rtol=1e-3))

    def _score_full(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        import torch

        pairs = [(i, cont) for i, r in enumerate(requests) for cont in r.continuations]
        lengths = [len(requests[i].prefix) + len(cont) for i, cont in pairs]
        values_by_pair: list[tuple[float, ...]] = [()] * len(pairs)
        for batch in self._batches(lengths):
            width = max(lengths[k] for k in batch)
            ids = torch.zeros((len(batch), width), dtype=torch.long)
            attention = torch.zeros((len(batch), width), dtype=torch.long)
            rows: list[int] = []
            targets: list[int] = []
            for b, k in enumerate(batch):
                i, cont = pairs[k]
                sequence = requests[i].prefix + cont
                ids[b, : len(sequence)] = torch.tensor(sequence)
                attention[b, : len(sequence)] = 1
                start = len(requests[i].prefix)
                for j, token in enumerate(cont):
                    rows.append(b * width + start - 1 + j)
                    targets.append(token)
            with torch.inference_mode():
                logits = self.model(
                    input_ids=ids.to(self.device), attention_mask=attention.to(self.device)
                ).logits
                logprobs = torch.log_softmax(logits.float(), dim=-1).reshape(len(batch) * width, -1)
                values = logprobs[torch.tensor(rows), torch.tensor(targets)].cpu().tolist()
            self.stats.forward_tokens += sum(lengths[k] for k in batch)
            self.stats.padded_tokens += len(batch) * width
            self.stats.head_rows += len(batch) * width
            self.stats.batches += 1
            cursor = 0
            for k in batch:
                n = len(pairs[k][1])
                values_by_pair[k] = tuple(values[cursor : cursor + n])
                cursor += n
        results: list[ScoreResult] = []
        cursor = 0
        for request in requests:
            chunk = values_by_pair[cursor : cursor + len(request.continuations)]
            cursor += len(request.continuations)
            results.append(ScoreResult(tuple(float(sum(v)) for v in chunk), tuple(chunk)))
        return results

    # -- generation ------------------------------------------------------------------------

    def render(self, request: GenerateRequest) -> list[int]:
        """Prompt token ids: the chat template applied to ``messages``, or the raw prompt."""
        if request.messages:
            if not getattr(self.tokenizer, "chat_template", None):
                raise UserError(
                    f"The tokenizer of {self.model_id} has no chat template.",
                    "use a chat model, or a tokenizer folder whose tokenizer_config.json has one.",
                )
            text = self.tokenizer.apply_chat_template(
                list(request.messages), tokenize=False, add_generation_prompt=True
            )
            ids: list[int] = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            return ids
        return list(self.tokenizer(request.prompt)["input_ids"])

    def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        """Sample ``n`` completions per request; the request's seed makes them repeatable."""
        import torch

        eos = self.tokenizer.eos_token_id
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos
        out: list[Generation] = []
        for request in requests:
            prompt = self.render(request)
            torch.manual_seed(request.seed)
            greedy = request.temperature <= 0
            kwargs: dict[str, Any] = {
                "max_new_tokens": request.max_tokens,
                "do_sample": not greedy,
                "num_return_sequences": request.n,
                "pad_token_id": pad,
            }
            if not greedy:
                kwargs.update(temperature=request.temperature, top_p=request.top_p, top_k=0)
            with torch.inference_mode():
                ids = torch.tensor([prompt], device=self.device)
                generated = self.model.generate(
                    input_ids=ids, attention_mask=torch.ones_like(ids), **kwargs
                )
            texts, reasons, counts = [], [], []
            for row in generated[:, len(prompt) :].tolist():
                if eos is not None and eos in row:
                    row = row[: row.index(eos)]
                    reasons.append("stop")
                else:
                    reasons.append("length")
                counts.append(len(row))
                texts.append(self.tokenizer.decode(row, skip_special_tokens=True))
            out.append(Generation(tuple(texts), tuple(reasons), tuple(counts), len(prompt)))
        return out

    # -- provenance ------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """Engine facts for the manifest."""
        import torch
        import transformers

        template = getattr(self.tokenizer, "chat_template", None) or ""
        tokenizer_json = json.dumps(
            {
                "class": type(self.tokenizer).__name__,
                "vocab_size": len(self.tokenizer),
                "bos": self.tokenizer.bos_token,
                "eos": self.tokenizer.eos_token,
            }
        )
        return {
            "engine": self.name,
            "model": self.model_id,
            "revision": self.revision or getattr(self.model.config, "_commit_hash", None),
            "model_fingerprint": self._fingerprint,
            "architecture": type(self.model).__name__,
            "parameters": sum(p.numel() for p in self.model.parameters()),
            "tokenizer": json.loads(tokenizer_json),
            "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest()
            if template
            else None,
            "device": str(self.device),
            "gpu": torch.cuda.get_device_name(self.device) if self.device.type == "cuda" else None,
            "dtype": self.dtype_name,
            "prefix_sharing": self.prefix_sharing,
            "split_head": self._split_head,
            "batch_tokens": self.batch_tokens,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        }

    def close(self) -> None:
        """Drop the model so its memory can be reclaimed."""
        del self.model
