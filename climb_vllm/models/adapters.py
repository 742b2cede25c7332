"""LoRA adapters: their identity for the manifest, loading them in-process, the vLLM flags that
serve them, and a tiny random one for tests and the demo.

An adapter is a folder as ``peft`` saves it: ``adapter_config.json`` (rank ``r``,
``lora_alpha``, ``target_modules``, the base model) and ``adapter_model.safetensors``. The
in-process engine merges it into the base weights with ``peft`` (the optional ``lora`` extra);
vLLM serves it under a name with ``--enable-lora --lora-modules NAME=PATH``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from climb_vllm.core.errors import UserError

CONFIG = "adapter_config.json"
INSTALL = "pip install -e '.[lora]' (peft)"


def _config(path: Path) -> dict[str, Any]:
    """The adapter's ``adapter_config.json``; UserError when the folder is not an adapter."""
    file = path.expanduser() / CONFIG
    if not file.is_file():
        raise UserError(
            f"{path} is not a LoRA adapter folder (no {CONFIG}).",
            "pass the folder that peft's save_pretrained wrote (adapter_config.json and "
            "adapter_model.safetensors); 'climb-vllm demo-model DIR --lora OUT' makes a tiny one.",
        )
    config: dict[str, Any] = json.loads(file.read_text())
    if config.get("peft_type", "LORA") != "LORA":
        raise UserError(
            f"{path} holds a {config.get('peft_type')} adapter, not LoRA.",
            "pass a LoRA adapter (vLLM serves LoRA only).",
        )
    return config


def describe_adapter(path: str | Path) -> dict[str, Any]:
    """Manifest facts of an adapter folder: path, content hash, rank, alpha, target modules.

    The hash is SHA-256 over every file's name and bytes except the free-text README, so two
    folders with the same weights and configuration hash alike.
    """
    folder = Path(path).expanduser()
    config = _config(folder)
    digest = hashlib.sha256()
    for item in sorted(folder.iterdir()):
        if item.is_file() and item.name != "README.md":
            digest.update(item.name.encode())
            digest.update(item.read_bytes())
    targets = config.get("target_modules")
    return {
        "path": str(folder),
        "sha256": digest.hexdigest(),
        "rank": config.get("r"),
        "alpha": config.get("lora_alpha"),
        "target_modules": sorted(targets) if isinstance(targets, list) else targets,
        "base_model": config.get("base_model_name_or_path"),
    }


def apply_adapter(model: Any, path: str | Path) -> Any:
    """The model with the adapter merged into its weights (``peft``'s ``merge_and_unload``).

    Merging gives the adapted model's log-probs with the plain model's speed, and leaves a
    plain transformers model, so every scorer works on it unchanged.

    Raises:
        UserError: peft is missing, or the folder is not a LoRA adapter for this model.
    """
    _config(Path(path))
    try:
        from peft import PeftModel
    except ImportError as exc:
        raise UserError("Loading a LoRA adapter in-process needs peft.", INSTALL) from exc
    try:
        merged = PeftModel.from_pretrained(model, str(Path(path).expanduser()))
    except (ValueError, RuntimeError, KeyError) as exc:
        raise UserError(
            f"The adapter {path} does not fit this model ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0][:200] if str(exc) else ''}).",
            "pass an adapter trained on this base model.",
        ) from exc
    return merged.merge_and_unload().eval()


def parse_adapters(spec: str) -> dict[str, Path]:
    """``name=path,name=path`` (as ``make serve ADAPTERS=...`` takes it) as {name: folder}.

    Raises:
        UserError: an entry without ``=``, a repeated name, or a folder that is not an adapter.
    """
    out: dict[str, Path] = {}
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            continue
        name, sep, folder = entry.partition("=")
        if not sep or not name or not folder:
            raise UserError(f"Adapter entry {entry!r} is not NAME=PATH.", "use NAME=PATH,...")
        if name in out:
            raise UserError(f"Adapter name {name!r} is given twice.", "give each a unique name.")
        _config(Path(folder))
        out[name] = Path(folder).expanduser()
    return out


def lora_flags(adapters: dict[str, Path]) -> list[str]:
    """vLLM flags that serve ``adapters`` beside the base model: LoRA on, each adapter by name,
    the largest rank among them as ``--max-lora-rank``, and room for all of them in a batch."""
    if not adapters:
        return []
    ranks = [int(_config(folder).get("r") or 8) for folder in adapters.values()]
    # vLLM accepts only these ranks as --max-lora-rank; pick the smallest that fits them all.
    allowed = (1, 8, 16, 32, 64, 128, 256, 320, 512)
    rank = next((r for r in allowed if r >= max(ranks)), max(ranks))
    modules = [f"{name}={folder}" for name, folder in adapters.items()]
    return [
        "--enable-lora",
        "--max-lora-rank",
        str(rank),
        "--max-loras",
        str(len(adapters)),
        "--lora-modules",
        *modules,
    ]


def make_demo_adapter(model: Path, out: Path, seed: int = 0, rank: int = 4) -> Path:
    """A tiny random LoRA adapter (q and v projections) for the model folder, written to ``out``.

    Its B matrices are random too (peft's ``init_lora_weights=False``), so the adapter really
    changes the model's outputs.
    """
    try:
        import torch
        import transformers
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:
        raise UserError("Making a LoRA adapter needs peft.", INSTALL) from exc
    torch.manual_seed(seed)
    base = transformers.AutoModelForCausalLM.from_pretrained(str(model))
    config = LoraConfig(
        r=rank, lora_alpha=2 * rank, target_modules=["q_proj", "v_proj"], init_lora_weights=False
    )
    get_peft_model(base, config).save_pretrained(str(out))
    return out
