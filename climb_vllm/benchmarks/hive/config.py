"""The configuration every HIVE benchmark's run shares (each benchmark subclasses it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from climb_vllm.core.config import EngineConfig


class GenerationConfig(EngineConfig):
    """Everything that determines the records of a generation benchmark (BiasMD, DiseaseMatcher).

    Attributes:
        benchmark: the benchmark's registry name (set by its subclass).
        split: "eval" (the authors' test split, the paper's numbers) or "all" items.
        limit: a sample of this many items, stratified by type / category (None = the split).
        seed: base seed; each item's sampling seed derives from it and the item id.
        samples: completions per item.
        temperature / top_p: sampling settings (temperature 0 = greedy).
        max_tokens: the most new tokens per completion.
        system_prompt: an optional system turn (the authors used none).
        controls: also ask the derived control items, where the benchmark has them (BiasMD's
            resolvable pronouns).
        chunk_size: items per stored chunk (the unit of resume; prompts in choice mode).
        answer: "generate" (sample an answer and grade it, the papers' protocol) or "choice"
            (the option with the highest log-probability; see
            :mod:`climb_vllm.benchmarks.hive.choice`).
    """

    benchmark: str
    split: Literal["eval", "all"] = "eval"
    limit: int | None = Field(default=None, ge=1)
    seed: int = 0
    samples: int = Field(default=1, ge=1, le=64)
    temperature: float = Field(default=0.8, ge=0.0)
    top_p: float = Field(default=0.9, gt=0.0, le=1.0)
    max_tokens: int = Field(default=256, ge=1)
    system_prompt: str | None = None
    controls: bool = True
    chunk_size: int = Field(default=256, ge=1)
    answer: Literal["generate", "choice"] = "generate"

    def hashed_fields(self) -> dict[str, object]:
        """As for every configuration; ``answer`` only when it is "choice", so that runs
        recorded before choice mode existed resume under the same hash."""
        fields = super().hashed_fields()
        if fields.get("answer") == "generate":
            del fields["answer"]
        return fields
