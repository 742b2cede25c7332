"""The in-process engine on a real model and tokenizer (Gemma 3 270M, 262,144-token vocabulary):
its log-probs equal an independent raw-text computation, and its passes fit in memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from climb_vllm.benchmarks.intrinsic.config import DEFAULT_TEMPLATE
from climb_vllm.engines.boundary import BoundaryEncoder
from climb_vllm.engines.memory import bytes_per_position
from climb_vllm.resources.names import load_names
from tests.helpers import raw_text_logprob

DESCRIPTIONS = (
    "Cholera due to Vibrio cholerae 01, biovar cholerae",
    "Malignant neoplasm of upper-outer quadrant of right female breast",
    "Type 2 diabetes mellitus without complications",
    "Sickle-cell disorder, unspecified",
    "Encounter for screening for malignant neoplasm of prostate",
)


def test_tree_scorer_equals_raw_text_log_probs_on_the_real_model(real_engine: Any) -> None:
    tokenizer = real_engine.tokenizer
    names = load_names().distinct(5)
    prompts = [DEFAULT_TEMPLATE.format(description=d) for d in DESCRIPTIONS]
    # The slice covers the cases that matter: names of several tokens, and names whose first
    # token carries the space before them.
    pieces = {n: tokenizer(f"{prompts[0]} {n}")["input_ids"] for n in names}
    base = len(tokenizer(prompts[0])["input_ids"])
    lengths = {n: len(ids) - base for n, ids in pieces.items()}
    assert any(v >= 2 for v in lengths.values()), lengths
    assert any(
        tokenizer.convert_ids_to_tokens(ids[base]).startswith("▁") for ids in pieces.values()
    )
    planned = BoundaryEncoder(tokenizer).plan(prompts, names)
    results = real_engine.score([p.request for p in planned])
    worst = 0.0
    for plan, result in zip(planned, results):
        for j, value in zip(plan.name_indices, result.logprobs):
            reference = raw_text_logprob(
                real_engine.model, tokenizer, prompts[plan.text_index], names[j]
            )
            worst = max(worst, abs(value - reference))
    assert worst < 1e-4, worst


def test_passes_are_sized_to_the_vocabulary(real_engine: Any, real_model: Path) -> None:
    """The default pass of the real model leaves room for its 262k-wide logits at every
    position: positions x bytes per position stays within half the memory free at load time."""
    config = real_engine.model.config
    assert config.vocab_size == 262_144
    per_position = bytes_per_position(config, 4, 512)
    assert per_position >= config.vocab_size * 12
    assert real_engine.batch_tokens_from == "free memory"
    assert 64 <= real_engine.batch_tokens < 8192
    assert (real_model / "climb_vllm_source.json").is_file()
    assert real_engine.describe()["source"]["sha256"].startswith("a5fd3b62")


def test_real_model_renders_chat_requests_with_its_plain_template(real_engine: Any) -> None:
    """The base model ships no chat template; its folder carries the plain one, so the
    generation benchmarks' chat requests render in-process as the server renders them."""
    from climb_vllm.engines.base import GenerateRequest

    request = GenerateRequest(messages=({"role": "user", "content": "What is 2+2?"},))
    text = real_engine.tokenizer.decode(real_engine.render(request))
    assert text.endswith("Question: What is 2+2?\n\nAnswer:")
