"""Faults between client and a real vLLM server: retried or reported, never a wrong number."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from climb_vllm.engines.base import ScoreRequest
from climb_vllm.engines.boundary import BoundaryEncoder
from climb_vllm.engines.http import HttpEngine
from climb_vllm.engines.transport import RequestFailed, RetriesExhausted
from climb_vllm.resources.names import load_names
from tests.fault_proxy import FAULTS, fault_proxy


class FaultTransport(httpx.AsyncBaseTransport):
    """Forwards to the real server, but answers completions requests with scheduled faults.

    Args:
        schedule: one fault per completions request, in order; "ok" forwards untouched. After
            the schedule, every request is forwarded (or gets ``then``).
        then: the fault for every request after the schedule.
    """

    def __init__(self, schedule: list[str], then: str = "ok") -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.schedule = list(schedule)
        self.then = then
        self.seen: list[str] = []
        self.bodies: list[dict[str, Any]] = []

    def __call__(self) -> FaultTransport:
        """A fresh connection pool for each event loop; the schedule is shared."""
        self.inner = httpx.AsyncHTTPTransport()
        return self

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not request.url.path.endswith("/completions"):
            return await self.inner.handle_async_request(request)
        fault = self.schedule.pop(0) if self.schedule else self.then
        self.seen.append(fault)
        self.bodies.append(json.loads(request.content or b"{}"))
        if fault == "reset":
            raise httpx.RemoteProtocolError("peer closed connection", request=request)
        if fault == "timeout":
            raise httpx.ReadTimeout("timed out", request=request)
        if fault == "refused":
            raise httpx.ConnectError("connection refused", request=request)
        if fault in ("503", "429"):
            return httpx.Response(int(fault), text="busy", request=request)
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        if fault == "truncated":
            body = body[: len(body) // 2]
        elif fault == "garbage":
            body = b"<html>proxy error</html>"
        elif fault == "clamped":
            data = json.loads(body)
            choice = data["choices"][0]
            top = choice["logprobs"]["top_logprobs"][0]
            for key in top:  # the requested ids and the sampled token alike
                top[key] = -9999.0
            body = json.dumps(data).encode()
        elif fault == "nontext":
            data = json.loads(body)
            for choice in data["choices"]:
                choice["message"]["content"] = None
            body = json.dumps(data).encode()
        elif fault == "missing":
            data = json.loads(body)
            data["choices"] = data["choices"][:-1]
            body = json.dumps(data).encode()
        return httpx.Response(response.status_code, content=body, request=request)


@pytest.fixture(scope="module")
def requests_(engine: Any) -> list[ScoreRequest]:
    texts = [f"Disease {i} of the left knee is related to the name:" for i in range(12)]
    names = load_names().distinct(5)
    return [p.request for p in BoundaryEncoder(engine.tokenizer).plan(texts, names)]


def _engine(url: str, model: Path, hook: FaultTransport, retries: int = 8) -> HttpEngine:
    return HttpEngine(
        [url],
        tokenizer=str(model),
        strategy="trie",
        retries=retries,
        backoff=0.01,
        prompts_per_request=4,
        hook=hook,
    )


def test_transient_faults_are_retried_to_the_right_numbers(
    vllm_server: str, tiny_model: Path, requests_: list[ScoreRequest]
) -> None:
    clean = _engine(vllm_server, tiny_model, FaultTransport([])).score(requests_)
    faults = ["503", "reset", "timeout", "truncated", "garbage", "clamped", "missing", "429"]
    hook = FaultTransport([])
    engine = _engine(vllm_server, tiny_model, hook)
    hook.schedule, hook.seen = list(faults), []  # after the probe: faults hit scoring
    got = engine.score(requests_)
    assert hook.seen[: len(faults)] == faults
    assert engine.transport.stats.retries >= len(faults)
    for a, b in zip(got, clean):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)


@pytest.mark.parametrize("fault", ["clamped", "truncated", "503", "missing"])
def test_persistent_faults_stop_the_run_with_the_reason(
    vllm_server: str, tiny_model: Path, requests_: list[ScoreRequest], fault: str
) -> None:
    hook = FaultTransport([])
    engine = _engine(vllm_server, tiny_model, hook, retries=2)
    hook.then = fault
    # A passing fault that persists (a 5xx) is "failed N times in a row", with the fix; a body
    # that stays unusable is the server's own answer, reported with what was wrong with it.
    expected = RetriesExhausted if fault == "503" else RequestFailed
    with pytest.raises(expected, match="failed 3 times") as raised:
        engine.score(requests_)
    assert "Fix:" in str(raised.value)
    if fault == "clamped":
        assert "-9999" in str(raised.value)


def test_client_errors_are_not_retried(vllm_server: str, tiny_model: Path) -> None:
    engine = _engine(vllm_server, tiny_model, FaultTransport([]))
    too_long = ScoreRequest(tuple([5] * 600), ((7,),))  # beyond the server's 512-token context
    with pytest.raises(RequestFailed, match="HTTP 400"):
        engine.score([too_long])
    assert engine.transport.stats.retries == 0


class DeadHostTransport(FaultTransport):
    """Refuses every connection to one host name (an endpoint that died after the probe)."""

    def __init__(self, dead_host: str) -> None:
        super().__init__([])
        self.dead_host = dead_host
        self.refused = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == self.dead_host:
            self.refused += 1
            raise httpx.ConnectError("connection refused", request=request)
        return await super().handle_async_request(request)


def test_work_of_a_dead_endpoint_moves_to_a_live_one(
    vllm_server: str, tiny_model: Path, requests_: list[ScoreRequest]
) -> None:
    # Two names for the same server: two endpoints as far as routing is concerned.
    other = vllm_server.replace("127.0.0.1", "localhost")
    clean = _engine(vllm_server, tiny_model, FaultTransport([])).score(requests_)
    hook = DeadHostTransport("no-host-yet")
    engine = HttpEngine(
        [vllm_server, other],
        tokenizer=str(tiny_model),
        strategy="trie",
        retries=4,
        backoff=0.01,
        prompts_per_request=4,
        hook=hook,
    )
    hook.dead_host = "localhost"  # it dies after the probe
    got = engine.score(requests_)
    assert hook.refused >= 3 and engine.transport.stats.failovers >= 1
    for a, b in zip(got, clean):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)


def test_non_text_answers_are_kept_as_marked_empty_answers(
    vllm_server: str, tiny_model: Path
) -> None:
    from climb_vllm.engines.base import GenerateRequest

    hook = FaultTransport([])
    engine = _engine(vllm_server, tiny_model, hook)
    hook.schedule, hook.bodies = ["nontext"], []  # the probe's requests went through it too
    chat = ({"role": "user", "content": "What are the diagnoses for this patient?"},)
    # temperature None: the model's own settings, so no sampling fields are sent
    request = GenerateRequest(messages=chat, temperature=None, top_p=None, max_tokens=4)
    odd, normal = engine.generate([request, request])
    assert odd.texts == ("",) and odd.finish_reasons == ("non-text",)
    assert normal.finish_reasons[0] in ("stop", "length")
    sent = [b for b in hook.bodies if "messages" in b]
    assert sent and all("temperature" not in b and "top_p" not in b for b in sent)


def test_seeds_are_sent_only_where_the_server_takes_them(
    vllm_server: str, tiny_model: Path
) -> None:
    """The session's server is a CPU server that serve started: auto sends no seed (and says
    so per generation); "on" sends it."""
    from climb_vllm.engines.base import GenerateRequest

    request = GenerateRequest(prompt="Fever and cough.", n=1, seed=7, temperature=0.8, max_tokens=4)
    for seeds, sent in (("auto", False), ("off", False), ("on", True)):
        hook = FaultTransport([])
        engine = HttpEngine([vllm_server], tokenizer=str(tiny_model), hook=hook, seeds=seeds)
        hook.bodies = []
        generation = engine.generate([request])[0]
        assert ("seed" in hook.bodies[-1]) is sent, seeds
        assert generation.seeded is sent and engine.describe()["per_request_seeds"] is sent


def test_a_hung_server_is_named_and_stops_the_run_in_bounded_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A real HTTP server on loopback that accepts requests and never answers (as a vLLM
    server paused with SIGSTOP does): the watchdog warns, naming the endpoint and what its
    /health answers, and stops the run with one error instead of waiting retries x timeout."""
    import asyncio
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from climb_vllm.core.errors import UserError
    from climb_vllm.engines.transport import Transport

    release = threading.Event()

    class Hung(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server interface
            release.wait(30)

        def do_POST(self) -> None:  # noqa: N802
            release.wait(30)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hung)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    transport = Transport([url], concurrency=2, retries=6, stall_warn=1.0, stall_fail=4.0)
    jobs = [(0, "/v1/completions", {"prompt": [[1, 2, 3]], "max_tokens": 1})] * 3
    start = time.monotonic()
    try:
        with pytest.raises(UserError, match="No request has finished") as caught:
            asyncio.run(transport.run(jobs, lambda i, b: b, lambda i, p: None))
    finally:
        release.set()
        server.shutdown()
    assert time.monotonic() - start < 20  # not retries x timeout (7 x 120 s)
    assert url in caught.value.message and "/health did not answer" in caught.value.message
    assert "make serve" in caught.value.fix
    assert "warning: no request has finished" in capsys.readouterr().err


