"""The output head apart from the decoder: the same log-probs as the model's own logits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from climb_vllm.engines.output_head import HeadLogprobs, head_logits, split_matches
from climb_vllm.models.loading import open_model


@pytest.fixture(scope="module")
def model(tiny_model: Path) -> Any:
    return open_model(tiny_model, None, "cpu", "float32").eval()


def _hidden_and_expected(model: Any) -> tuple[Any, Any]:
    ids = torch.tensor([[5, 17, 99, 3, 250, 41]])
    with torch.inference_mode():
        hidden = model.get_decoder()(input_ids=ids).last_hidden_state[0]
        expected = torch.log_softmax(model(input_ids=ids).logits[0].double(), dim=-1)
    return hidden, expected


def test_read_rows_equal_a_full_log_softmax(model: Any) -> None:
    hidden, expected = _hidden_and_expected(model)
    where = torch.tensor([0, 2, 2, 5])
    targets = torch.tensor([7, 11, 300, 2])
    head = HeadLogprobs(model)
    with torch.inference_mode():
        got = head(hidden[[0, 2, 5]], torch.tensor([0, 1, 1, 2]), targets)
        again = head(hidden[[0, 2, 5]], torch.tensor([0, 1, 1, 2]), targets)  # buffer reused
    want = expected[where, targets]
    assert torch.allclose(got.double(), want, atol=1e-4)
    assert torch.equal(got, again)


def test_the_unbuffered_path_and_soft_capping_agree_with_the_model(tiny_model: Path) -> None:
    # float64 takes the plain log-softmax path; a cap must be applied by both routes alike.
    model = open_model(tiny_model, None, "cpu", "float64").eval()
    model.config.final_logit_softcapping = 2.0
    ids = torch.tensor([[5, 17, 99]])
    with torch.inference_mode():
        hidden = model.get_decoder()(input_ids=ids).last_hidden_state[0]
        raw = model.get_output_embeddings()(hidden)
        capped = head_logits(model, hidden)
        got = HeadLogprobs(model)(hidden, torch.tensor([1]), torch.tensor([40]))
    assert torch.allclose(capped, torch.tanh(raw / 2.0) * 2.0)
    assert capped.abs().max() <= 2.0
    assert float(got[0]) == pytest.approx(float(torch.log_softmax(capped, -1)[1, 40]), abs=1e-12)


def test_the_split_is_checked_against_the_models_own_logits(model: Any) -> None:
    assert split_matches(model, [1, 5, 17, 99], torch.device("cpu"))

    class Headless(torch.nn.Module):
        def get_decoder(self) -> Any:
            return model.get_decoder()

        def get_output_embeddings(self) -> None:
            return None

    assert not split_matches(Headless(), [1, 5], torch.device("cpu"))
