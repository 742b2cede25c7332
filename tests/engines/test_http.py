"""The HTTP engine against a real vLLM server on loopback, compared with the local engine."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from climb_vllm.benchmarks.intrinsic.task import sample_requests
from climb_vllm.core.errors import UserError
from climb_vllm.engines.base import GenerateRequest, ScoreRequest
from climb_vllm.engines.http import HttpEngine
from climb_vllm.engines.strategies import endpoint_slices, sequence_jobs, trie_jobs
from climb_vllm.engines.trie import Trie
from tests.helpers import free_port, vllm_python


@pytest.fixture(scope="module")
def requests_(engine: Any) -> list[ScoreRequest]:
    # Top-10 names: single-token and multi-token names that share first tokens.
    return sample_requests(engine.tokenizer, 30, top_k=10, seed=5)


@pytest.mark.parametrize("strategy", ["trie", "prompt_logprobs", "echo"])
def test_strategies_match_the_local_engine(
    vllm_server: str, tiny_model: Path, engine: Any, requests_: list[ScoreRequest], strategy: str
) -> None:
    http = HttpEngine([vllm_server], tokenizer=str(tiny_model), strategy=strategy)
    assert http.capabilities[0].strategy == strategy
    got = http.score(requests_)
    want = engine.score(requests_)
    worst = max(abs(a - b) for x, y in zip(got, want) for a, b in zip(x.logprobs, y.logprobs))
    # Observed about 3e-5 nat: vLLM's CPU kernels sum in a different order than torch SDPA.
    assert worst < 1e-3


def test_auto_probe_picks_the_trie_on_vllm(vllm_server: str, tiny_model: Path) -> None:
    http = HttpEngine([vllm_server], tokenizer=str(tiny_model))
    assert http.capabilities[0].server == "vllm"
    assert http.capabilities[0].version == "0.32.0"
    assert http.capabilities[0].strategy == "trie"
    assert http.served_model == "tiny"  # read from /v1/models


def test_server_tokenizer_matches_the_local_one(vllm_server: str, engine: Any) -> None:
    http = HttpEngine([vllm_server])
    text = "Cholera is related to the name: Aaliyah"
    assert http.tokenizer(text)["input_ids"] == engine.tokenizer(text)["input_ids"]


def test_payloads_validate_against_vllms_own_schema(requests_: list[ScoreRequest]) -> None:
    tries = [Trie.build(r.continuations) for r in requests_]
    indices = list(range(len(requests_)))
    payloads = [j.payload for j in trie_jobs(requests_, tries, indices, 64)]
    payloads += [j.payload for j in sequence_jobs(requests_, indices, 64, "prompt_logprobs")]
    payloads += [j.payload for j in sequence_jobs(requests_, indices, 64, "echo")]
    script = (
        "import json, sys\n"
        "from vllm.entrypoints.openai.completion.protocol import CompletionRequest\n"
        "for p in json.load(sys.stdin):\n"
        "    r = CompletionRequest.model_validate({'model': 'tiny', **p})\n"
        "    r.to_sampling_params(max_tokens=1)\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [vllm_python(), "-c", script], input=json.dumps(payloads), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_generate_through_chat_completions(vllm_server: str, tiny_model: Path) -> None:
    # Seeds forced on: these short prompts are prefilled in one step, which the CPU build's
    # seeded sampling handles (chunked prefill is what it cannot).
    http = HttpEngine([vllm_server], tokenizer=str(tiny_model), seeds="on")
    chat = ({"role": "user", "content": "What are the diagnoses for this patient?"},)
    request = GenerateRequest(messages=chat, n=2, seed=3, temperature=0.8, top_p=0.9, max_tokens=8)
    first = http.generate([request, GenerateRequest(prompt="Cholera is", max_tokens=4, seed=1)])
    again = http.generate([request])
    assert len(first[0].texts) == 2 and first[0].texts == again[0].texts
    assert all(n <= 8 for n in first[0].completion_tokens)
    assert first[0].prompt_tokens > 0 and len(first[1].texts) == 1


def test_wrong_model_name_lists_the_served_ones(vllm_server: str, tiny_model: Path) -> None:
    with pytest.raises(UserError, match=r"serves \['tiny'\].*--served-model"):
        HttpEngine([vllm_server], served_model="llama", tokenizer=str(tiny_model))


def test_unreachable_endpoint_names_the_fix(tiny_model: Path) -> None:
    with pytest.raises(UserError, match="make serve"):
        HttpEngine([f"http://127.0.0.1:{free_port()}"], tokenizer=str(tiny_model))


def test_prompts_that_share_heads_are_sent_together(engine: Any) -> None:
    family = sample_requests(engine.tokenizer, 64, seed=2, run=16)
    shuffled = family[1::2] + family[::2]
    tries = [Trie.build(r.continuations) for r in shuffled]
    (job, *_) = trie_jobs(shuffled, tries, list(range(len(shuffled))), 1024)
    sent = [tuple(p) for p in job.payload["prompt"]]
    assert sent == sorted(r.prefix for r in shuffled)  # the root prompts, in prefix order
    where = endpoint_slices(shuffled, 3)
    by_rank = [where[i] for i in sorted(range(len(shuffled)), key=lambda i: shuffled[i].prefix)]
    assert by_rank == sorted(by_rank) and set(by_rank) == {0, 1, 2}
    assert abs(by_rank.count(0) - by_rank.count(2)) <= 1
