"""Shape presets: real shapes and tokenizers, weights drawn from the seed at load time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from climb_vllm.cli import main
from climb_vllm.core.errors import UserError
from climb_vllm.engines.base import ScoreRequest
from climb_vllm.engines.local import LocalEngine
from climb_vllm.models import presets
from climb_vllm.models.demo_model import DEMO_MARKER


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Llama 3.2 1B shape cut to one layer (the real width and vocabulary)."""
    out = tmp_path_factory.mktemp("presets") / "llama"
    assert main(["demo-model", str(out), "--preset", "llama-3.2-1b", "--layers", "1"]) == 0
    return out


def test_a_preset_folder_holds_config_and_tokenizer_only(llama: Path) -> None:
    names = {p.name for p in llama.iterdir()}
    assert names == {
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        presets.PRESET_FILE,
        DEMO_MARKER,
    }
    config = json.loads((llama / "config.json").read_text())
    assert (config["hidden_size"], config["vocab_size"], config["num_hidden_layers"]) == (
        2048,
        128256,
        1,
    )
    assert sum(p.stat().st_size for p in llama.iterdir()) < 20 * 2**20


def test_the_llama_3_tokenizer_is_meta_s(llama: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(llama))
    # Reference ids of Meta's tokenizer: BOS, "Hello", " world".
    assert tokenizer("Hello world")["input_ids"] == [128000, 9906, 1917]
    assert tokenizer.convert_ids_to_tokens(tokenizer(" name: Aaliyah")["input_ids"])[1:] == [
        "Ġname",
        ":",
        "ĠA",
        "ali",
        "yah",
    ]
    assert len(tokenizer) == 128256


def test_weights_come_from_the_seed_and_are_labelled_noise(llama: Path) -> None:
    request = ScoreRequest((128000, 9906), ((1917,), (1917, 11)))
    first = LocalEngine(str(llama), device="cpu", dtype="float32")
    again = LocalEngine(str(llama), device="cpu", dtype="float32")
    assert first.score([request]) == again.score([request])
    assert first.describe()["demo_model"] is True
    assert first.describe()["parameters"] > 128256 * 2048  # the real embedding's size
    other = llama.parent / "other-seed"
    main(["demo-model", str(other), "--preset", "llama-3.2-1b", "--layers", "1", "--seed", "1"])
    assert LocalEngine(str(other), device="cpu").score([request]) != first.score([request])


def test_gemma_presets_use_the_real_model_s_tokenizer(real_model: Path, tmp_path: Path) -> None:
    out = presets.build_preset(tmp_path / "gemma", "gemma-3-1b", layers=1)
    assert (out / "tokenizer.json").read_bytes() == (real_model / "tokenizer.json").read_bytes()


def test_unknown_presets_and_bad_hashes_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="Unknown preset"):
        presets.build_preset(tmp_path / "x", "llama-9")
    with pytest.raises(UserError, match="not the recorded"):
        presets._check("0" * 64, presets.LLAMA3_TOKENIZER_SHA256, Path("tokenizer.model"))
    with pytest.raises(UserError, match="layers"):
        presets.build_preset(tmp_path / "x", "gemma-3-1b", layers=0)