def test_request_timeouts_follow_the_request_size() -> None:
    from climb_vllm.engines.transport import request_timeout

    small = request_timeout({"prompt": [[1] * 20], "max_tokens": 1})
    large = request_timeout({"prompt": [[1] * 2000] * 256, "max_tokens": 1})
    answer = request_timeout({"messages": [{"content": "x" * 400}], "max_tokens": 256, "n": 4})
    assert 120 <= small < 122 and large > 20_000 and 170 < answer < 177


def test_a_paused_vllm_server_is_reported_as_hung_and_the_run_resumes_after(
    vllm_server: str, tiny_model: Path
) -> None:
    """The session's real vLLM server paused with SIGSTOP (its whole process group): scoring
    stops with the watchdog's error naming the endpoint and its silent /health; after SIGCONT
    the same requests score as before. Thresholds are shortened for the test (defaults: a
    warning after 60 s, the error after 300 s)."""
    import os
    import signal

    from climb_vllm.core.errors import UserError
    from climb_vllm.serving.state import own_server

    server = own_server(vllm_server)
    assert server is not None
    group = int(str(server["group"]))
    engine = HttpEngine([vllm_server], tokenizer=str(tiny_model), timeout=60.0)
    engine.transport.stall_warn, engine.transport.stall_fail = 1.0, 4.0
    names = load_names().distinct(5)
    planned = BoundaryEncoder(engine.tokenizer).plan(["Cholera is related to the name:"], names)
    requests = [p.request for p in planned]
    before = engine.score(requests)
    os.killpg(group, signal.SIGSTOP)
    try:
        with pytest.raises(UserError, match="/health did not answer") as caught:
            engine.score(requests)
        assert vllm_server in caught.value.message
    finally:
        os.killpg(group, signal.SIGCONT)
    after = engine.score(requests)
    assert (
        max(abs(a - b) for x, y in zip(before, after) for a, b in zip(x.logprobs, y.logprobs))
        < 1e-4
    )


