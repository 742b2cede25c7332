"""Dense FLOP counts and the table of device peaks."""

from __future__ import annotations

from climb_vllm.engines.flops import forward_flops, layer_weights, peak_tflops


def test_peaks_match_the_most_specific_name() -> None:
    assert peak_tflops("NVIDIA H100 PCIe") == 756.0
    assert peak_tflops("NVIDIA H100 80GB HBM3") == 989.0
    assert peak_tflops("NVIDIA H200") == 989.0
    assert peak_tflops("Some New Accelerator") is None
    assert peak_tflops(None) is None


def test_flops_count_layer_weights_per_position_and_the_head_per_row(engine) -> None:  # type: ignore[no-untyped-def]
    model = engine.model
    embedding = model.get_input_embeddings().weight.numel()
    head = model.get_output_embeddings().weight.numel()
    total = sum(p.numel() for p in model.parameters())
    tied = model.get_output_embeddings().weight is model.get_input_embeddings().weight
    assert layer_weights(model) == total - embedding - (0 if tied else head)
    assert forward_flops(model, 10, 3) == 2 * layer_weights(model) * 10 + 2 * head * 3
