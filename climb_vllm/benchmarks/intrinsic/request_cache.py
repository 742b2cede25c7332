"""Planned score requests kept on disk, so a repeated or resumed run does not encode again.

One file per chunk under ``<cache>/requests/``, named by a SHA-256 over what decides the plan:
the tokenizer's full definition (vocabulary, merges, normalizer, pre-tokenizer, special tokens,
as ``tokenizers`` serialises it), the chunk's prompt texts (so the release, the template and the
codes), the names, and :data:`PLAN_VERSION`. Any change gives another name, so a stale plan is
never read. Files are gzip-compressed JSON (no pickle: the cache holds data only) and are
written under a temporary name and renamed, so a killed run leaves no half file; an unreadable
file counts as missing.

Tokenizers without a Rust backend (test doubles) are not cached.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from climb_vllm.core.cache import cache_root
from climb_vllm.engines.base import ScoreRequest
from climb_vllm.engines.boundary import PlannedRequest

#: Bumped whenever the planner's output for the same inputs changes.
PLAN_VERSION = "1"


class RequestCache:
    """Plans of prompt chunks for one tokenizer.

    Args:
        tokenizer: the Hugging Face tokenizer the plans are made with.
        folder: where the files live (None: ``<cache root>/requests``).
    """

    def __init__(self, tokenizer: Any, folder: Path | None = None) -> None:
        backend = getattr(tokenizer, "backend_tokenizer", None)
        self.folder = folder or cache_root() / "requests"
        self._identity = (
            hashlib.sha256(backend.to_str().encode()).hexdigest()
            if backend is not None and hasattr(backend, "to_str")
            else None
        )
        self.hits = 0
        self.misses = 0

    def _path(self, texts: Sequence[str], names: Sequence[str]) -> Path | None:
        if self._identity is None:
            return None
        digest = hashlib.sha256()
        for part in (PLAN_VERSION, self._identity, "\n".join(names), "\n".join(texts)):
            digest.update(part.encode())
            digest.update(b"\0")
        key = digest.hexdigest()
        return self.folder / key[:2] / f"{key}.json.gz"

    def load(self, texts: Sequence[str], names: Sequence[str]) -> list[PlannedRequest] | None:
        """The stored plan of these texts and names (None: not stored, or unreadable)."""
        path = self._path(texts, names)
        if path is None or not path.is_file():
            self.misses += 1
            return None
        try:
            rows = json.loads(gzip.decompress(path.read_bytes()))
        except (OSError, ValueError, EOFError):
            self.misses += 1
            return None
        self.hits += 1
        # Texts that shared one tuple of continuations share it again (the engine's trie cache
        # and memory both gain).
        shared: dict[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]] = {}
        planned = []
        for text, prefix, conts, indices, split in rows:
            continuations = tuple(map(tuple, conts))
            continuations = shared.setdefault(continuations, continuations)
            request = ScoreRequest(tuple(prefix), continuations)
            planned.append(PlannedRequest(text, request, tuple(indices), split))
        return planned

    def save(
        self, texts: Sequence[str], names: Sequence[str], planned: Sequence[PlannedRequest]
    ) -> None:
        """Store a plan; a failed write (a full or read-only disk) only skips the cache."""
        path = self._path(texts, names)
        if path is None:
            return
        rows = [
            [p.text_index, p.request.prefix, p.request.continuations, p.name_indices, p.split]
            for p in planned
        ]
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_bytes(gzip.compress(json.dumps(rows).encode(), compresslevel=1))
            partial.replace(path)
        except OSError:
            partial.unlink(missing_ok=True)
