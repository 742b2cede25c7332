"""The in-process engine on a real tiny model: prefix-shared scoring equals naive scoring."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import torch

from climb_vllm.benchmarks.intrinsic import task as intrinsic
from climb_vllm.core.errors import UserError
from climb_vllm.engines import token_tree
from climb_vllm.engines.base import Engine, GenerateRequest, ScoreRequest
from climb_vllm.engines.local import LocalEngine
from climb_vllm.engines.trie import Trie


@pytest.fixture(scope="module")
def sample_requests(engine: Any) -> list[ScoreRequest]:
    # Top-10 names: single-token and multi-token names that share first tokens.
    return intrinsic.sample_requests(engine.tokenizer, 40, top_k=10, seed=3)


def test_engine_satisfies_the_protocol(engine: Any) -> None:
    assert isinstance(engine, Engine)


def test_prefix_shared_equals_naive_within_1e4(
    engine: Any, tiny_model: Path, sample_requests: list[ScoreRequest]
) -> None:
    naive = LocalEngine(str(tiny_model), device="cpu", scorer="naive")
    shared = engine.score(sample_requests)
    reference = naive.score(sample_requests)
    worst = 0.0
    for a, b in zip(shared, reference):
        assert len(a.logprobs) == len(b.logprobs)
        for x, y in zip(a.logprobs, b.logprobs):
            worst = max(worst, abs(x - y))
        for ta, tb in zip(a.token_logprobs, b.token_logprobs):
            assert len(ta) == len(tb)
    assert worst < 1e-4


def test_one_pair_against_a_plain_forward(engine: Any, sample_requests: list[ScoreRequest]) -> None:
    request = sample_requests[0]
    longest = max(request.continuations, key=len)
    ids = torch.tensor([list(request.prefix + longest)])
    with torch.inference_mode():
        logprobs = torch.log_softmax(engine.model(input_ids=ids).logits[0].float(), dim=-1)
    p = len(request.prefix)
    expected = sum(float(logprobs[p - 1 + k, t]) for k, t in enumerate(longest))
    got = engine.score([ScoreRequest(request.prefix, (longest,))])[0].logprobs[0]
    assert got == pytest.approx(expected, abs=1e-4)


def test_results_do_not_depend_on_batching(
    tiny_model: Path, engine: Any, sample_requests: list[ScoreRequest]
) -> None:
    small = LocalEngine(str(tiny_model), device="cpu", batch_tokens=128)
    a = engine.score(sample_requests)
    b = small.score(sample_requests)
    assert small.stats.batches > engine.stats.batches or small.stats.batches > 5
    for x, y in zip(a, b):
        assert x.logprobs == pytest.approx(y.logprobs, abs=1e-4)


def test_prefix_sharing_computes_far_fewer_tokens(
    tiny_model: Path, sample_requests: list[ScoreRequest]
) -> None:
    shared = LocalEngine(str(tiny_model), device="cpu")
    naive = LocalEngine(str(tiny_model), device="cpu", scorer="naive")
    shared.score(sample_requests)
    naive.score(sample_requests)
    assert naive.stats.forward_tokens > 5 * shared.stats.forward_tokens
    assert shared.stats.head_rows < naive.stats.head_rows


@pytest.fixture(scope="module")
def family_requests(engine: Any) -> list[ScoreRequest]:
    # Runs of consecutive codes: 7th-character families and siblings share description heads.
    return intrinsic.sample_requests(engine.tokenizer, 96, top_k=10, seed=5, run=32)


@pytest.mark.parametrize("row_tokens", [16, 256, 4096])
def test_shared_heads_equal_naive_within_1e4(
    tiny_model: Path, family_requests: list[ScoreRequest], row_tokens: int
) -> None:
    naive = LocalEngine(str(tiny_model), device="cpu", scorer="naive").score(family_requests)
    tree = LocalEngine(str(tiny_model), device="cpu", scorer="tree", row_tokens=row_tokens)
    got = tree.score(family_requests)
    for a, b in zip(got, naive):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
        assert [len(t) for t in a.token_logprobs] == [len(t) for t in b.token_logprobs]
        for ta, tb in zip(a.token_logprobs, b.token_logprobs):
            assert ta == pytest.approx(tb, abs=1e-4)


def test_in_fp64_every_layout_equals_naive_to_rounding(
    tiny_model: Path, family_requests: list[ScoreRequest]
) -> None:
    # In fp64 the only differences left are rounding's (~1e-13): any wrong mask entry,
    # position or read column would show up as a difference of order 1e-2 or more.
    chosen = family_requests[:40]
    naive = LocalEngine(str(tiny_model), device="cpu", dtype="float64", scorer="naive")
    want = naive.score(chosen)
    for scorer in ("tree", "prefix"):
        engine = LocalEngine(
            str(tiny_model), device="cpu", dtype="float64", scorer=scorer, row_tokens=64
        )
        for a, b in zip(engine.score(chosen), want):
            assert a.logprobs == pytest.approx(b.logprobs, abs=1e-9)


def test_a_codes_values_do_not_depend_on_its_row_partners(
    engine: Any, family_requests: list[ScoreRequest]
) -> None:
    together = engine.score(family_requests)
    for k in (0, 17, 50, len(family_requests) - 1):
        alone = engine.score([family_requests[k]])[0]
        assert alone.logprobs == pytest.approx(together[k].logprobs, abs=1e-5)
    # Reordered input gives the same values in the caller's order.
    backwards = engine.score(family_requests[::-1])[::-1]
    for a, b in zip(backwards, together):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)


def test_shared_heads_feed_fewer_tokens_than_per_prompt_sharing(
    tiny_model: Path, family_requests: list[ScoreRequest]
) -> None:
    tree = LocalEngine(str(tiny_model), device="cpu", scorer="tree")
    prefix = LocalEngine(str(tiny_model), device="cpu", scorer="prefix")
    tree.score(family_requests)
    prefix.score(family_requests)
    tries = [Trie.build(r.continuations) for r in family_requests]
    prefixes = [r.prefix for r in family_requests]
    assert tree.stats.forward_tokens == token_tree.forward_tokens(prefixes, tries, 256)
    assert prefix.stats.forward_tokens == sum(
        len(p) + len(t.tokens) for p, t in zip(prefixes, tries)
    )
    assert tree.stats.forward_tokens < 0.95 * prefix.stats.forward_tokens
    assert tree.stats.head_rows == prefix.stats.head_rows  # the same reads
    assert tree.describe()["scorer"] == "tree"


def test_unknown_scorer_names_the_choices(tiny_model: Path) -> None:
    with pytest.raises(UserError, match="tree, prefix, naive"):
        LocalEngine(str(tiny_model), device="cpu", scorer="fast")


def test_trie_shares_first_tokens() -> None:
    trie = Trie.build(((5,), (5, 6), (5, 6, 7), (8, 9)))
    # internal nodes: (5,), (5, 6), (8,)
    assert trie.tokens == (5, 6, 8)
    assert trie.depths == (1, 2, 1)
    assert trie.ancestors == ((0,), (0, 1), (2,))
    assert trie.reads[2] == ((0, 5), (1, 6), (2, 7))


def test_empty_prefix_is_rejected(engine: Any) -> None:
    with pytest.raises(ValueError, match="non-empty prefix"):
        engine.score([ScoreRequest((), ((1,),))])


def test_generate_is_seeded_and_bounded(engine: Any) -> None:
    chat = ({"role": "user", "content": "What are the diagnoses for this patient?"},)
    request = GenerateRequest(messages=chat, n=3, seed=7, temperature=0.8, top_p=0.9, max_tokens=12)
    first = engine.generate([request])[0]
    again = engine.generate([request])[0]
    assert first == again
    assert len(first.texts) == 3 and all(n <= 12 for n in first.completion_tokens)
    assert set(first.finish_reasons) <= {"stop", "length"}
    other = engine.generate(
        [GenerateRequest(messages=chat, n=3, seed=8, temperature=0.8, max_tokens=12)]
    )[0]
    assert other.texts != first.texts
    rendered = engine.render(request)
    assert first.prompt_tokens == len(rendered)
    assert rendered[0] == engine.tokenizer.bos_token_id  # the chat template's BOS, once
    assert rendered.count(engine.tokenizer.bos_token_id) == 1


def test_greedy_generation_is_deterministic(engine: Any) -> None:
    request = GenerateRequest(prompt="Cholera is related to", temperature=0.0, max_tokens=8, seed=1)
    other_seed = GenerateRequest(
        prompt="Cholera is related to", temperature=0.0, max_tokens=8, seed=2
    )
    assert engine.generate([request]) == engine.generate([other_seed])


def test_missing_model_folder_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="demo-model"):
        LocalEngine(str(tmp_path / "nope"), device="cpu")


def test_model_without_tokenizer_names_the_fix(tiny_model: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(tiny_model / name, bare / name)
    with pytest.raises(UserError, match="--tokenizer"):
        LocalEngine(str(bare), device="cpu")
    # ...and passing the tokenizer separately works.
    assert LocalEngine(str(bare), tokenizer=str(tiny_model), device="cpu").tokenizer is not None


def test_describe_has_provenance(engine: Any) -> None:
    facts = engine.describe()
    for key in ("engine", "model", "model_fingerprint", "device", "dtype", "torch", "transformers"):
        assert facts[key] is not None
    assert facts["split_head"] is True