def _probed(url: str, model: Path, retries: int = 6) -> HttpEngine:
    return HttpEngine([url], tokenizer=str(model), retries=retries, backoff=0.01)


def _what_was_chosen(engine: HttpEngine) -> list[dict[str, Any]]:
    """Each endpoint's capabilities and strategy (without the URL and the evidence), and the
    served model's identity that the manifest records (asked again, as a run does)."""
    from dataclasses import asdict

    facts = engine.describe()
    return [
        {k: v for k, v in asdict(c).items() if k not in ("url", "decided_by")}
        for c in engine.capabilities
    ] + [
        {"model": engine.served_model, "tokenize": engine.tokenize_path},
        {"served": facts["served_models"], "adapter": facts["adapter"]},
    ]


@pytest.mark.parametrize("fault", FAULTS)
def test_one_fault_among_the_first_requests_changes_no_choice(
    vllm_server: str, tiny_model: Path, fault: str
) -> None:
    """A 500 or a reset on the N-th request, for each N over the first 14 (every probe route:
    /v1/models, the tokenize route, /version, completions, chat, n, seeds, the scoring
    strategy): the same capabilities and the same (fastest) strategy as without faults."""
    with fault_proxy(vllm_server, lambda n, path: None) as clean:
        expected = _what_was_chosen(_probed(clean.url, tiny_model))
        routes = set(clean.paths(14))
    assert len(clean.seen) >= 14
    assert expected[0]["strategy"] == "trie" and expected[0]["chat"] is True
    assert {"/v1/models", "/version", "/v1/completions", "/v1/chat/completions"} <= routes
    for n in range(1, 15):

        def plan(k: int, path: str, n: int = n) -> str | None:
            return fault if k == n else None

        with fault_proxy(vllm_server, plan) as proxy:
            engine = _probed(proxy.url, tiny_model)
            chosen = _what_was_chosen(engine)
        hit = proxy.seen[n - 1]
        assert hit[3] == fault
        assert chosen == expected, f"fault on request {n}: {hit}"
        assert engine.transport.stats.retries >= 1, hit
    # The manifest keeps the answer each capability was decided on.
    decided = engine.capabilities[0].decided_by
    assert decided["chat"].startswith("HTTP 200") and decided["strategy"].startswith("trie:")


