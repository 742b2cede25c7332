"""Run configuration validation and hashing."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from climb_vllm.benchmarks.intrinsic.config import IntrinsicConfig
from climb_vllm.core.manifest import Section


def test_speed_settings_do_not_change_the_hash() -> None:
    a = IntrinsicConfig(model="m", batch_tokens=1024, display="plain")
    b = IntrinsicConfig(model="m", batch_tokens=8192, display="rich", compile_layers=True)
    assert a.config_hash() == b.config_hash()
    assert a.config_hash() != IntrinsicConfig(model="m", top_k=4).config_hash()
    assert a.config_hash() != IntrinsicConfig(model="m", device="cuda").config_hash()


def test_unknown_fields_and_bad_values_are_rejected() -> None:
    with pytest.raises(ValidationError):
        IntrinsicConfig(model="m", topk=5)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        IntrinsicConfig(model="m", top_k=51)
    with pytest.raises(ValidationError, match="description"):
        IntrinsicConfig(model="m", template="no slot")


def test_analysis_settings_are_not_hashed_and_come_back_from_the_manifest() -> None:
    plain = IntrinsicConfig(model="m")
    other = IntrinsicConfig(model="m", sex_rule="listed", pooling="names")
    assert plain.config_hash() == other.config_hash()
    assert "sex_rule" not in other.hashed_fields()
    assert other.analysis_fields() == {"sex_rule": "listed", "pooling": "names"}
    section = Section(config=other.hashed_fields(), analysis=other.analysis_fields())
    assert IntrinsicConfig.from_section(section) == other
    # A run made before these settings existed gets their defaults.
    assert IntrinsicConfig.from_section(Section(config=plain.hashed_fields())) == plain
