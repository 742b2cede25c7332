"""A real HTTP proxy on loopback that forwards to a server and fails chosen requests: the
faults a flaky network or an overloaded server gives a client, on every route (the probe's
synchronous requests and the run's batches alike)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from tests.helpers import free_port

#: What a fault does: "500" answers HTTP 500; "reset" closes the connection unanswered.
FAULTS = ("500", "reset")


class FaultProxy:
    """Forwards every request to ``target``; ``plan(n, path)`` names the fault for the n-th
    request (counted from 1 over every route), or None to forward it.

    Attributes:
        url: the proxy's base URL (``http://127.0.0.1:PORT``).
        seen: (n, method, path, fault or "") of every request, in arrival order.
    """

    def __init__(self, target: str, plan: Callable[[int, str], str | None]) -> None:
        self.target = target.rstrip("/")
        self.plan = plan
        self.seen: list[tuple[int, str, str, str]] = []
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=300.0)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _handle(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size else b""
                with proxy._lock:
                    n = len(proxy.seen) + 1
                    fault = proxy.plan(n, self.path)
                    proxy.seen.append((n, self.command, self.path, fault or ""))
                if fault == "reset":
                    self.close_connection = True
                    return
                if fault == "500":
                    self._reply(500, b'{"error": {"message": "injected fault"}}')
                    return
                answer = proxy._client.request(
                    self.command,
                    proxy.target + self.path,
                    content=body,
                    headers={"Content-Type": self.headers.get("Content-Type", "application/json")},
                )
                self._reply(answer.status_code, answer.content)

            def _reply(self, status: int, content: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_GET = _handle
            do_POST = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def paths(self, first: int) -> list[str]:
        """The routes of the first ``first`` requests, in order."""
        return [path for n, _, path, _ in self.seen[:first]]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()


@contextmanager
def fault_proxy(target: str, plan: Callable[[int, str], str | None]) -> Iterator[FaultProxy]:
    """A running :class:`FaultProxy` in front of ``target``, shut down afterwards."""
    proxy = FaultProxy(target, plan)
    proxy._thread.start()
    try:
        yield proxy
    finally:
        proxy.close()
