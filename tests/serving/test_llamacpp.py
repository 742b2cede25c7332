"""llama.cpp's server (llama-cpp-python, built by make llamacpp) serving the real Gemma 3 270M
GGUF file on loopback: the probe's findings, scoring against the in-process engine on the same
weights, generation with and without seeds, the refusal of a server without prompt log-probs,
and a server killed mid-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from climb_vllm.benchmarks.intrinsic.task import sample_requests
from climb_vllm.core.errors import NotApplicable, UserError
from climb_vllm.engines.base import GenerateRequest
from climb_vllm.engines.http import HttpEngine, sample_seed
from climb_vllm.serving import llamacpp
from climb_vllm.serving.launch import plan_servers, serve
from climb_vllm.serving.state import stop
from tests.helpers import free_port, llamacpp_python, servers_recorded_in

#: Largest |served - in process| log-prob (nat per name) on the same Q4_K_M weights. llama.cpp
#: multiplies the quantized weights with activations quantized to 8 bits, where the in-process
#: engine multiplies the dequantized fp32 weights with fp32 activations: observed up to 0.59
#: nat (mean 0.17) on 24 names. The same weights in fp32 (``dequantized``) agree within 0.0071.
QUANTIZED_AGREEMENT = 1.0
#: The same on the fp32 copy: llama.cpp still keeps its KV cache in fp16.
F32_AGREEMENT = 0.02


def _serve(state: Path, *extra: str) -> str:
    urls = serve(
        ["gemma-3-270m"],
        port=free_port(),
        python=llamacpp_python(),
        cpu=True,
        state=state,
        timeout=300,
        server="llamacpp",
        extra=list(extra),
    )
    return urls[0]


@pytest.fixture(scope="module")
def llama_server(real_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp serving the real model's GGUF file, as make serve MODEL=gemma-3-270m
    SERVER=llamacpp does."""
    state = tmp_path_factory.mktemp("serve-llamacpp") / "endpoints.json"
    url = _serve(state)
    with servers_recorded_in(state):
        yield url


def test_the_probe_records_what_llama_cpp_does(llama_server: str, real_model: Path) -> None:
    http = HttpEngine([llama_server], tokenizer=str(real_model))
    found = http.capabilities[0]
    assert found.server == "llama.cpp"
    assert found.version == "0.3.36"
    assert found.strategy == "echo_text"
    assert (found.completions, found.chat, found.token_ids, found.batch) == (
        True,
        True,
        False,
        False,
    )
    assert found.samples_n is False  # llama-cpp-python ignores n
    assert found.seeds is True
    endpoints = http.describe()["endpoints"]
    assert endpoints[0]["strategy"] == "echo_text" and endpoints[0]["seeds"] is True
    with pytest.raises(UserError, match="does not serve 'gemma-3'.*Fix: pass --served-model"):
        HttpEngine([llama_server], served_model="gemma-3", tokenizer=str(real_model))


def _gaps(http: HttpEngine, engine: Any, requests: list[Any]) -> list[float]:
    got = http.score(requests)
    want = engine.score(requests)
    return [abs(a - b) for x, y in zip(got, want) for a, b in zip(x.logprobs, y.logprobs)]


def test_served_scores_agree_with_the_in_process_engine(
    llama_server: str, real_model: Path, real_engine: Any
) -> None:
    requests = sample_requests(real_engine.tokenizer, 24, top_k=1, seed=3)[:3]
    gaps = _gaps(HttpEngine([llama_server], tokenizer=str(real_model)), real_engine, requests)
    assert len(gaps) == sum(len(r.continuations) for r in requests) == 24
    assert max(gaps) < QUANTIZED_AGREEMENT and sum(gaps) / len(gaps) < 0.3


def test_on_fp32_weights_llama_cpp_scores_as_the_in_process_engine(
    real_model: Path, real_engine: Any, tmp_path: Path
) -> None:
    from climb_vllm.models.sources import gguf_file

    f32 = llamacpp.dequantized(gguf_file("gemma-3-270m", echo=False))
    state = tmp_path / "serve" / "endpoints.json"
    url = serve(
        [str(f32)],
        port=free_port(),
        python=llamacpp_python(),
        cpu=True,
        state=state,
        timeout=300,
        server="llamacpp",
    )[0]
    try:
        http = HttpEngine([url], tokenizer=str(real_model))
        assert http.served_model == f32.stem
        requests = sample_requests(real_engine.tokenizer, 24, top_k=1, seed=3)[:3]
        gaps = _gaps(http, real_engine, requests)
        assert max(gaps) < F32_AGREEMENT
    finally:
        stop(state)


