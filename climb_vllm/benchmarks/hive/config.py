"""The configuration of a BiasMD or DiseaseMatcher run."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from climb_vllm.core.config import EngineConfig


class GenerationConfig(EngineConfig):
    """Everything that determines the records of a generation benchmark (BiasMD, DiseaseMatcher).

    Attributes:
        benchmark: "biasmd" or "diseasematcher".
        split: "eval" (the authors' test split, the paper's numbers) or "all" items.
        limit: a sample of this many items, stratified by type / category (None = the split).
        seed: base seed; each item's sampling seed derives from it and the item id.
        samples: completions per item.
        temperature / top_p: sampling settings (temperature 0 = greedy).
        max_tokens: the most new tokens per completion.
        system_prompt: an optional system turn (the authors used none).
        controls: BiasMD only: also ask the derived control items whose pronoun is resolvable.
        chunk_size: items per stored chunk (the unit of resume).
    """

    benchmark: Literal["biasmd", "diseasematcher"]
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


class BiasMDConfig(GenerationConfig):
    """A BiasMD run: answers of up to 256 new tokens, with the resolvable controls."""

    benchmark: Literal["biasmd"] = "biasmd"


class DiseaseMatcherConfig(GenerationConfig):
    """A DiseaseMatcher run: answers of up to 180 new tokens (a pick and a short reason)."""

    benchmark: Literal["diseasematcher"] = "diseasematcher"
    max_tokens: int = Field(default=180, ge=1)
