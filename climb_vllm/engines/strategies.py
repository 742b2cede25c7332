"""Scoring over OpenAI-compatible ``/v1/completions``: request payloads and response parsing.

Three strategies, chosen per endpoint by a capability probe (see :mod:`climb_vllm.engines.http`):

``trie`` (vLLM >= 0.26)
    One prompt per (request, read row of its token trie): the prefix plus the partial name, with
    ``max_tokens=1``, ``temperature=0``, ``logprobs`` on and ``logprob_token_ids`` = the tokens
    read at that row. vLLM returns the raw full-vocabulary log-prob of exactly those ids and the
    request keeps reading the prefix cache (prompt log-prob requests skip it). Prompts that read
    the same token set are grouped into one HTTP request (the id list is per request).
``prompt_logprobs`` (older vLLM)
    One full sequence (prefix + continuation) per pair with ``prompt_logprobs=0``; the log-prob
    of each prompt token is returned. No prefix-cache reads.
``echo`` (other OpenAI-compatible servers)
    Full sequences with ``echo=true`` and ``logprobs=1``; ``token_logprobs`` covers the prompt.
``echo_text`` (servers that take text prompts only, one per request: llama.cpp's)
    As ``echo``, but each full sequence is sent as its text (decoded without special tokens;
    the server tokenizes it and adds the BOS itself). Under the token-boundary contract the
    sequence is ``tok(T + " " + C)``, the server's own tokenization of the same text, so the
    scores are those of the same tokens; every answer is checked: the server's echoed tokens
    must be as many as ours and spell the text, else the answer is refused.

Token-id prompts get no BOS from the server: the prefix already holds it, as the tokenizer adds
it (the token-boundary contract in :mod:`climb_vllm.engines.base`).

vLLM clamps log-probs of -inf to -9999.0; such a value is never reported as a score.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from climb_vllm.engines.base import ScoreRequest, ScoreResult
from climb_vllm.engines.trie import Trie
from climb_vllm.serving.config import MAX_LOGPROB_IDS

STRATEGIES = ("trie", "prompt_logprobs", "echo", "echo_text")
#: vLLM's stand-in for a log-prob of -inf.
CLAMPED = -9999.0


class ResponseError(ValueError):
    """A response that cannot be turned into scores (truncated, malformed, clamped).

    A ValueError, so the transport retries it like an unparseable body.
    """


class TokenizationMismatch(ResponseError):
    """A text prompt that the server tokenized otherwise than the engine's tokenizer: the
    log-probs would belong to other tokens (a tokenizer that is not the served model's)."""


@dataclass(frozen=True)
class Job:
    """Prompts that go to one endpoint in one HTTP request, and where their answers belong.

    Attributes:
        payload: the JSON body for ``/v1/completions`` (without ``model``).
        keys: per prompt, the (request index, read row or continuation index) it answers.
        reads: per prompt, the token ids whose log-probs are wanted, in prompt-position order
            for full-sequence strategies, or the ``logprob_token_ids`` for ``trie``.
        offsets: per prompt, the prompt position of the first wanted token (full sequences;
            for ``echo_text``, counted without the leading special tokens).
        texts: per prompt, its text and the text of its prefix (``echo_text`` only).
        sizes: per prompt, its tokens without the leading special tokens (``echo_text``).
    """

    payload: dict[str, Any]
    keys: tuple[tuple[int, int], ...]
    reads: tuple[tuple[int, ...], ...]
    offsets: tuple[int, ...]
    texts: tuple[tuple[str, str], ...] = ()
    sizes: tuple[int, ...] = ()


def endpoint_slices(requests: Sequence[ScoreRequest], endpoints: int) -> list[int]:
    """The endpoint of each request: contiguous slices of the prefix order, one per endpoint.

    Prompts that share a description head land on one server, whose prefix cache can then
    serve the head to all of them.
    """
    order = sorted(range(len(requests)), key=lambda i: requests[i].prefix)
    out = [0] * len(requests)
    for rank, i in enumerate(order):
        out[i] = rank * endpoints // len(requests)
    return out


def trie_jobs(
    requests: Sequence[ScoreRequest],
    tries: Sequence[Trie],
    indices: Sequence[int],
    per_request: int,
) -> list[Job]:
    """Jobs of the ``trie`` strategy for the requests at ``indices``.

    Args:
        requests: all score requests.
        tries: the trie of each request.
        indices: which requests to cover (those routed to one endpoint); their prompts are
            sent in prefix order.
        per_request: the most prompts in one HTTP request (vLLM accepts 1024).
    """
    groups: dict[tuple[int, ...], list[tuple[tuple[int, ...], tuple[int, int]]]] = {}
    # In prefix order, prompts that share a description head are sent together (and, on a
    # server with prefix caching, one after the other), so the head's cached blocks are reused.
    for i in sorted(indices, key=lambda i: requests[i].prefix):
        trie = tries[i]
        for row, children in enumerate(trie.children()):
            if not children:
                continue
            prompt = requests[i].prefix + trie.path(row)
            for start in range(0, len(children), MAX_LOGPROB_IDS):
                ids = children[start : start + MAX_LOGPROB_IDS]
                groups.setdefault(ids, []).append((prompt, (i, row)))
    jobs = []
    for ids, members in groups.items():
        for start in range(0, len(members), per_request):
            part = members[start : start + per_request]
            payload = {
                "prompt": [list(prompt) for prompt, _ in part],
                "max_tokens": 1,
                "temperature": 0.0,
                "logprobs": 1,
                "logprob_token_ids": list(ids),
                "return_tokens_as_token_ids": True,
            }
            jobs.append(
                Job(payload, tuple(k for _, k in part), (ids,) * len(part), (0,) * len(part))
            )
    return jobs


def sequence_jobs(
    requests: Sequence[ScoreRequest], indices: Sequence[int], per_request: int, strategy: str
) -> list[Job]:
    """Jobs of the full-sequence strategies (``prompt_logprobs`` or ``echo``)."""
    items = [
        (requests[i].prefix + cont, (i, j), cont, len(requests[i].prefix))
        for i in indices
        for j, cont in enumerate(requests[i].continuations)
    ]
    jobs = []
    for start in range(0, len(items), per_request):
        part = items[start : start + per_request]
        payload: dict[str, Any] = {
            "prompt": [list(seq) for seq, _, _, _ in part],
            "max_tokens": 1,
            "temperature": 0.0,
        }
        if strategy == "prompt_logprobs":
            payload.update(prompt_logprobs=0, return_tokens_as_token_ids=True)
        else:
            payload.update(echo=True, logprobs=1)
        jobs.append(
            Job(
                payload,
                tuple(k for _, k, _, _ in part),
                tuple(cont for _, _, cont, _ in part),
                tuple(off for _, _, _, off in part),
            )
        )
    return jobs


def text_jobs(
    requests: Sequence[ScoreRequest],
    indices: Sequence[int],
    decode: Callable[[Sequence[int]], str],
    specials: frozenset[int],
) -> list[Job]:
    """Jobs of the ``echo_text`` strategy: one text prompt per HTTP request, in prefix order
    (a server that keeps the previous prompt's cache, as llama.cpp does, reuses the shared
    description head of consecutive prompts).

    Args:
        requests: all score requests.
        indices: which requests to cover.
        decode: token ids -> text, without special tokens.
        specials: the tokenizer's special token ids (a leading BOS is left to the server).
    """
    jobs = []
    for i in sorted(indices, key=lambda i: requests[i].prefix):
        prefix = requests[i].prefix
        lead = 0
        while lead < len(prefix) and prefix[lead] in specials:
            lead += 1
        head = decode(prefix[lead:])
        for j, cont in enumerate(requests[i].continuations):
            sequence = prefix + cont
            text = decode(sequence[lead:])
            payload = {
                "prompt": text,
                "max_tokens": 1,
                "temperature": 0.0,
                "echo": True,
                "logprobs": 1,
            }
            jobs.append(
                Job(
                    payload,
                    ((i, j),),
                    (cont,),
                    (len(prefix) - lead,),
                    ((text, head),),
                    (len(sequence) - lead,),
                )
            )
    return jobs


def _text_values(job: Job, n: int, choice: Any, where: str) -> tuple[float, ...]:
    """The continuation's log-probs of an ``echo_text`` answer, once its tokens are checked."""
    logprobs = choice["logprobs"]
    tokens, values = logprobs["tokens"], logprobs["token_logprobs"]
    size, (text, head), off = job.sizes[n], job.texts[n], job.offsets[n]
    # A server may echo the BOS it added as a token of its own (vLLM) or leave it out
    # (llama.cpp); either way the prompt's tokens must spell its text, and the prefix's
    # tokens the prefix's text (the boundary falls where the tokenizer put it).
    for lead in (0, 1):
        if (
            len(tokens) >= lead + size
            and "".join(tokens[lead : lead + size]) == text
            and "".join(tokens[lead : lead + off]) == head
        ):
            break
    else:
        raise TokenizationMismatch(
            f"{where}: the server tokenized the prompt {text[-40:]!r} into other tokens than "
            f"the tokenizer did ({len(tokens)} echoed for {size})"
        )
    return tuple(_checked(values[lead + off + k], where) for k in range(len(job.reads[n])))


def _checked(value: Any, where: str) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ResponseError(f"{where}: log-prob {value!r} is not a number")
    number = float(value)
    if math.isnan(number) or number > 1e-6:
        raise ResponseError(f"{where}: log-prob {number} is not a log-probability")
    if number <= CLAMPED:
        raise ResponseError(
            f"{where}: log-prob {number} is vLLM's clamp for -inf (probability 0 under the "
            "server's sampling settings); start vLLM with --logprobs-mode raw_logprobs"
        )
    return number


def parse(job: Job, body: Any, strategy: str) -> list[tuple[tuple[int, int], tuple[float, ...]]]:
    """Turn one response body into (key, log-probs) pairs, one per prompt of the job.

    Raises ResponseError for anything that is not a complete, well-formed answer.
    """
    try:
        choices = sorted(body["choices"], key=lambda c: c["index"])
    except (TypeError, KeyError) as exc:
        raise ResponseError(f"response has no usable choices ({exc!r})") from exc
    if len(choices) != len(job.keys):
        raise ResponseError(f"{len(choices)} choices for {len(job.keys)} prompts")
    out = []
    for n, choice in enumerate(choices):
        where = f"prompt {n}"
        try:
            if strategy == "trie":
                top = choice["logprobs"]["top_logprobs"][0]
                values = tuple(_checked(top[f"token_id:{t}"], where) for t in job.reads[n])
            elif strategy == "prompt_logprobs":
                rows = choice["prompt_logprobs"]
                off = job.offsets[n]
                values = tuple(
                    _checked(rows[off + k][str(t)]["logprob"], where)
                    for k, t in enumerate(job.reads[n])
                )
            elif strategy == "echo_text":
                values = _text_values(job, n, choice, where)
            else:
                logprobs = choice["logprobs"]["token_logprobs"]
                off = job.offsets[n]
                if len(logprobs) < off + len(job.reads[n]):
                    raise ResponseError(f"{where}: echo returned {len(logprobs)} log-probs")
                values = tuple(_checked(logprobs[off + k], where) for k in range(len(job.reads[n])))
        except (TypeError, KeyError, IndexError) as exc:
            raise ResponseError(f"{where}: missing log-prob ({exc!r})") from exc
        out.append((job.keys[n], values))
    return out


def assemble_result(
    request: ScoreRequest,
    trie: Trie,
    i: int,
    answers: dict[tuple[int, int], tuple[float, ...]],
    strategy: str,
) -> ScoreResult:
    """Request ``i``'s result from the answers keyed (request, row): under the trie strategy a
    row is a trie node whose answer lists its children's log-probs, else a continuation."""
    sums: list[float] = []
    per_token: list[tuple[float, ...]] = []
    children = trie.children() if strategy == "trie" else []
    for j in range(len(request.continuations)):
        if strategy == "trie":
            values = tuple(
                answers[(i, row)][children[row].index(token)] for row, token in trie.reads[j]
            )
        else:
            values = answers[(i, j)]
        per_token.append(values)
        sums.append(float(sum(values)))
    return ScoreResult(tuple(sums), tuple(per_token))
