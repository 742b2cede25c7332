"""Tokenizing through the server, when no local tokenizer is given: vLLM's ``/tokenize`` and
``/detokenize``, or llama-cpp-python's ``/extras/tokenize`` and ``/extras/detokenize``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from climb_vllm.core.errors import UserError
from climb_vllm.engines.transport import Transport


class ServerTokenizer:
    """A tokenizer that asks the server: vLLM's ``/tokenize`` and ``/detokenize``, or
    llama-cpp-python's ``/extras/tokenize`` and ``/extras/detokenize``; slower than a local one.

    Args:
        transport: the engine's transport (its first endpoint is asked).
        model: the served model name.
        path: the tokenize endpoint, ``/tokenize`` or ``/extras/tokenize``.
    """

    def __init__(self, transport: Transport, model: str, path: str = "/tokenize") -> None:
        self.transport = transport
        self.model = model
        self.path = path
        self.bos_token_id: int | None = None
        self.all_special_ids: list[int] = []
        if path == "/extras/tokenize":
            # llama.cpp always adds the BOS (when the model has one): the empty text's tokens.
            self.all_special_ids = self._ask([""])[0]
            self.bos_token_id = self.all_special_ids[0] if self.all_special_ids else None

    def _ask(self, batch: list[str], add_special_tokens: bool = True) -> list[list[int]]:
        bodies: list[dict[str, Any] | None] = []
        for text in batch:
            if self.path == "/extras/tokenize":
                bodies.append({"model": self.model, "input": text})
            else:
                bodies.append(
                    {"model": self.model, "prompt": text, "add_special_tokens": add_special_tokens}
                )
        ids = []
        # The transport's own retries: a passing fault is asked again, never taken for "this
        # server cannot tokenize".
        for status, content in self.transport.ask_each(0, "POST", self.path, bodies):
            found = list(self._answer(status, content, self.path)["tokens"])
            if not add_special_tokens and self.path == "/extras/tokenize":
                found = found[len(self.all_special_ids) :]
            ids.append(found)
        return ids

    def _answer(self, status: int, content: bytes, path: str) -> dict[str, Any]:
        """The JSON body of a 200 answer; any other answer is one error naming the fix."""
        if status != 200:
            raise UserError(
                f"{self.transport.urls[0]}{path} answered HTTP {status}.",
                "pass --tokenizer with the model's tokenizer folder or hub id.",
            )
        body: dict[str, Any] = json.loads(content)
        return body

    def __call__(self, texts: Any, add_special_tokens: bool = True) -> dict[str, Any]:
        batch = [texts] if isinstance(texts, str) else list(texts)
        ids = self._ask(batch, add_special_tokens)
        return {"input_ids": ids[0] if isinstance(texts, str) else ids}

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        """The text of ``ids`` (special tokens dropped when asked)."""
        if skip_special_tokens:
            ids = [t for t in ids if t not in self.all_special_ids]
        extras = self.path == "/extras/tokenize"
        path = "/extras/detokenize" if extras else "/detokenize"
        payload = {"model": self.model, "tokens": list(ids)}
        body = self._answer(*self.transport.ask(0, "POST", path, payload), path)
        return str(body["text"] if extras else body["prompt"])
