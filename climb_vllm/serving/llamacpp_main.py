"""Entry point of a llama.cpp server started by ``climb-vllm serve --server llamacpp``.

It runs under the interpreter of ``.venv-llamacpp`` (llama-cpp-python's server), which does not
have climb-vllm installed, so it imports nothing of this package. Before handing over to
``python -m llama_cpp.server`` it may do two things:

``--climb-chat-template FILE``
    Registers that Jinja chat template as the chat format ``climb-template``, so that a GGUF
    file without a template of its own answers chat requests with the same template that vLLM
    is given (the server's own ``--chat_format`` choices are fixed, named formats only).
``--climb-fast-ranking``
    For every token of a log-prob answer, llama-cpp-python 0.3.36 ranks the whole vocabulary
    with Python's ``sorted`` only to keep the first ``logprobs`` entries: 0.48 s per token at
    Gemma 3's 262,144 tokens, 84% of a scoring request's time. The flag gives its module a
    ``sorted`` that returns just those leading entries, from a partial selection
    (``heapq.nlargest``, documented as equal to ``sorted(..., reverse=True)[:n]``), while a
    completion asking for ``logprobs`` = n runs; the lists are read only as ``[:n]``. Every
    other call is the builtin.
    Log-probs are untouched; ``tests/serving/test_llamacpp.py`` compares whole answers with
    and without it.

Usage: ``python -P llamacpp_main.py [--climb-chat-template FILE] [--climb-fast-ranking]
<llama_cpp.server flags>``.
"""

from __future__ import annotations

import builtins
import heapq
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

#: The chat format name the registered template gets.
CHAT_FORMAT = "climb-template"


#: The ``logprobs`` of the completion being computed (None outside one).
_WANTED = threading.local()


def ranked(
    items: Iterable[Any], *, key: Callable[[Any], Any] | None = None, reverse: bool = False
) -> Any:
    """``sorted`` for llama-cpp-python's completion code: inside a completion that asks for
    ``logprobs`` = n, a descending sort without a key (the top-log-prob lists, read only as
    ``[:n]``) returns just its first n entries, ``heapq.nlargest(n, items)``; any other call
    is the builtin."""
    wanted = getattr(_WANTED, "n", None)
    if key is None and reverse and wanted is not None:
        return heapq.nlargest(wanted, items)
    return builtins.sorted(items, key=key, reverse=reverse)


def _remember_logprobs(create: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """Wrap ``Llama._create_completion`` (a generator, called with keywords) so that
    :func:`ranked` knows the request's ``logprobs`` while it runs. The server runs one
    completion at a time."""

    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        previous = getattr(_WANTED, "n", None)
        _WANTED.n = kwargs.get("logprobs")
        try:
            yield from create(self, *args, **kwargs)
        finally:
            _WANTED.n = previous

    return wrapped


def _special_texts(model: str) -> tuple[str, str]:
    """The BOS and EOS token texts of a GGUF file (its vocabulary only is loaded), as
    llama-cpp-python reads them for a template the file carries."""
    from llama_cpp import Llama

    vocabulary = Llama(model_path=model, vocab_only=True, verbose=False)
    text = vocabulary._model.token_get_text
    return text(vocabulary.token_bos()), text(vocabulary.token_eos())


def main(argv: list[str]) -> None:
    """Apply the ``--climb-*`` flags, then run the server on the remaining flags."""
    if "--climb-fast-ranking" in argv:
        argv = [a for a in argv if a != "--climb-fast-ranking"]
        from llama_cpp import llama as completion_code

        completion_code.sorted = ranked
        llama = completion_code.Llama
        llama._create_completion = _remember_logprobs(llama._create_completion)
    if argv[:1] == ["--climb-chat-template"]:
        from llama_cpp import llama_chat_format

        with open(argv[1], encoding="utf-8") as handle:
            template = handle.read()
        bos, eos = _special_texts(argv[argv.index("--model") + 1])
        # The template may write them; the end of sequence is also the chat's stop string (an
        # empty one would end every answer before it starts).
        formatter = llama_chat_format.Jinja2ChatFormatter(template, eos_token=eos, bos_token=bos)
        registry = llama_chat_format.LlamaChatCompletionHandlerRegistry()
        registry.register_chat_completion_handler(
            CHAT_FORMAT, formatter.to_chat_handler(), overwrite=True
        )
        argv = argv[2:] + ["--chat_format", CHAT_FORMAT]
    sys.argv = ["llama_cpp.server", *argv]
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main(sys.argv[1:])
