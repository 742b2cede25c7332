"""The context length asked of the servers: vLLM's ``/v1/models`` on a real server, the endpoints
file for a server that does not report it, the smallest over replicas, and the extrinsic run's
budget taken from the server rather than from the model's own configuration."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from climb_vllm.engines.served_context import served_context


def _models_server(entries: list[dict[str, Any]]) -> tuple[ThreadingHTTPServer, str]:
    """A real HTTP server on loopback whose ``/v1/models`` lists ``entries``."""
    body = json.dumps({"object": "list", "data": entries}).encode()

    class Models(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server interface
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Models)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def servers() -> Iterator[list[str]]:
    """Three loopback servers: two listing ``m`` with 4,096 and 2,048 tokens, one (as llama-cpp-
    python's) listing ``m`` with no context."""
    started = [
        _models_server([{"id": "m", "max_model_len": 4096}, {"id": "other", "max_model_len": 9}]),
        _models_server([{"id": "m", "max_model_len": 2048}]),
        _models_server([{"id": "m", "object": "model", "owned_by": "me"}]),
    ]
    yield [url for _, url in started]
    for server, _ in started:
        server.shutdown()


def test_the_served_models_context_is_read_and_the_smallest_replica_wins(
    servers: list[str],
) -> None:
    assert served_context(servers[:1], "m") == 4096
    assert served_context(servers[:2], "m") == 2048  # a prompt fitted to it fits both
    assert served_context(servers[1:2]) == 2048  # the only model, when none is named
    assert served_context(servers[:1]) is None  # two models and none named


def test_a_server_that_does_not_say_is_read_from_the_endpoints_file(
    servers: list[str], tmp_path: Path
) -> None:
    state = tmp_path / "endpoints.json"
    assert served_context(servers[2:], "m", state) is None  # not started by serve: unknown
    state.write_text(json.dumps({"servers": [{"url": servers[2], "context": 1024}]}))
    assert served_context(servers[2:], "m", state) == 1024
    assert served_context(servers, "m", state) == 1024
    assert served_context(["http://127.0.0.1:1"], "m", state) is None  # unreachable: unknown


def test_the_extrinsic_budget_is_the_servers_context(servers: list[str], tiny_model: Path) -> None:
    """The tiny model's folder allows more than the server serves: the server's value is used,
    and the folder's only where the servers do not say."""
    from climb_vllm.benchmarks.extrinsic.benchmark import EXTRINSIC
    from climb_vllm.core.config import EngineConfig

    local = json.loads((tiny_model / "config.json").read_text())["max_position_embeddings"]
    assert local != 2048
    engine = EngineConfig(
        model=str(tiny_model), engine="http", endpoints=(servers[1],), served_model="m"
    )
    config = EXTRINSIC.configure(engine, {"limit": 24})
    assert config.context_tokens == 2048
    other = engine.model_copy(update={"endpoints": (servers[2],)})
    config = EXTRINSIC.configure(other, {"limit": 24})
    assert config.context_tokens == local
    config = EXTRINSIC.configure(engine, {"limit": 24, "context_tokens": 512})
    assert config.context_tokens == 512  # the option, when given, wins


def test_vllm_reports_the_context_it_serves(vllm_server: str) -> None:
    listed = httpx.get(vllm_server + "/v1/models", timeout=30).json()["data"]
    assert served_context([vllm_server], "tiny") == listed[0]["max_model_len"] > 0
