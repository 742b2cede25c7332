"""LoRA adapters: made offline with peft, merged in-process, served by vLLM's CPU build, and the
two compared on the same requests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import torch

from climb_vllm.benchmarks.intrinsic.task import sample_requests
from climb_vllm.cli import main
from climb_vllm.core.errors import UserError
from climb_vllm.engines.base import ScoreRequest
from climb_vllm.engines.local import LocalEngine
from climb_vllm.models.adapters import (
    describe_adapter,
    lora_flags,
    make_demo_adapter,
    parse_adapters,
)
from climb_vllm.serving.launch import serve
from climb_vllm.serving.state import stop
from tests.helpers import free_port, vllm_python


@pytest.fixture(scope="module")
def adapters(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("adapters")
    return {
        "kind": make_demo_adapter(tiny_model, folder / "kind", seed=1),
        "fair": make_demo_adapter(tiny_model, folder / "fair", seed=2, rank=8),
    }


@pytest.fixture(scope="module")
def requests_(engine: Any) -> list[ScoreRequest]:
    return sample_requests(engine.tokenizer, 24, top_k=10, seed=4)


@pytest.fixture(scope="module")
def lora_server(
    tiny_model: Path, adapters: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A vLLM CPU server serving the tiny model and both adapters by name."""
    state = tmp_path_factory.mktemp("serve-lora") / "endpoints.json"
    urls = serve(
        [str(tiny_model)],
        port=free_port(),
        python=vllm_python(),
        cpu=True,
        state=state,
        timeout=600,
        extra=lora_flags(adapters),
    )
    try:
        yield urls[0]
    finally:
        stop(state)


def test_an_adapter_is_described_by_its_content(adapters: dict[str, Path], tmp_path: Path) -> None:
    facts = describe_adapter(adapters["kind"])
    assert facts["rank"] == 4 and facts["alpha"] == 8
    assert facts["target_modules"] == ["q_proj", "v_proj"]
    assert facts["sha256"] == describe_adapter(adapters["kind"])["sha256"]
    assert facts["sha256"] != describe_adapter(adapters["fair"])["sha256"]
    with pytest.raises(UserError, match="adapter_config.json"):
        describe_adapter(tmp_path)


def test_serving_flags_register_every_adapter(adapters: dict[str, Path]) -> None:
    parsed = parse_adapters(f"kind={adapters['kind']},fair={adapters['fair']}")
    flags = lora_flags(parsed)
    assert flags[:5] == ["--enable-lora", "--max-lora-rank", "8", "--max-loras", "2"]
    assert flags[5:] == ["--lora-modules", f"kind={adapters['kind']}", f"fair={adapters['fair']}"]
    with pytest.raises(UserError, match="NAME=PATH"):
        parse_adapters(str(adapters["kind"]))
    with pytest.raises(UserError, match="twice"):
        parse_adapters(f"a={adapters['kind']},a={adapters['fair']}")


def test_merged_adapter_equals_peft_unmerged_forward(
    tiny_model: Path, adapters: dict[str, Path], engine: Any, requests_: list[ScoreRequest]
) -> None:
    from peft import PeftModel

    adapted = LocalEngine(str(tiny_model), device="cpu", adapter=str(adapters["kind"]))
    got = adapted.score(requests_)
    base = engine.score(requests_)
    moved = max(abs(a - b) for x, y in zip(got, base) for a, b in zip(x.logprobs, y.logprobs))
    assert moved > 0.1  # the adapter really changes the numbers
    # Reference: peft's own (unmerged) model, one plain forward per pair.
    reference = PeftModel.from_pretrained(
        engine.model.__class__.from_pretrained(str(tiny_model)), str(adapters["kind"])
    ).eval()
    request = requests_[3]
    for j, cont in enumerate(request.continuations[:6]):
        ids = torch.tensor([list(request.prefix + cont)])
        with torch.inference_mode():
            logprobs = torch.log_softmax(reference(input_ids=ids).logits[0].float(), dim=-1)
        p = len(request.prefix)
        want = sum(float(logprobs[p - 1 + k, t]) for k, t in enumerate(cont))
        assert got[3].logprobs[j] == pytest.approx(want, abs=1e-4)
    assert adapted.describe()["adapter"]["sha256"] == describe_adapter(adapters["kind"])["sha256"]


def test_served_adapters_equal_the_in_process_ones(
    lora_server: str,
    tiny_model: Path,
    adapters: dict[str, Path],
    engine: Any,
    requests_: list[ScoreRequest],
) -> None:
    from climb_vllm.engines.http import HttpEngine

    base = HttpEngine([lora_server], tokenizer=str(tiny_model))
    assert base.served_model == "tiny"  # adapters beside it do not make the base ambiguous
    for name, folder in adapters.items():
        served = HttpEngine([lora_server], served_model=name, tokenizer=str(tiny_model))
        local = LocalEngine(str(tiny_model), device="cpu", adapter=str(folder))
        got, want = served.score(requests_), local.score(requests_)
        worst = max(abs(a - b) for x, y in zip(got, want) for a, b in zip(x.logprobs, y.logprobs))
        assert worst < 1e-4
        facts = served.describe()["adapter"]
        assert facts["name"] == name and facts["base"] == "tiny"


def test_eval_with_an_adapter_records_it(
    tiny_model: Path, adapters: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    argv = [
        "eval",
        "intrinsic",
        "--model",
        str(tiny_model),
        "--adapter",
        str(adapters["fair"]),
        "--limit",
        "30",
        "--sensitivity-codes",
        "0",
        "--out",
        str(out),
        "--display",
        "none",
    ]
    assert main(argv) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    section = manifest["benchmarks"]["intrinsic"]
    assert section["config"]["adapter"] == str(adapters["fair"])
    assert section["engine"]["adapter"]["rank"] == 8
    assert main([*argv[:5], str(tmp_path), *argv[6:]]) == 2  # not an adapter folder


def test_eval_all_compares_served_adapters_with_their_base(
    lora_server: str, tiny_model: Path, tmp_path: Path
) -> None:
    out = tmp_path / "served"
    argv = [
        "eval",
        "all",
        "--endpoint",
        lora_server,
        "--tokenizer",
        str(tiny_model),
        "--adapter",
        "kind",
        "--adapter",
        "fair",
        "--benchmarks",
        "intrinsic,diseasematcher",
        "--limit-intrinsic",
        "30",
        "--sensitivity-codes",
        "0",
        "--limit-diseasematcher",
        "4",
        "--max-tokens",
        "16",
        "--seeds",
        "off",
        "--out",
        str(out),
        "--display",
        "none",
    ]
    assert main(argv) == 0
    paired = pl.read_csv(out / "report" / "tables" / "compare_intrinsic.csv")
    assert paired.height == 3 * 18  # 3 pairs of runs; Tables 1 and 2: 3 x (5 levels + mean)
    manifest = json.loads((tmp_path / "served+kind" / "manifest.json").read_text())
    assert manifest["benchmarks"]["intrinsic"]["config"]["model"] == "tiny"  # the base
    engine = manifest["benchmarks"]["intrinsic"]["engine"]
    assert engine["served_model"] == "kind"
    assert engine["adapter"] == {"name": "kind", "base": "tiny", "path": engine["adapter"]["path"]}
    assert (out / "report" / "tables" / "compare_diseasematcher.csv").is_file()
