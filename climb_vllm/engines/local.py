"""The in-process engine: a transformers causal LM on CPU or CUDA, with tree-shared scoring.

Token-boundary contract: prefix ids are ``tok(T)`` with special tokens as the tokenizer adds them
(BOS for Llama-style tokenizers); continuation ids are ``tok(T + " " + C)[len(tok(T)):]``;
:mod:`climb_vllm.engines.boundary` builds requests that keep it. ``score`` returns
the sum over the continuation's tokens of ``log p(c_k | prefix, c_<k)`` from an fp32
log-softmax.

Three scorers (``scorer=``), all under the same contract and equal within float rounding:

``tree`` (the default)
    Shared description heads: requests are ordered by their prompt token ids and packed into
    rows of at most ``row_tokens`` nodes, each row one token tree (:mod:`.token_tree`): a head
    shared by several prompts is one set of nodes, each prompt branches off it, and each
    prompt's last node carries its names' trie. Under a tree attention mask every node attends
    to itself and its ancestors only, at its plain-sequence position, so no code's values
    depend on which other codes share its row.
``prefix``
    Per-request prefix sharing: all continuations of a request form a trie. One row per
    request computes the prefix once and, after it, one extra position per *internal* trie node
    (a partial name that has a further token), under the same tree mask. Requests are sorted by
    length and packed into batches under a token budget.
``naive``
    Every (prefix + continuation) as its own sequence, with the head at every position, as
    plain transformers scoring does; the baseline for the benchmark and the reference for the
    equality tests.

In the two tree layouts a name's first token is read from its prompt's last node and later
tokens from their parent node, and the output head (lm_head) and the log-softmax run only at
those read positions.

This module imports only torch, transformers and numpy, so it runs on machines that have nothing
else installed.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from climb_vllm.core.errors import UserError
from climb_vllm.engines import sampling, token_tree
from climb_vllm.engines.base import (
    EngineStats,
    GenerateRequest,
    Generation,
    ScoreRequest,
    ScoreResult,
)
from climb_vllm.engines.compiled import CompiledLayers
from climb_vllm.engines.identity import weights_fingerprint
from climb_vllm.engines.memory import positions_per_pass
from climb_vllm.engines.output_head import HeadLogprobs, at_least_fp32, split_matches
from climb_vllm.engines.trie import Trie
from climb_vllm.models.adapters import apply_adapter, describe_adapter
from climb_vllm.models.demo_model import DEMO_MARKER
from climb_vllm.models.loading import fingerprint, open_model, require_hub_model, resolve_device
from climb_vllm.models.sources import provenance

#: the in-process scoring layouts, fastest first (see the module docstring)
SCORERS = ("tree", "prefix", "naive")


def _check_sizes(scorer: str, row_tokens: int, batch_tokens: int | None) -> None:
    """UserError for an unknown scorer or a pass too small to hold a prompt."""
    if batch_tokens is not None and batch_tokens < 64:
        raise UserError(f"--batch-tokens {batch_tokens} is too small.", "use 64 or more.")
    if scorer not in SCORERS:
        raise UserError(f"Unknown scorer {scorer!r}.", f"use one of {', '.join(SCORERS)}.")
    if row_tokens < 16:
        raise UserError(f"Row size {row_tokens} is too small.", "use 16 tokens or more.")


def _checked_sources(model: str, tokenizer: str | None, revision: str | None) -> Path:
    """The model's local path (it may not exist: a hub id); UserError for a folder that does
    not exist and for a hub id that cannot be reached offline."""
    local = Path(model).expanduser()
    looks_like_path = model.startswith((".", "/", "~")) or model.count("/") > 1
    if looks_like_path and not local.exists():
        raise UserError(
            f"Model folder {model} does not exist.",
            "pass a folder with config.json, weights and tokenizer, or a hub id such as "
            "org/name; 'climb-vllm demo-model DIR' builds a tiny one.",
        )
    for name in dict.fromkeys((model, tokenizer or model)):
        if not Path(name).expanduser().exists():
            require_hub_model(name, revision)
    return local


class LocalEngine:
    """A transformers model in this process.

    Args:
        model: a local folder (config, weights, tokenizer) or a Hugging Face hub id.
        tokenizer: tokenizer folder or id when it differs from ``model``.
        revision: hub revision (branch, tag or commit) for hub ids.
        device: "auto" (CUDA when available), "cpu" or "cuda".
        dtype: "auto" (bfloat16 on CUDA, float32 on CPU), "float32", "bfloat16", "float16", or
            "float64" (slow; for checking that layouts differ only by float rounding).
        batch_tokens: the most positions (padding included) in one forward pass; None: sized
            from the free memory after loading (:mod:`.memory`), so that a large vocabulary
            never runs the process out of memory.
        scorer: "tree" (shared description heads, the default), "prefix" (each prompt once,
            names shared after it) or "naive" (every prompt + name as its own sequence).
        row_tokens: the most nodes in one attention row of the "tree" scorer.
        adapter: a LoRA adapter folder merged into the weights with peft (None: none).
        compile_layers: run the tree and prefix scorers' passes through decoder layers
            compiled with torch.compile (:mod:`.compiled`); the first pass pays the compile.
    """

    name = "local"
    # transformers objects; their own annotations are partial, so they are held as Any.
    model: Any
    tokenizer: Any

    def __init__(
        self,
        model: str,
        *,
        tokenizer: str | None = None,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        batch_tokens: int | None = None,
        scorer: str = "tree",
        row_tokens: int = 256,
        adapter: str | None = None,
        compile_layers: bool = False,
    ) -> None:
        import torch
        import transformers

        transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        device, dtype = resolve_device(device, dtype)
        self.model_id = model
        self.revision = revision
        self.device = torch.device(device)
        self.dtype_name = dtype
        _check_sizes(scorer, row_tokens, batch_tokens)
        self.scorer = scorer
        self.row_tokens = row_tokens
        self.stats = EngineStats()
        self._tries: dict[tuple[tuple[int, ...], ...], Trie] = {}
        local = _checked_sources(model, tokenizer, revision)
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                tokenizer or model, revision=revision
            )
        except Exception as exc:  # transformers raises OSError/ValueError/HF errors here
            raise UserError(
                f"Cannot load a tokenizer from {tokenizer or model!r} ({type(exc).__name__}).",
                "give a model folder with tokenizer files, or pass --tokenizer PATH_OR_ID.",
            ) from exc
        try:
            self.model = open_model(local if local.exists() else model, revision, device, dtype)
        except Exception as exc:
            raise UserError(
                f"Cannot load a causal language model from {model!r} ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0][:200] if str(exc) else ''}).",
                "pass a local folder with config.json and weights, or a reachable hub id.",
            ) from exc
        self.adapter = describe_adapter(adapter) if adapter else None
        if adapter:
            self.model = apply_adapter(self.model, adapter)
        self.model = self.model.to(self.device).eval()
        self.batch_tokens_from = "given" if batch_tokens else "free memory"
        self.batch_tokens = batch_tokens or positions_per_pass(
            self.model.config, self.model.dtype.itemsize, str(self.device), max(row_tokens, 512)
        )
        self.row_tokens = min(row_tokens, self.batch_tokens)
        self._fingerprint = fingerprint(local) if local.is_dir() else None
        self._weights = weights_fingerprint(local) if local.is_dir() else None
        probe = list(self.tokenizer("Cholera is related to the name:")["input_ids"])
        # The head only at read positions needs decoder and head apart (checked once).
        self._split_head = split_matches(self.model, probe, self.device)
        self._head_logprobs = HeadLogprobs(self.model)
        self._compiled = CompiledLayers(self.model) if compile_layers else None

    def with_scorer(
        self, scorer: str, batch_tokens: int | None = None, compile_layers: bool | None = None
    ) -> LocalEngine:
        """This engine with another ``scorer`` (one of :data:`SCORERS`), ``batch_tokens``
        positions per pass and compiled layers or not (None: as this engine), sharing the
        loaded model (no second copy)."""
        if scorer not in SCORERS:
            raise UserError(f"Unknown scorer {scorer!r}.", f"use one of {', '.join(SCORERS)}.")
        other = copy.copy(self)
        other.scorer, other.stats, other._tries = scorer, EngineStats(), {}
        if compile_layers is not None:
            other._compiled = CompiledLayers(self.model) if compile_layers else None
        if batch_tokens is not None:
            other.batch_tokens = batch_tokens
            other.row_tokens = min(self.row_tokens, batch_tokens)
        return other

    # -- scoring ---------------------------------------------------------------------------

    def score(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        """Log-probabilities of every continuation of every request (input order)."""
        for request in requests:
            if not request.prefix:
                raise ValueError("a score request needs a non-empty prefix")
        if self.scorer == "tree":
            return self._score_heads(requests)
        if self.scorer == "prefix":
            return self._score_tree(requests)
        return self._score_full(requests)

    def _trie(self, continuations: tuple[tuple[int, ...], ...]) -> Trie:
        trie = self._tries.get(continuations)
        if trie is None:
            trie = Trie.build(continuations)
            if len(self._tries) < 4096:
                self._tries[continuations] = trie
        return trie

    def _batches(
        self, lengths: list[int], keys: Sequence[int] | None = None
    ) -> Iterator[list[int]]:
        """Indices sorted by (key, length), cut so that rows x longest row stays in budget.

        A batch never mixes keys (the tree scorer keys requests by their trie).
        """
        order = sorted(range(len(lengths)), key=lambda i: (keys[i] if keys else 0, lengths[i]))
        batch: list[int] = []
        for i in order:
            new_key = bool(batch) and keys is not None and keys[i] != keys[batch[0]]
            if batch and (new_key or (len(batch) + 1) * lengths[i] > self.batch_tokens):
                yield batch
                batch = []
            batch.append(i)
        if batch:
            yield batch

    def _score_tree(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        tries = [self._trie(r.continuations) for r in requests]
        trie_ids: dict[int, int] = {}
        keys = [trie_ids.setdefault(id(t), len(trie_ids)) for t in tries]
        lengths = [len(r.prefix) + len(t.tokens) for r, t in zip(requests, tries)]
        results: list[ScoreResult | None] = [None] * len(requests)
        for batch in self._batches(lengths, keys):
            trie = tries[batch[0]]
            prefixes = [requests[i].prefix for i in batch]
            values = self._tree_batch(prefixes, trie)
            self.stats.forward_tokens += sum(lengths[i] for i in batch)
            for b, i in enumerate(batch):
                results[i] = trie.result(values[b])
        return [r for r in results if r is not None]

    def _score_heads(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        """The shared-head scorer: requests as token trees (:mod:`.token_tree`), rows batched
        in prefix order under the token budget, padded on the right."""
        import numpy as np
        import torch

        tries = [self._trie(r.continuations) for r in requests]
        prefixes = [r.prefix for r in requests]
        results: list[ScoreResult | None] = [None] * len(requests)
        # Rows are independent: batching them by width keeps padding low.
        rows = sorted(token_tree.layout(prefixes, tries, self.row_tokens), key=lambda r: r.width)
        start = 0
        while start < len(rows):
            end, width = start + 1, rows[start].width
            while end < len(rows) and (end - start + 1) * max(width, rows[end].width) <= (
                self.batch_tokens
            ):
                width = max(width, rows[end].width)
                end += 1
            batch = rows[start:end]
            ids = np.zeros((len(batch), width), dtype=np.int64)
            positions = np.zeros((len(batch), width), dtype=np.int64)
            allowed = np.zeros((len(batch), width, width), dtype=bool)
            for b, row in enumerate(batch):
                ids[b, : row.width] = row.tokens
                positions[b, : row.width] = row.positions
                allowed[b] = row.ancestry(width)
            flat = np.concatenate([b * width + row.read_columns for b, row in enumerate(batch)])
            targets = np.concatenate([row.read_tokens for row in batch])
            values = self._forward_select(
                torch.from_numpy(ids),
                torch.from_numpy(positions),
                torch.from_numpy(allowed),
                torch.from_numpy(flat),
                torch.from_numpy(targets),
            ).tolist()
            self.stats.forward_tokens += sum(row.width for row in batch)
            cursor = 0
            for row in batch:
                for i in row.requests:
                    count = sum(len(reads) for reads in tries[i].reads)
                    results[i] = tries[i].result(values[cursor : cursor + count])
                    cursor += count
            start = end
        return [r for r in results if r is not None]

    def _tree_batch(self, prefixes: list[tuple[int, ...]], trie: Trie) -> list[list[float]]:
        """Score one batch of prefixes that share a trie; returns per-row read values.

        Rows are left-padded so that every prefix ends at the same column and the trie's nodes
        occupy the last ``n`` columns of every row; the attention mask is then one static
        pattern (causal over the prefix, ancestor-or-self among nodes) combined with each
        row's padding.
        """
        import torch

        n = len(trie.tokens)
        width = max(len(p) for p in prefixes) + n
        body = width - n  # columns before the nodes
        starts = torch.tensor([body - len(p) for p in prefixes])
        ids = torch.tensor([[0] * (body - len(p)) + list(p) + list(trie.tokens) for p in prefixes])
        pattern, read_rows, read_tokens = self._tree_pattern(trie, width)
        column = torch.arange(width)
        valid = column[None, :] >= starts[:, None]  # (B, W): not padding
        allowed = (pattern[None] & valid[:, None, :]) | torch.eye(width, dtype=torch.bool)[None]
        positions = (column[None, :] - starts[:, None]).clamp(min=0)
        if n:
            depths = torch.tensor(trie.depths)
            positions[:, body:] = (body - starts - 1)[:, None] + depths[None, :]
        batch = len(prefixes)
        rows = (torch.arange(batch)[:, None] * width + body - 1 + read_rows[None, :]).reshape(-1)
        targets = read_tokens.repeat(batch)
        values = self._forward_select(ids, positions, allowed, rows, targets).reshape(batch, -1)
        result: list[list[float]] = values.tolist()
        return result

    def _tree_pattern(self, trie: Trie, width: int) -> tuple[Any, Any, Any]:
        """Static mask pattern and read layout of a trie placed at the end of ``width`` columns."""
        import torch

        n = len(trie.tokens)
        body = width - n
        pattern = torch.ones((width, width), dtype=torch.bool).tril()
        if n:
            pattern[body:, body:] = False
            for m, chain in enumerate(trie.ancestors):
                pattern[body + m, [body + a for a in chain]] = True
        flat = [read for reads in trie.reads for read in reads]
        read_rows = torch.tensor([row for row, _ in flat])
        read_tokens = torch.tensor([token for _, token in flat])
        return pattern, read_rows, read_tokens

    def _forward_select(
        self, ids: Any, positions: Any, allowed: Any, rows: Any, targets: Any
    ) -> Any:
        """Run one tree-masked batch; return float64 log p(target) at each flat row (CPU)."""
        import torch

        batch, width = ids.shape
        dtype = self.model.dtype
        mask = torch.zeros((batch, 1, width, width), dtype=dtype)
        mask.masked_fill_(~allowed[:, None], torch.finfo(dtype).min)
        row_index = rows.to(self.device)
        target_index = targets.to(self.device)
        compiled = self._compiled.active() if self._compiled else contextlib.nullcontext()
        with torch.inference_mode(), compiled:
            inputs = {
                "input_ids": ids.to(self.device),
                "attention_mask": mask.to(self.device),
                "position_ids": positions.to(self.device),
                "use_cache": False,  # one pass: a key-value cache would only be copied into
            }
            if self._split_head:
                hidden = self.model.get_decoder()(**inputs).last_hidden_state
                unique_rows = torch.unique(row_index)
                picked = hidden.reshape(batch * width, -1).index_select(0, unique_rows)
                where = torch.searchsorted(unique_rows, row_index)
                values = self._head_logprobs(picked, where, target_index)
                self.stats.head_rows += int(unique_rows.numel())
            else:
                logits = self.model(**inputs).logits.reshape(batch * width, -1)
                logprobs = torch.log_softmax(at_least_fp32(logits), dim=-1)
                values = logprobs[row_index, target_index]
                self.stats.head_rows += batch * width
        self.stats.padded_tokens += batch * width
        self.stats.batches += 1
        return values.to(device="cpu", dtype=torch.float64)

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
                    input_ids=ids.to(self.device),
                    attention_mask=attention.to(self.device),
                    use_cache=False,  # one pass: a key-value cache would only be copied into
                ).logits
                logprobs = torch.log_softmax(at_least_fp32(logits), dim=-1)
                logprobs = logprobs.reshape(len(batch) * width, -1)
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
        """Sample ``n`` completions per request, all requests decoded together in batches
        (:mod:`.sampling`); a request's seed alone fixes its samples, whatever shares its batch.
        """
        eos = self.tokenizer.eos_token_id
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos
        ends = self.model.generation_config.eos_token_id
        ends = [ends] if isinstance(ends, int) else list(ends or [])
        prompts = [tuple(self.render(r)) for r in requests]
        rows: list[sampling.Row] = []
        owners: list[int] = []
        for k, (request, prompt) in enumerate(zip(requests, prompts)):
            settings = self._settings(request)
            # Greedy samples are all the same sequence: decode it once.
            for _ in range(1 if settings.greedy else request.n):
                rows.append(sampling.Row(prompt, settings, k, request.max_tokens))
                owners.append(k)
        decoded = sampling.decode(
            self.model,
            rows,
            [r.seed for r in requests],
            [eos, *ends] if eos is not None else ends,
            pad,
            self.batch_tokens,
        )
        out: list[Generation] = []
        for k, (request, prompt) in enumerate(zip(requests, prompts)):
            mine = [decoded[i] for i, owner in enumerate(owners) if owner == k]
            mine = mine * (request.n // len(mine)) if len(mine) < request.n else mine
            texts = tuple(self.tokenizer.decode(t, skip_special_tokens=True) for t, _ in mine)
            reasons = tuple("stop" if stopped else "length" for _, stopped in mine)
            counts = tuple(len(t) for t, _ in mine)
            out.append(Generation(texts, reasons, counts, len(prompt)))
        return out

    def _settings(self, request: GenerateRequest) -> sampling.Settings:
        """A request's sampling settings; temperature None takes the model's own generation
        settings (sampling or not, temperature, top_p, top_k), as servers do."""
        if request.temperature is None:
            config = self.model.generation_config
            if not config.do_sample:
                return sampling.Settings(greedy=True)
            return sampling.Settings(
                greedy=False,
                temperature=float(config.temperature or 1.0),
                top_p=float(config.top_p or 1.0),
                top_k=int(config.top_k or 0),
            )
        if request.temperature <= 0:
            return sampling.Settings(greedy=True)
        top_p = 1.0 if request.top_p is None else request.top_p
        return sampling.Settings(greedy=False, temperature=request.temperature, top_p=top_p)

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
            "weights_fingerprint": self._weights,
            "architecture": type(self.model).__name__,
            "parameters": sum(p.numel() for p in self.model.parameters()),
            "tokenizer": json.loads(tokenizer_json),
            "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest()
            if template
            else None,
            # The random model of climb-vllm demo-model (its folder holds the marker file).
            "demo_model": self._fingerprint is not None
            and (Path(self.model_id).expanduser() / DEMO_MARKER).is_file(),
            # Weights from a model source: packages, upstream hash and licence.
            "source": provenance(Path(self.model_id).expanduser())
            if self._fingerprint is not None
            else None,
            "device": str(self.device),
            "gpu": torch.cuda.get_device_name(self.device) if self.device.type == "cuda" else None,
            "dtype": self.dtype_name,
            "adapter": self.adapter,
            "scorer": self.scorer,
            "row_tokens": self.row_tokens if self.scorer == "tree" else None,
            "split_head": self._split_head,
            "compiled_layers": self._compiled is not None,
            "batch_tokens": self.batch_tokens,
            "batch_tokens_from": self.batch_tokens_from,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        }

    def close(self) -> None:
        """Drop the model so its memory can be reclaimed."""
        del self.model