@pytest.mark.parametrize(
    ("route", "fault"),
    [("/v1/models", "500"), ("/v1/chat/completions", "500"), ("/v1/completions", "reset")],
)
def test_a_probe_that_keeps_failing_stops_with_one_line(
    vllm_server: str, tiny_model: Path, route: str, fault: str
) -> None:
    def plan(n: int, path: str) -> str | None:
        return fault if path == route else None

    with fault_proxy(vllm_server, plan) as proxy:
        with pytest.raises(RetriesExhausted) as raised:
            _probed(proxy.url, tiny_model, retries=2)
    text = str(raised.value)
    assert f"{proxy.url}{route} failed 3 times in a row" in text
    assert ("HTTP 500" if fault == "500" else "RemoteProtocolError") in text
    assert "Fix:" in text and "--max-retries" in text and "\n" not in text


def test_exhausted_retries_in_a_run_are_one_line_and_the_same_command_resumes(
    vllm_server: str, tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server starts failing every scoring request mid-run: the run stops with one line
    (exit 2) naming the endpoint, the route, the last status and the fix; the finished chunks
    are kept; once the server is healthy the same command finishes the run, with no record
    lost or repeated."""
    import polars as pl

    from climb_vllm.cli import main

    state = {"scored": 0, "failing": False}

    def plan(n: int, path: str) -> str | None:
        if path != "/v1/completions":
            return None
        state["scored"] += 1
        return "500" if state["failing"] and state["scored"] > 60 else None

    out = tmp_path / "run"
    with fault_proxy(vllm_server, plan) as proxy:
        args = [
            "eval",
            "intrinsic",
            "--endpoint",
            proxy.url,
            "--tokenizer",
            str(tiny_model),
            "--out",
            str(out),
            "--limit",
            "120",
            "--chunk-size",
            "10",
            "--prompts-per-request",
            "8",
            "--max-retries",
            "2",
            "--display",
            "none",
        ]
        state["failing"] = True
        assert main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ")
        assert f"{proxy.url}/v1/completions failed 3 times in a row (last: HTTP 500)" in err[0]
        assert "Fix:" in err[0] and "rerun the same command" in err[0]
        chunks = out / "records" / "intrinsic"
        kept = sorted(chunks.glob("chunk-*.parquet"))
        assert 1 <= len(kept)
        state["failing"] = False
        assert main(args) == 0
    records = pl.read_parquet(sorted(chunks.glob("chunk-*.parquet")))
    assert records.select("code", "name").is_duplicated().sum() == 0
    assert records["code"].n_unique() == 120
