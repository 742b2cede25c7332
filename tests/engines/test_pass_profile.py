"""The profile's shares come from the operators a real call ran."""

from __future__ import annotations

import pytest

from climb_vllm.engines.pass_profile import profile_call


def test_products_attention_and_the_rest_are_told_apart() -> None:
    import torch

    a = torch.randn(512, 512)
    q = torch.randn(1, 4, 64, 32)

    def products() -> None:
        for _ in range(20):
            torch.mm(a, a)
        # Small enough to run on one thread: an elementwise op spread over busy cores waits
        # for its slowest thread and would take a product's share on a loaded machine.
        (a[:8] * 2.0).relu()

    def attention() -> None:
        torch.nn.functional.scaled_dot_product_attention(q, q, q)

    found = profile_call(products, "cpu")
    assert found["matmul_share"] > 0.5 and found["other_share"] > 0
    assert found["attention_share"] == 0
    assert found["matmul_share"] + found["attention_share"] + found["other_share"] == (
        pytest.approx(1.0)
    )
    assert found["top_ops"].startswith("aten::mm ")
    assert 0 < found["matmul_seconds"] <= found["seconds"]
    assert profile_call(attention, "cpu")["attention_share"] > 0.5
