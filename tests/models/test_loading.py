"""Opening a model: device and dtype choices, hub ids offline, and a model folder's identity."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from climb_vllm.core.errors import UserError
from climb_vllm.models import loading


def test_auto_choices_resolve_for_this_machine() -> None:
    device, dtype = loading.resolve_device("auto", "auto")
    assert device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert dtype == ("bfloat16" if device == "cuda" else "float32")
    assert loading.resolve_device("cpu", "bfloat16") == ("cpu", "bfloat16")


@pytest.mark.parametrize(
    ("device", "dtype", "fix"),
    [("tpu", "auto", "cpu, cuda"), ("cpu", "fp8", "float32"), ("cuda", "auto", "--device cpu")],
)
def test_bad_choices_name_the_fix(device: str, dtype: str, fix: str) -> None:
    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has a GPU, so --device cuda is a valid choice here")
    with pytest.raises(UserError, match=fix):
        loading.resolve_device(device, dtype)


def test_an_uncached_hub_id_offline_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(UserError, match="--model PATH"):
        loading.require_hub_model("no-such-org/no-such-model-xyz", None)


def test_fingerprint_follows_config_and_weights(tiny_model: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(tiny_model, copy)
    assert loading.fingerprint(copy) == loading.fingerprint(tiny_model)
    config = copy / "config.json"
    config.write_text(config.read_text().replace("}", ', "note": 1}', 1))
    assert loading.fingerprint(copy) != loading.fingerprint(tiny_model)
