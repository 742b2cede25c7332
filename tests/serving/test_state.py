"""The endpoints file's pids: the recorded pid is the server's own, so that ``kill`` of it stops
the server, and ``make stop`` says truthfully what it stopped and what had already exited."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from climb_vllm.serving.state import STATUS_WRAPPER, alive, members, server_pid, stop


def _start(tmp_path: Path, *command: str) -> tuple[Path, int, int]:
    """``command`` under the wrapper shell that ``serve`` uses, in a session of its own, with
    an endpoints file recording it as ``serve`` does. Returns (state, pid, group)."""
    log = tmp_path / "server.log"
    with log.open("wb") as handle:
        shell = subprocess.Popen(
            ["sh", "-c", STATUS_WRAPPER, "fake-server", *command],
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    pid = server_pid(log, shell.pid)
    entry = {"url": "http://127.0.0.1:1", "pid": pid, "group": shell.pid, "log": str(log)}
    state = tmp_path / "endpoints.json"
    state.write_text(json.dumps({"servers": [entry]}))
    return state, pid, shell.pid


def _wait_gone(pid: int, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def _wait_group_gone(group: int, seconds: float = 10.0) -> list[int]:
    """The live members of ``group`` once none is left, or after ``seconds`` (a killed
    process takes a moment to go)."""
    deadline = time.monotonic() + seconds
    while members(group) and time.monotonic() < deadline:
        time.sleep(0.05)
    return members(group)


def test_the_recorded_pid_is_the_server_not_its_shell(tmp_path: Path) -> None:
    state, pid, group = _start(tmp_path, "sleep", "60")
    assert pid != group
    assert Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0] == b"sleep"
    os.kill(pid, signal.SIGTERM)  # what a user does with the recorded pid
    _wait_gone(group)
    assert not alive(pid) and not alive(group)
    log = (tmp_path / "server.log").read_text()
    assert "exited with status 143" in log  # 128 + SIGTERM: its cause is kept


def test_stop_after_the_server_was_killed_says_so_and_ends_what_it_left(tmp_path: Path) -> None:
    # A server that leaves a worker behind when it dies, as vLLM's engine processes do.
    state, pid, group = _start(tmp_path, "sh", "-c", "sleep 60 & exec sleep 61")
    deadline = time.monotonic() + 10
    while len(members(group)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    _wait_gone(group)
    assert members(group)  # the worker lives on
    [line] = stop(state, grace=5)
    assert "had already exited (killed by SIGKILL" in line
    assert "ended 1 process(es) it left behind" in line
    assert _wait_group_gone(group) == [] and not state.exists()


def test_stop_of_a_running_server_stops_it(tmp_path: Path) -> None:
    state, pid, group = _start(tmp_path, "sleep", "60")
    assert stop(state, grace=5) == ["http://127.0.0.1:1 stopped"]
    _wait_gone(pid)
    assert not alive(pid) and _wait_group_gone(group) == []


def test_a_file_without_a_group_reads_the_pid_as_the_group(tmp_path: Path) -> None:
    from climb_vllm.serving.state import group_of

    assert group_of({"pid": 12}) == 12 and group_of({"pid": 12, "group": 10}) == 10
    with pytest.raises(KeyError):
        group_of({})
