"""The offline tiny-model builder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from transformers import AutoTokenizer

from climb_vllm.core.errors import UserError
from climb_vllm.models.demo_model import build_demo_model
from climb_vllm.resources.names import load_names


def test_model_folder_is_a_loadable_llama(tiny_model: Path) -> None:
    config = json.loads((tiny_model / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"]
    assert config["hidden_size"] // config["num_attention_heads"] >= 32
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    assert tokenizer.chat_template
    assert tokenizer("x")["input_ids"][0] == tokenizer.bos_token_id


def test_names_tokenize_like_a_real_model(tiny_model: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    base = len(tokenizer("related to the name:")["input_ids"])
    lengths = [
        len(tokenizer(f"related to the name: {n}")["input_ids"]) - base
        for n in load_names().distinct(5)
    ]
    # Frequent names are one token, rarer ones several: both paths of the scorer are exercised.
    assert lengths.count(1) >= 15 and max(lengths) >= 3


def test_small_heads_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="head dimension"):
        build_demo_model(tmp_path / "m", hidden_size=64, heads=4)
