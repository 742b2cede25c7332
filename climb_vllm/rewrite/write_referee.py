"""``python -m climb_vllm.rewrite.write_referee``: fine-tune the pronoun referee
(:mod:`~climb_vllm.rewrite.referee`) on labelled third-party excerpts and write
its weights (about 20 minutes on 2 cores).

Every sex pronoun of every excerpt is one example: its label is whether the labelled rewrite
keeps it (someone else's) or changes it (the patient's). Excerpts whose pronouns do not line up
one to one with the labelled rewrite are left out and counted. Each excerpt is also read with
every sex word swapped (:mod:`~climb_vllm.rewrite.mirror`), and each pronoun the
rewrite asks about along a chain of kept pronouns once more as it is then read, from the chain's
start (:func:`chain_examples`). The encoder's top
:data:`~climb_vllm.rewrite.referee.TUNED_LAYERS` layers and a logistic layer on
the referee's features are trained together (AdamW, binary cross-entropy, a tenth of the steps
warming up, then a linear decay); the settings were chosen on the tenth and eleventh sets with
the referee fitted on the sets before them (NOTES.md).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from climb_vllm.core.errors import UserError
from climb_vllm.resources.data import packaged
from climb_vllm.resources.encoder import Encoder, encoder_fingerprint
from climb_vllm.rewrite.mirror import mirror
from climb_vllm.rewrite.referee import (
    TUNED_LAYERS,
    WEIGHTS,
    Item,
    pooled,
    reading,
    tokenize,
    tuned_names,
)

#: What :func:`mirrored` carries over from each pronoun to its mirror.
T = TypeVar("T")

PRONOUN = re.compile(r"\b(?:he|him|his|himself|she|her|hers|herself)\b", re.IGNORECASE)
#: Passes over the examples, learning rate, examples per step and the seed of the logistic
#: layer's start and of the order of the examples.
EPOCHS, LEARNING_RATE, BATCH, SEED = 4, 1e-4, 16, 0


def examples(path: Path) -> tuple[list[tuple[str, int, int]], list[bool], int]:
    """(pronouns as (text, start, end), whether each is someone else's, excerpts left out) of
    one labelled JSON-lines file (``text``, ``expected`` per line)."""
    items, labels, _, left_out = directed_examples(path)
    return items, labels, left_out


def directed_examples(path: Path) -> tuple[list[Item], list[bool], list[str], int]:
    """:func:`examples`, with the sex each pronoun's excerpt is rewritten to (its ``to``,
    "female" when it has none)."""
    items: list[Item] = []
    labels: list[bool] = []
    directions: list[str] = []
    left_out = 0
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            row = None
        if not isinstance(row, dict) or not {"text", "expected"} <= row.keys():
            raise UserError(
                f"{path}, line {number}: not a labelled excerpt.",
                'give one JSON object per line with "text" and "expected".',
            )
        to = row.get("to", "female")
        if to not in ("female", "male"):
            # Read as the other sex, its chain readings would be those of another rewrite.
            raise UserError(f'{path}, line {number}: "to" is {to!r}.', 'give "female" or "male".')
        found = list(PRONOUN.finditer(row["text"]))
        wanted = PRONOUN.findall(row["expected"])
        if len(found) != len(wanted):
            left_out += 1
            continue
        for match, want in zip(found, wanted):
            items.append((row["text"], match.start(), match.end()))
            labels.append(want.lower() == match.group(0).lower())
            directions.append(to)
    return items, labels, directions, left_out


def mirrored(items: Sequence[Item], labels: Sequence[T]) -> tuple[list[Item], list[T]]:
    """The examples of each excerpt again with every sex word swapped (:func:`~climb_vllm.
    rewrite.mirror.mirror`), the labels unchanged: what the referee is tuned on
    besides the excerpts themselves. An excerpt whose mirror has another number of pronouns is
    not mirrored; so is a text that is in two files, whose pronouns are gathered as one
    excerpt's (one stretch of the twenty-eighth and twenty-ninth sets, 8 pronouns).

    Args:
        items: the pronouns as ``(text, start, end)``, an excerpt's pronouns in order.
        labels: whether each is someone else's (or anything else to carry over to the mirror,
            such as the label and the excerpt's direction).
    """
    by_text: dict[str, list[T]] = {}
    for (text, _, _), label in zip(items, labels):
        by_text.setdefault(text, []).append(label)
    out_items: list[Item] = []
    out_labels: list[T] = []
    for text, kept in by_text.items():
        other = mirror(text)
        found = list(PRONOUN.finditer(other))
        if len(found) == len(kept):
            out_items += [(other, m.start(), m.end()) for m in found]
            out_labels += kept
    return out_items, out_labels


class _LabelsAsReferee:
    """Stands in for the referee while :func:`chain_examples` runs the rewrite: answers with
    the labels, and records each word asked about along a chain (with where its reading
    starts)."""

    def __init__(self) -> None:
        self.labels: dict[tuple[str, int], bool] = {}
        self.asked: list[tuple[str, int, int, int]] = []

    def decide(
        self, text: str, start: int, end: int, since: int | None = None
    ) -> tuple[bool, bool]:
        if since is not None:
            self.asked.append((text, start, end, since))
        return self.labels[(text, start)], False

    def third_party_probability(
        self, text: str, start: int, end: int, since: int | None = None
    ) -> float:
        return float(self.labels[(text, start)])


def chain_examples(
    items: Sequence[Item], labels: Sequence[bool], directions: Sequence[str]
) -> tuple[list[Item], list[bool]]:
    """The pronouns the rewrite asks about along a chain of kept pronouns, each cut to what the
    referee then reads (from where the chain's first pronoun's reading began, not its own
    window), with their labels: so that the referee is tuned on the readings it is asked to
    judge. The labels stand in for the referee's answers while the rewrite runs, so a chain
    is the one the labelled rewrite makes.

    Args:
        items: the pronouns as ``(text, start, end)``, an excerpt's pronouns in order.
        labels: whether each is someone else's.
        directions: the sex each pronoun's excerpt is rewritten to ("female", "male").
    """
    from climb_vllm.rewrite import sex_rewrite

    oracle = _LabelsAsReferee()
    by_text: dict[tuple[str, str], dict[tuple[str, int], bool]] = {}
    for (text, start, _), label, to in zip(items, labels, directions):
        by_text.setdefault((text, to), {})[(text, start)] = label
    out_items: list[Item] = []
    out_labels: list[bool] = []
    for (text, to), known in by_text.items():
        oracle.labels, oracle.asked = known, []
        sex_rewrite.swap_sex(text, to, judge=oracle)
        for _, start, end, since in oracle.asked:
            chained = reading(text, start, end, since)
            # A chain read no further back than the word's own window adds nothing.
            if chained != reading(text, start, end):
                out_items.append(chained)
                out_labels.append(known[(text, start)])
    return out_items, out_labels


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Fit on the given labelled files and write the weights; returns what was written.

    Args:
        argv: the labelled files (JSON lines), then ``--out FILE`` to write elsewhere than the
            package's data folder.
    """
    parser = argparse.ArgumentParser(prog="python -m climb_vllm.rewrite.write_referee")
    parser.add_argument("files", type=Path, nargs="+", help="labelled third-party excerpts")
    parser.add_argument("--out", type=Path, help="where to write (default: the package)")
    args = parser.parse_args(argv)
    missing = [str(f) for f in args.files if not f.exists()]
    if missing:
        raise UserError(f"No such labelled file: {', '.join(missing)}.", "give existing files.")
    items: list[tuple[str, int, int]] = []
    labels: list[bool] = []
    directions: list[str] = []
    counts, left_out = [], 0
    for path in args.files:
        found, kept, towards, skipped = directed_examples(path)
        items += found
        labels += kept
        directions += towards
        counts.append(len(found))
        left_out += skipped
    encoder = Encoder(device="cpu")
    mirror_items, carried = mirrored(items, list(zip(labels, directions)))
    mirror_labels = [label for label, _ in carried]
    # A mirror is rewritten the other way: its patient is of the other sex.
    mirror_directions = ["female" if to == "male" else "male" for _, to in carried]
    chain_items, chain_labels = chain_examples(
        items + mirror_items, labels + mirror_labels, directions + mirror_directions
    )
    # Every example is cut to what the referee reads, then read whole.
    read = [reading(*item) for item in items + mirror_items] + chain_items
    arrays = fine_tune(encoder, read, labels + mirror_labels + chain_labels, whole=True)
    out = args.out or packaged(*WEIGHTS)
    out.parent.mkdir(parents=True, exist_ok=True)
    facts: dict[str, Any] = {
        "sets": [p.name for p in args.files],
        "pronouns_per_set": counts,
        "third_party_pronouns": sum(labels),
        "excerpts_left_out": left_out,
        "mirrored_pronouns": len(mirror_items),
        "chain_readings": len(chain_items),
        "tuned_layers": TUNED_LAYERS,
        "epochs": EPOCHS,
        "learning_rate": LEARNING_RATE,
        "batch": BATCH,
        "seed": SEED,
        "encoder": encoder_fingerprint(),
    }
    # Half precision for the layers' differences: they are small, so this moves a probability
    # by under 0.001 (a test compares both precisions) and halves the package's file.
    stored = {k: v.astype(np.float16) if k.startswith("delta/") else v for k, v in arrays.items()}
    with open(out, "wb") as handle:
        np.savez(handle, **stored, **facts)
    print(json.dumps(facts))
    return facts


