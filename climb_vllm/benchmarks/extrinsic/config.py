"""The configuration of a CLIMB extrinsic run."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from climb_vllm.core.config import EngineConfig
from climb_vllm.core.flags import Flag

#: The pairs of attributes a counterfactual may change together.
Intersection = Literal["sex+ethnicity", "sex+insurance", "ethnicity+insurance"]


class ExtrinsicConfig(EngineConfig):
    """Everything that determines the records and metrics of a CLIMB extrinsic run.

    A field with a :class:`~climb_vllm.core.flags.Flag` is an option of ``eval extrinsic``; its
    description is the option's help. The others:

    Attributes:
        benchmark: always "extrinsic".
        cases_sha256: hash of the case file, so a changed file is never resumed into.
        rewrite_sha256: hash of the sex rewrite's code and the referee's weights
            (:func:`~climb_vllm.rewrite.identity.rewrite_sha256`), so that a run is
            never resumed with counterfactual notes written by another version of them.
        rewrite_decisions_sha256: the decisions file's hash, so that a changed file is a
            changed run.
        system_prompt: an optional system turn (the paper used none).
    """

    benchmark: Literal["extrinsic"] = "extrinsic"
    cases: Annotated[
        str, Flag("--cases", suite=("--cases",), suite_help="extrinsic case file (JSONL)")
    ] = Field(
        default="synthetic",
        description="JSONL case file (format in the README) or 'synthetic' (the packaged 40 cases)",
    )
    cases_sha256: str | None = None
    rewrite_sha256: str | None = None
    # The review file of the sex rewrite's uncertain words (climb_vllm.rewrite.review).
    rewrite_decisions: Annotated[
        str | None, Flag("--rewrite-decisions", suite=("--rewrite-decisions",))
    ] = Field(
        default=None,
        description="a filled-in uncertain_edits.csv of an earlier run: your decisions on the "
        "words the sex rewrite marked uncertain, applied to the counterfactual notes",
    )
    rewrite_decisions_sha256: str | None = None
    icd_release: Annotated[str, Flag("--icd-release", suite=("--icd-release",))] = Field(
        default="2021",
        description="the release the gold codes and the mapping use: 2021 (paper default) or 2026",
    )
    limit: Annotated[
        int | None,
        Flag("--limit", suite=("--limit-extrinsic", "--limit"), suite_help="the first N cases"),
    ] = Field(default=None, ge=1, description="only the first N cases")
    seed: Annotated[
        int, Flag("--seed", suite=("--seed",), suite_help="base seed of every benchmark")
    ] = Field(
        default=0,
        description="base sampling seed (each prompt's seed derives from it and the prompt id)",
    )
    samples: Annotated[int, Flag("--samples", suite=("--samples",))] = Field(
        default=1, ge=1, le=64, description="completions per prompt, k (the paper: 1)"
    )
    # None: the model's own generation settings (the paper's choice); temperature 0 is greedy.
    temperature: Annotated[float | None, Flag("--temperature", suite=("--temperature",))] = Field(
        default=None,
        ge=0.0,
        description="sampling temperature (default: the model's own generation settings, "
        "as the paper)",
    )
    top_p: Annotated[float | None, Flag("--top-p", suite=("--top-p",))] = Field(
        default=None, gt=0.0, le=1.0, description="nucleus mass (default: the model's own)"
    )
    # 650: the length CliBench reserves for an answer; under the clibench protocol, CliBench's
    # max(the model's generation_config max_length, 650) unless given.
    max_tokens: Annotated[
        int,
        Flag(
            "--max-tokens",
            suite=("--extrinsic-max-tokens", "--max-tokens"),
            suite_help="extrinsic: new tokens per answer",
        ),
    ] = Field(default=650, ge=1, description="new tokens per answer")
    # See climb_vllm.benchmarks.extrinsic.layout and climb_vllm.icd_mapping.icdmap.
    protocol: Annotated[
        Literal["default", "clibench"],
        Flag(
            "--protocol",
            suite=("--extrinsic-protocol",),
            suite_help="extrinsic: default or clibench",
        ),
    ] = Field(
        default="default",
        description="default (the project's prompt layout and parsing) or clibench "
        "(CliBench's layout, token budget, segmentation, mapping and drop rule, exactly)",
    )
    # Notes are cut to fit by CliBench's rule.
    context_tokens: Annotated[int, Flag("--context-tokens")] = Field(
        default=0,
        ge=0,
        description="cut the notes to fit this context length (default: the servers' context, "
        "else the local model folder's max_position_embeddings; 0 = never cut)",
    )
    placebo: Annotated[bool, Flag("--no-placebo", negate=True)] = Field(
        default=True, description="skip the placebo variants (the noise floor)"
    )
    intersections: Annotated[
        tuple[Intersection, ...], Flag("--intersection", suite=("--intersection",), repeat=True)
    ] = Field(
        default=(),
        description="also change two attributes at once (repeatable): every combination of "
        "their counterfactual values is a variant, reported beside the sum of the single "
        "changes (the interaction)",
    )
    index_limit: Annotated[
        int | None,
        Flag(
            "--index-limit",
            suite=("--index-limit",),
            suite_help="extrinsic: map onto N sampled codes",
        ),
    ] = Field(
        default=None,
        ge=1,
        description="map onto N sampled codes plus the gold codes instead of all codes (quick "
        "demos)",
    )
    system_prompt: str | None = None
    chunk_size: Annotated[int, Flag("--chunk-size")] = Field(
        default=64, ge=1, description="prompts per stored chunk (the unit of resume)"
    )
