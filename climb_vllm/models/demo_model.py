"""Build a tiny random Llama-architecture model offline, for the demo, tests and benchmarks.

The tokenizer is a byte-level BPE trained with ``tokenizers`` on the ICD-10-CM descriptions and
the packaged names, so prompts tokenize like real clinical text (names split into a few
sub-tokens, which exercises multi-token scoring). Weights are random from a ``LlamaConfig``; the
head dimension defaults to 32 because vLLM's CPU attention rejects smaller heads and the serving
tests load the same folder. Everything is written with ``save_pretrained`` and loads through the
ordinary ``from_pretrained`` path, exactly as a downloaded model would.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from climb_vllm.core.errors import UserError

#: A minimal chat template: turns wrapped in role markers, each closed by the EOS token.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "<|{{ message['role'] }}|>\n{{ message['content'] }}{{ eos_token }}\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


#: A file in every demo model's folder.
DEMO_MARKER = "CLIMB_VLLM_DEMO_MODEL.txt"


def model_or_tiny(model: Path | None) -> tuple[Path, Callable[[], None]]:
    """``model``, or the tiny demo model built now in a temporary folder (for benches that
    measure plumbing); with the function that removes that folder (nothing for ``model``)."""
    if model is not None:
        return model, lambda: None
    import tempfile

    tmp = tempfile.TemporaryDirectory()
    return build_demo_model(Path(tmp.name) / "tiny"), tmp.cleanup


def create_folder(out: Path) -> None:
    """Create a model folder (and its parents); UserError naming the folder when it cannot."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"Cannot create {out}: {exc.strerror}.", "choose a writable folder."
        ) from exc


def build_demo_model(
    out: Path,
    *,
    vocab_size: int = 4096,
    hidden_size: int = 64,
    layers: int = 2,
    heads: int = 2,
    intermediate_size: int = 128,
    seed: int = 0,
) -> Path:
    """Train a BPE tokenizer and save a random Llama model with it to ``out``.

    Args:
        out: destination folder (created; existing model files are overwritten).
        vocab_size: BPE vocabulary size.
        hidden_size: model width; ``hidden_size / heads`` is the head dimension (keep >= 32).
        layers: decoder layers.
        heads: attention heads (and key-value heads).
        intermediate_size: MLP width.
        seed: seed for the weights.
    """
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from climb_vllm.resources.names import load_names
    from climb_vllm.resources.ontology import load_ontology

    if hidden_size % heads or hidden_size // heads < 32:
        raise UserError(
            f"hidden size {hidden_size} with {heads} heads gives a head dimension below 32.",
            "use hidden_size / heads >= 32 (vLLM's CPU attention needs it).",
        )
    create_folder(out)

    ontology = load_ontology("2021")
    descriptions = list(ontology.table["description"])
    # Names after the prompt, more often for higher ranks: frequent names become single BPE
    # tokens and rarer ones split into two or three, as with the tokenizers of real models.
    repeats = {1: 1500, 2: 1500, 3: 150, 4: 60, 5: 20}
    corpus = descriptions + [
        f"{descriptions[(i * 7919) % len(descriptions)]} is related to the name: {slot.name}"
        for slot in load_names().slots
        for i in range(repeats.get(slot.rank, 1))
    ]
    special = ["<s>", "</s>", "<pad>", "<|system|>", "<|user|>", "<|assistant|>"]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    bos = tokenizer.token_to_id("<s>")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos)]
    )
    fast: Any = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        additional_special_tokens=special[3:],
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)

    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=512,
        bos_token_id=bos,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        # A wider init than the usual 0.02 so that the random model's next-token
        # distributions are far from uniform and bias metrics are not all ~0.
        initializer_range=0.2,
        tie_word_embeddings=False,
    )
    transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.bos_token_id = bos
    model.generation_config.eos_token_id = fast.eos_token_id
    model.generation_config.pad_token_id = fast.pad_token_id
    model.save_pretrained(out)
    # Read by the local engine, so that manifests and reports warn that the numbers are noise.
    (out / DEMO_MARKER).write_text(
        "A tiny Llama-architecture model with random weights, built by climb-vllm demo-model: "
        "its benchmark numbers are noise and only show that the evaluation path works.\n"
    )
    return out