def fine_tune(
    encoder: Encoder,
    items: Sequence[Item],
    labels: Sequence[bool],
    epochs: int = EPOCHS,
    whole: bool = False,
) -> dict[str, Any]:
    """Train a copy of the encoder's top layers and a logistic layer to tell someone else's
    pronoun (label True) from the patient's; returns the arrays to store: ``delta/<name>`` per
    tuned parameter (tuned minus packaged, float32), ``coef`` and ``intercept``.

    Args:
        encoder: the packaged encoder (left unchanged).
        items: the pronouns, as ``(text, start, end)``.
        labels: whether each is someone else's.
        epochs: passes over the examples.
        whole: each item's text is already what the referee reads (else its window is cut).
    """
    import copy

    import torch

    torch.manual_seed(SEED)
    order = random.Random(SEED)
    transformer: Any = copy.deepcopy(encoder.model[0].auto_model).cpu()
    names = tuned_names(transformer)
    for name, parameter in transformer.named_parameters():
        parameter.requires_grad = name in names
    base = {n: p.detach().clone() for n, p in transformer.named_parameters() if n in names}
    head = torch.nn.Linear(2 * transformer.config.hidden_size, 1)
    trained = [p for p in transformer.parameters() if p.requires_grad] + list(head.parameters())
    optimiser = torch.optim.AdamW(trained, lr=LEARNING_RATE, weight_decay=0.01)
    data = list(zip(tokenize(encoder.model.tokenizer, items, whole), labels))
    steps = max(1, epochs * -(-len(data) // BATCH))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / (0.1 * steps)) * max(0.0, (steps - s) / steps)
    )
    transformer.train()  # dropout on, as the encoder was trained
    for _ in range(epochs):
        order.shuffle(data)
        for lo in range(0, len(data), BATCH):
            chunk = data[lo : lo + BATCH]
            logits = head(pooled(transformer, [row for row, _ in chunk])).squeeze(1)
            target = torch.tensor([float(label) for _, label in chunk])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target)
            optimiser.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            optimiser.step()
            schedule.step()
    arrays: dict[str, Any] = {
        f"delta/{n}": (p.detach() - base[n]).numpy()
        for n, p in transformer.named_parameters()
        if n in names
    }
    arrays["coef"] = head.weight.detach()[0].numpy().astype(np.float32)
    arrays["intercept"] = np.float64(head.bias.detach()[0].item())
    return arrays


if __name__ == "__main__":
    main()
