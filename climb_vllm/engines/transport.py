"""Reliable JSON-over-HTTP to one or more endpoints: bounded concurrency, rate limit, retries.

Work is a stream of jobs, each pinned to an endpoint (prefix-affine routing is the caller's).
A fixed pool of worker tasks pulls jobs from a bounded queue, so millions of prompts never
become millions of tasks. Connection errors, timeouts, HTTP 429 and 5xx, and bodies that are not
valid JSON or that the caller's parser rejects are retried with exponential backoff and jitter,
a finite number of times. An endpoint that keeps failing to connect is marked dead and its jobs
move to a live one; when none is left, the run stops with a clear error.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from climb_vllm.core.errors import UserError

#: Environment variables read for the API key, in order; the key is never logged or stored.
API_KEY_VARIABLES = ("CLIMB_API_KEY", "OPENAI_API_KEY")
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


def _dead(url: str) -> UserError | None:
    """"The server died", with its log, when ``make serve`` started the server at ``url``."""
    from climb_vllm.serving import death_report

    return death_report(url)


class RequestFailed(Exception):
    """A request that failed for a reason retrying cannot fix (a 4xx answer, say)."""


def api_key() -> str | None:
    """The API key from the environment, if any."""
    for name in API_KEY_VARIABLES:
        value = os.environ.get(name)
        if value:
            return value
    return None


@dataclass
class TransportStats:
    """Counters for the benchmark and the manifest."""

    requests: int = 0
    retries: int = 0
    response_bytes: int = 0
    failovers: int = 0


class Transport:
    """HTTP clients for a list of base URLs.

    Args:
        urls: endpoint base URLs (``http://host:port``).
        concurrency: requests in flight at once, over all endpoints.
        rate: the most requests per second (None = unlimited), via asyncio-throttle.
        retries: attempts after the first for a retryable failure.
        timeout: seconds for one request.
        backoff: base delay in seconds of the exponential backoff.
        hook: a callable returning an ``httpx.AsyncBaseTransport`` to send through instead of
            the network one (a proxy transport, or fault injection in tests); it is called once
            per batch of work, since each batch runs in its own event loop.
    """

    def __init__(
        self,
        urls: Sequence[str],
        *,
        concurrency: int = 64,
        rate: int | None = None,
        retries: int = 6,
        timeout: float = 600.0,
        backoff: float = 0.5,
        hook: Any = None,
    ) -> None:
        self.hook = hook
        self.urls = [u.rstrip("/") for u in urls]
        self.concurrency = concurrency
        self.rate = rate
        self.retries = retries
        self.timeout = timeout
        self.backoff = backoff
        self.dead: set[int] = set()
        self.stats = TransportStats()
        key = api_key()
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}

    def _client(self) -> Any:
        import httpx

        limits = httpx.Limits(
            max_connections=self.concurrency, max_keepalive_connections=self.concurrency
        )
        return httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout, connect=10.0),
            limits=limits,
            headers=self._headers,
            transport=self.hook() if self.hook is not None else None,
        )

    def get(self, endpoint: int, path: str) -> tuple[int, str]:
        """One synchronous GET (probing); returns (status, text) or raises UserError."""
        import httpx

        url = self.urls[endpoint] + path
        try:
            response = httpx.get(url, timeout=30.0, headers=self._headers)
        except httpx.HTTPError as exc:
            raise _dead(self.urls[endpoint]) or UserError(
                f"Endpoint {self.urls[endpoint]} is unreachable ({type(exc).__name__}).",
                "start the server (make serve MODEL=...) or correct --endpoint.",
            ) from exc
        return response.status_code, response.text

    async def _post(
        self,
        client: Any,
        endpoint: int,
        path: str,
        payload: dict[str, Any],
        check: Callable[[Any], Any],
    ) -> Any:
        """POST with retries; ``check`` parses the body and raises to ask for a retry."""
        import httpx

        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self.stats.retries += 1
                delay = self.backoff * 2 ** (attempt - 1)
                await asyncio.sleep(delay * (0.5 + random.random()))
            try:
                response = await client.post(self.urls[endpoint] + path, json=payload)
            except httpx.TransportError as exc:  # connect errors, resets, timeouts
                last = f"{type(exc).__name__}"
                if isinstance(exc, httpx.ConnectError) and attempt >= 2:
                    raise EndpointDown(endpoint, last) from exc
                continue
            self.stats.requests += 1
            self.stats.response_bytes += len(response.content)
            if response.status_code in RETRY_STATUS:
                last = f"HTTP {response.status_code}"
                continue
            if response.status_code >= 400:
                raise RequestFailed(
                    f"{self.urls[endpoint]}{path} answered HTTP {response.status_code}: "
                    f"{response.text[:300]}"
                )
            try:
                return check(json.loads(response.content))
            except ValueError as exc:  # invalid JSON or a parser's ResponseError
                last = f"unusable response ({exc})"
                continue
        raise RequestFailed(
            f"{self.urls[endpoint]}{path} failed {self.retries + 1} times (last: {last})"
        )

    async def run(
        self,
        jobs: Sequence[tuple[int, str, dict[str, Any]]],
        check: Callable[[int, Any], Any],
        on_result: Callable[[int, Any], None],
    ) -> None:
        """Send every job ``(endpoint, path, payload)``; ``on_result(job index, parsed)``.

        ``check(job index, body)`` parses a body; a ValueError from it means retry.
        """
        throttler = None
        if self.rate:
            from asyncio_throttle.throttler import Throttler

            throttler = Throttler(rate_limit=self.rate, period=1.0)
        queue: asyncio.Queue[int | None] = asyncio.Queue(maxsize=2 * self.concurrency)
        errors: list[BaseException] = []
        async with self._client() as client:

            async def worker() -> None:
                while True:
                    index = await queue.get()
                    if index is None:
                        return
                    if errors:  # the run is stopping: drain the queue without working
                        continue
                    try:
                        on_result(index, await self._send(client, throttler, index, jobs, check))
                    except BaseException as exc:  # stop the run, keep the first error
                        errors.append(exc)

            workers = [asyncio.create_task(worker()) for _ in range(self.concurrency)]
            for index in range(len(jobs)):
                if errors:
                    break
                await queue.put(index)
            for _ in workers:
                await queue.put(None)
            await asyncio.gather(*workers, return_exceptions=True)
        if errors:
            raise errors[0]

    async def _send(
        self,
        client: Any,
        throttler: Any,
        index: int,
        jobs: Sequence[tuple[int, str, dict[str, Any]]],
        check: Callable[[int, Any], Any],
    ) -> Any:
        """One job, moved to a live endpoint if its own is down."""
        endpoint, path, payload = jobs[index]
        while True:
            if endpoint in self.dead:
                endpoint = self._alive(index)
            try:
                if throttler is not None:
                    async with throttler:
                        return await self._post(
                            client, endpoint, path, payload, lambda b: check(index, b)
                        )
                return await self._post(client, endpoint, path, payload, lambda b: check(index, b))
            except EndpointDown as down:
                self.dead.add(down.endpoint)
                self.stats.failovers += 1

    def _alive(self, index: int) -> int:
        alive = [i for i in range(len(self.urls)) if i not in self.dead]
        if not alive:
            for url in self.urls:
                died = _dead(url)
                if died is not None:
                    raise died
            raise UserError(
                f"No endpoint is reachable ({', '.join(self.urls)}).",
                "start the server(s) with make serve, or correct --endpoint; rerun to resume.",
            )
        return alive[index % len(alive)]


class EndpointDown(Exception):
    """An endpoint refused connections repeatedly."""

    def __init__(self, endpoint: int, reason: str) -> None:
        super().__init__(f"endpoint {endpoint} down ({reason})")
        self.endpoint = endpoint