def test_the_server_tokenizer_scores_like_the_local_one(
    llama_server: str, real_model: Path, real_engine: Any
) -> None:
    requests = sample_requests(real_engine.tokenizer, 24, top_k=1, seed=9)[:1]
    local = HttpEngine([llama_server], tokenizer=str(real_model)).score(requests)
    http = HttpEngine([llama_server])  # llama.cpp's /extras/tokenize and /extras/detokenize
    assert http.tokenize_path == "/extras/tokenize"
    text = "Cholera is related to the name: Aaliyah"
    assert http.tokenizer(text)["input_ids"] == real_engine.tokenizer(text)["input_ids"]
    served = http.score(requests)
    assert [r.logprobs for r in served] == [r.logprobs for r in local]


def test_a_tokenizer_of_another_model_is_refused(llama_server: str, tiny_model: Path) -> None:
    with pytest.raises(UserError, match="does not score"):
        HttpEngine([llama_server], tokenizer=str(tiny_model), strategy="echo_text")


def test_generation_with_and_without_seeds(llama_server: str, real_model: Path) -> None:
    prompt = "The patient presented with"
    seeded = HttpEngine([llama_server], tokenizer=str(real_model), seeds="on")
    request = GenerateRequest(prompt=prompt, n=3, max_tokens=8, temperature=1.0, seed=11)
    first, again = seeded.generate([request, request])
    # n=3 on a server that ignores n: three requests, three samples, each with its own seed.
    assert len(first.texts) == 3 and first.seeded
    assert first.texts == again.texts
    assert len(set(first.texts)) > 1
    other = seeded.generate([GenerateRequest(prompt=prompt, n=1, max_tokens=8, seed=12)])[0]
    assert other.texts[0] != first.texts[0]
    unseeded = HttpEngine([llama_server], tokenizer=str(real_model), seeds="off")
    found = unseeded.generate([GenerateRequest(prompt=prompt, n=2, max_tokens=8, seed=11)])[0]
    assert len(found.texts) == 2 and not found.seeded
    chat = seeded.generate(
        [
            GenerateRequest(
                messages=({"role": "user", "content": "Name a disease."},),
                n=1,
                max_tokens=6,
                seed=3,
            )
        ]
    )[0]
    assert chat.completion_tokens[0] >= 1


def test_sample_seeds_differ_between_neighbouring_requests() -> None:
    seeds = {sample_seed(s, k) for s in range(50) for k in range(5)}
    assert len(seeds) == 250
    assert sample_seed(7, 0) == 7


