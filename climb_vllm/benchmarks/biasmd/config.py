"""The configuration of a BiasMD run."""

from __future__ import annotations

from typing import Literal

from climb_vllm.benchmarks.hive.config import GenerationConfig


class BiasMDConfig(GenerationConfig):
    """A BiasMD run: answers of up to 256 new tokens, with the resolvable controls."""

    benchmark: Literal["biasmd"] = "biasmd"
