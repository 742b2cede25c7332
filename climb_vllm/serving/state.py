"""The servers ``climb-vllm serve`` started: the endpoints file that records them, whether each
still runs, why one died (its log's last lines) and stopping them (``make stop``).

The endpoints file (``outputs/serve/endpoints.json``, or ``$CLIMB_VLLM_SERVE_STATE``) is what
``climb-vllm eval --engine http`` (and ``make eval``) read when no ``--endpoint`` is given.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from climb_vllm.core.errors import UserError

#: The endpoints file ``serve`` writes and ``eval --engine http`` reads; the environment
#: variable ``CLIMB_VLLM_SERVE_STATE`` names another (tests run servers of their own).
STATE_VARIABLE = "CLIMB_VLLM_SERVE_STATE"


def state_file() -> Path:
    """The endpoints file: ``$CLIMB_VLLM_SERVE_STATE`` or ``outputs/serve/endpoints.json``."""
    return Path(os.environ.get(STATE_VARIABLE) or Path("outputs") / "serve" / "endpoints.json")


#: The shell around a server: it starts the server, writes the server's own pid to the log
#: (recorded as the server's, so that ``kill`` of the recorded pid stops the server), waits for
#: it and writes its exit status, so that a death is told by its cause (SIGKILL is what the
#: kernel's OOM killer sends). The shell leads the process group that ``make stop`` ends.
STATUS_WRAPPER = (
    '"$@" & server=$!; echo "climb-vllm: the server\'s pid is $server"; wait $server; '
    'status=$?; echo "climb-vllm: the server exited with status $status"'
)
STATUS_LINE = "climb-vllm: the server exited with status "
PID_LINE = "climb-vllm: the server's pid is "


def server_pid(log: Path, shell: int, timeout: float = 10.0) -> int:
    """The pid of the server that the wrapper shell ``shell`` started, read from its log
    (the shell writes it before anything else). The shell's own pid when the line does not
    come within ``timeout`` seconds (the shell died at once: its status line says why)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            for line in log.read_text(errors="replace").splitlines():
                if line.startswith(PID_LINE):
                    return int(line[len(PID_LINE) :].strip())
        except OSError:
            pass
        if not alive(shell):
            break
        time.sleep(0.02)
    return shell


def group_of(server: dict[str, object]) -> int:
    """The process group of a recorded server (its wrapper shell's pid); files written
    before the group was recorded hold the shell's pid as ``pid``."""
    return int(str(server.get("group", server["pid"])))


def recorded(state: Path) -> list[dict[str, object]]:
    """The servers an endpoints file lists (none when it cannot be read)."""
    try:
        servers: list[dict[str, object]] = json.loads(state.read_text())["servers"]
    except (OSError, ValueError, KeyError):
        return []
    return servers


def exit_cause(log_lines: list[str]) -> str | None:
    """The cause of a server's exit from the status line its shell wrote (None if none)."""
    import signal as signals

    found = [line for line in log_lines if line.startswith(STATUS_LINE)]
    if not found:
        return None
    status = int(found[-1][len(STATUS_LINE) :].strip() or 0)
    if status > 128:
        try:
            name = signals.Signals(status - 128).name
        except ValueError:
            name = f"signal {status - 128}"
        hint = "; out of memory? the kernel's OOM killer sends SIGKILL" if name == "SIGKILL" else ""
        return f"killed by {name}{hint}"
    return f"exited with status {status}"


def write_state(state: Path, servers: list[dict[str, object]]) -> None:
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
    if server is None or alive(int(str(server["pid"]))):
        return None
    log = Path(str(server["log"]))
    try:
        tail = [line.strip() for line in log.read_text(errors="replace").splitlines()]
    except OSError:
        tail = []
    cause = exit_cause(tail)
    tail = [line for line in tail if not line.startswith((STATUS_LINE, PID_LINE))]
    # Errors the server answered and lived on (a rejected request) are not why it died: only
    # the lines after its last successful answer are read for them.
    answered = [n for n, line in enumerate(tail) if '" 200 OK' in line]
    recent = tail[answered[-1] + 1 :] if answered else tail
    errors = [line for line in recent if "Error" in line or "error" in line]
    quoted = " | ".join((errors or tail)[-lines:]) or "(empty log)"
    last = f"{cause}; its log ends: {quoted}" if cause else quoted
    fix = f"restart it with make serve (see {log}) and rerun the same command to resume"
    if "does not use offset" in last or any("does not use offset" in t for t in tail):
        fix = (
            "this vLLM build cannot take per-request sampling seeds: restart it with make serve "
            "and rerun the same command with --seeds off (unseeded sampling, recorded per record)"
        )
    return UserError(
        f"The {server.get('server', 'vllm')} server at {url} (pid {server['pid']}) died: {last}",
        fix + ".",
    )


def stop(state: Path | None = None, grace: float = 20.0) -> list[str]:
    """Stop every server in the endpoints file (TERM to its process group, then KILL).

    Returns one line per server, saying truthfully what happened: stopped; or had already
    exited (how, from its log), with what was left of its process group (vLLM's engine
    processes outlive a killed API server) ended too.
    """
    state = state or state_file()
    if not state.is_file():
        return []
    servers = json.loads(state.read_text())["servers"]
    lines = []
    running = []
    for server in servers:
        pid, group = int(server["pid"]), group_of(server)
        if not alive(pid):
            left = members(group)
            reap(group)
            how = _exit_words(Path(str(server.get("log"))))
            rest = f"; ended {len(left)} process(es) it left behind" if left else ""
            lines.append(
                f"{server['url']} had already exited{how} (its log: {server.get('log')}){rest}"
            )
            continue
        running.append(server)
        try:
            os.killpg(group, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    for server in running:
        pid, group = int(server["pid"]), group_of(server)
        while time.monotonic() < deadline and alive(pid):
            time.sleep(0.2)
        if alive(pid) or members(group):
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        lines.append(f"{server['url']} stopped")
    state.unlink(missing_ok=True)
    return lines


def _exit_words(log: Path) -> str:
    """ " (killed by SIGKILL)" or " (exited with status 1)" from a server's log, or ""."""
    try:
        cause = exit_cause(log.read_text(errors="replace").splitlines())
    except OSError:
        cause = None
    return f" ({cause})" if cause else ""


def members(group: int) -> list[int]:
    """The live processes (zombies left out) of process group ``group``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == group and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def reap(pid: int) -> None:
    """Kill what is left of process group ``pid`` (a server's wrapper shell's) once its
    server has exited: vLLM's engine processes outlive an API server killed with SIGKILL (by
    the kernel's OOM killer, say) and keep its memory."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def alive(pid: int) -> bool:
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