def test_a_server_without_prompt_log_probs_is_not_applicable_for_intrinsic(
    real_model: Path, tmp_path: Path
) -> None:
    state = tmp_path / "serve" / "endpoints.json"
    url = _serve(state, "--logits_all", "False")
    try:
        http = HttpEngine([url], tokenizer=str(real_model))
        assert http.capabilities[0].strategy is None
        assert "does not return" in str(http.cannot_score())
        with pytest.raises(NotApplicable):
            http.score(sample_requests(http.tokenizer, 24, top_k=1, seed=1)[:1])
        out = tmp_path / "run"
        env = dict(os.environ, CLIMB_VLLM_SERVE_STATE=str(state))
        base = [sys.executable, "-m", "climb_vllm", "eval"]
        done = subprocess.run(
            [
                *base,
                "intrinsic",
                "--engine",
                "http",
                "--tokenizer",
                str(real_model),
                "--limit",
                "24",
                "--out",
                str(out),
                "--display",
                "none",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode != 0
        lines = [line for line in done.stderr.strip().splitlines() if line]
        assert len(lines) == 1 and "needs prompt log-probs" in lines[0] and "Fix:" in lines[0]
        assert not (out / "intrinsic").exists()
        manifest = out / "manifest.json"
        assert not manifest.exists() or "intrinsic" not in json.loads(manifest.read_text()).get(
            "benchmarks", {}
        )
        # eval all: the generation benchmarks run, intrinsic is reported as not applicable.
        done = subprocess.run(
            [
                *base,
                "all",
                "--engine",
                "http",
                "--tokenizer",
                str(real_model),
                "--benchmarks",
                "intrinsic,biasmd",
                "--limit-biasmd",
                "2",
                "--max-tokens",
                "8",
                "--out",
                str(out),
                "--display",
                "none",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        recorded = json.loads(manifest.read_text())
        assert "needs prompt log-probs" in recorded["not_applicable"]["intrinsic"]
        assert "biasmd" in recorded["benchmarks"] and "failed" not in recorded
        report = (out / "report" / "report.html").read_text()
        assert "not applicable to this engine" in report
    finally:
        stop(state)


def test_a_server_killed_mid_run_is_reported_with_its_log_and_the_run_resumes(
    real_model: Path, tmp_path: Path
) -> None:
    state = tmp_path / "serve" / "endpoints.json"
    _serve(state)
    out = tmp_path / "run"
    env = dict(os.environ, CLIMB_VLLM_SERVE_STATE=str(state))
    command = [
        sys.executable,
        "-m",
        "climb_vllm",
        "eval",
        "intrinsic",
        "--engine",
        "http",
        "--tokenizer",
        str(real_model),
        "--limit",
        "24",
        "--top-k",
        "1",
        "--chunk-size",
        "4",
        "--sensitivity-codes",
        "0",
        "--out",
        str(out),
        "--display",
        "none",
    ]
    try:
        run = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
        chunks = out / "records" / "intrinsic"
        deadline = 240.0
        import time

        start = time.monotonic()
        while time.monotonic() - start < deadline and not list(chunks.glob("chunk-*.parquet")):
            time.sleep(0.2)
        pid = int(json.loads(state.read_text())["servers"][0]["pid"])
        os.kill(pid, signal.SIGKILL)  # the server itself (the recorded pid), as the OOM killer
        _, err = run.communicate(timeout=300)
        assert run.returncode != 0
        assert "llamacpp server at" in err and "died: killed by SIGKILL" in err
        assert "validation" not in err  # the probe's rejected requests are not the cause
        kept = {p.name: p.read_bytes() for p in chunks.glob("chunk-*.parquet")}
        assert kept
        stop(state)
        _serve(state)
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        # The chunks finished before the kill are kept as they were, not scored again.
        assert all((chunks / name).read_bytes() == data for name, data in kept.items())
        import polars as pl

        records = pl.read_parquet(sorted(chunks.glob("chunk-*.parquet")))
        # Every (code, name) pair once: 24 codes x 8 names (the top name of each group).
        assert records.height == 24 * 8
        assert records.select("code", "name").unique().height == records.height
    finally:
        stop(state)


def test_bad_models_get_one_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    text = tmp_path / "notes.gguf"
    text.write_text("not a model")
    for model, expected in (
        (folder, "is a folder"),
        (tmp_path / "missing.gguf", "not a file"),
        (text, "not a GGUF model file"),
    ):
        with pytest.raises(UserError, match=expected) as caught:
            plan_servers([str(model)], 8000, [], None, server="llamacpp")
        assert "Fix: pass a .gguf file" in str(caught.value)
    with pytest.raises(UserError, match="one per GPU"):
        plan_servers(["gemma-3-270m"], 8000, ["0", "1"], 2, server="llamacpp")


def test_a_gguf_file_that_is_not_a_model_stops_serve_with_its_log(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(llamacpp.GGUF_MAGIC + b"\x03\x00\x00\x00" + b"\x00" * 64)
    state = tmp_path / "serve" / "endpoints.json"
    with pytest.raises(UserError, match="exited") as caught:
        serve(
            [str(broken)],
            port=free_port(),
            python=llamacpp_python(),
            cpu=True,
            state=state,
            timeout=120,
            server="llamacpp",
        )
    assert "read its log" in str(caught.value)
    assert not state.exists()  # the corrected command starts afresh


def test_the_command_keeps_every_positions_logits(real_model: Path) -> None:
    spec = plan_servers(["gemma-3-270m"], 8123, [], None, server="llamacpp")[0]
    assert spec.gguf is not None and spec.served_name == "gemma-3-270m"
    argv = llamacpp.command(spec.gguf, "python", "127.0.0.1", 8123, spec.context, "")
    joined = " ".join(argv)
    assert "--logits_all True" in joined and "--model_alias gemma-3-270m" in joined
    assert "--n_ctx 4096" in joined  # the model file's max_model_len
    assert "--climb-chat-template" in joined and "plain.jinja" in joined


def test_choice_mode_scores_options_through_llama_cpp(
    llama_server: str, real_model: Path, real_engine: Any
) -> None:
    """BiasMD's and DiseaseMatcher's options (choice mode) through the echo path, against the
    in-process engine on the same weights (quantized there, hence the wider agreement)."""
    from climb_vllm.benchmarks.diseasematcher import choice
    from climb_vllm.benchmarks.diseasematcher.task import items_frame
    from climb_vllm.benchmarks.hive.choice import score_prompts

    prompts = choice.prompts(items_frame("eval", 2, 0))
    served = score_prompts(HttpEngine([llama_server], tokenizer=str(real_model)), prompts)
    local = score_prompts(real_engine, prompts)
    assert served.height == local.height == 2 * len(prompts)
    for column in ("logprob", "calibration"):
        gaps = (served[column] - local[column]).abs().to_list()
        assert max(gaps) < QUANTIZED_AGREEMENT, (column, gaps)


def test_the_servers_context_is_recorded_and_read_back(llama_server: str) -> None:
    """llama-cpp-python's /v1/models does not report its context: serve records the one it
    started the server with (the model file's 4,096), and the extrinsic budget reads it."""
    from climb_vllm.engines.served_context import served_context

    assert served_context([llama_server], "gemma-3-270m") == 4096
