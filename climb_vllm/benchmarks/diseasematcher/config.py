"""The configuration of a DiseaseMatcher run."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from climb_vllm.benchmarks.hive.config import GenerationConfig


class DiseaseMatcherConfig(GenerationConfig):
    """A DiseaseMatcher run: answers of up to 180 new tokens (a pick and a short reason)."""

    benchmark: Literal["diseasematcher"] = "diseasematcher"
    max_tokens: int = Field(default=180, ge=1)
