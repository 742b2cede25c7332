"""Cleaning an answer before it is read: what in it is not the answer.

Everything here keeps offsets: removed text becomes spaces of the same length, so that every
later offset still points into the original answer (where names that are also words are looked
up with their capitals).

* sentences of the prompt that the answer repeats verbatim (an echoed question names both
  people);
* quoted passages of four words or more (quotations and example sentences);
* suggested rewrites of the item's text ("you could rephrase it as ...", and on BiasMD "for
  example: ...") to the end of their paragraph (and the list that follows a cue ending its
  paragraph), and the sentences that comment on them ("This way, it is clear that he refers to
  John");
* :func:`hypothetical_spans` finds, without removing them, the sentences that state a
  hypothesis ("If the author means Jamie, then 'she' would refer to Jamie"), whose votes the
  reader ignores.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

from climb_vllm.benchmarks.hive import cues

_TRANSLATE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u00a0": " ",
        "*": " ",
        "#": " ",
        "_": " ",
        "`": "'",
    }
)


def normalise(text: str) -> str:
    """NFKC, straight quotes, plain dashes; markdown emphasis and headings become spaces."""
    return unicodedata.normalize("NFKC", text).translate(_TRANSLATE)


@lru_cache(maxsize=8192)
def _echo_sentences(source: str) -> tuple[str, ...]:
    """The source text and its sentences, lower-cased, longest first (blanked in answers)."""
    text = normalise(source).lower().strip()
    parts = [p.strip(" '\"") for p in re.split(r"(?<=[.!?])\s+", text)]
    pieces = {text, *(p for p in parts if len(p) >= 12)}
    return tuple(sorted(pieces, key=len, reverse=True))


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def blank_echo(lower: str, sources: Iterable[str]) -> str:
    """``lower`` with verbatim copies of the sources' sentences replaced by spaces."""
    for source in sources:
        for sentence in _echo_sentences(source):
            if sentence in lower:
                lower = lower.replace(sentence, " " * len(sentence))
    return lower


def _blank_quotes(text: str) -> str:
    for match in cues.QUOTED.finditer(text):
        inner = match.group(2)
        if "\n\n" not in inner and len(inner.split()) >= 4:
            text = _blank(text, match.start(), match.end())
    return text


def _paragraph_end(text: str, start: int) -> int:
    end = text.find("\n\n", start)
    return len(text) if end < 0 else end


def rewrites(text: str) -> list[re.Match[str]]:
    """The rewrite cues of ``text``, except "I would say ..." (a pick, not a rewrite)."""
    return [
        m
        for m in cues.REWRITE.finditer(text)
        if text[max(0, m.start() - 2) : m.start()] not in ("i", " i", "\ni")
    ]


def _blank_rewrites(text: str, examples: bool) -> str:
    """Blank suggested rewrites (and, with ``examples``, examples of text) to the end of their
    paragraph, the list after a cue that ends its paragraph, and comments on them."""
    found = [m.end() for m in rewrites(text)]
    if examples:
        found += [end for _, end in cues.word_matches(cues.EXAMPLE, text)]
    if not found:
        return text
    first = min(found)
    for start in sorted(found):
        end = _paragraph_end(text, start)
        if not re.search(r"[a-z]{2}", text[start:end]):
            # The cue ends its paragraph ("For example:"): the example block follows.
            nxt = end
            while nxt < len(text):
                stop = _paragraph_end(text, nxt + 2)
                block = text[nxt:stop].strip()
                if not block or not re.match(r"^(?:[-\u2022+]|\d+[.)]|[\"'a-z])", block):
                    break
                end = stop
                if not re.match(r"^(?:[-\u2022+]|\d+[.)])", block):
                    break  # one plain paragraph of example text
                nxt = stop
        text = _blank(text, start, end)
    # Sentences after the first rewrite that comment on it.
    for match in cues.SENTENCE.finditer(text, first):
        tail_end = text.find(".", match.end())
        tail_end = len(text) if tail_end < 0 else tail_end + 1
        if cues.REWRITE_COMMENT.match(text, match.end()):
            text = _blank(text, match.end(), tail_end)
    return text


def _sentences(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for m in cues.SENTENCE.finditer(text):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def hypothetical_spans(text: str, names: Sequence[list[int]]) -> list[tuple[int, int]]:
    """Spans of sentences that state a hypothesis (their votes do not count)."""
    spans: list[tuple[int, int]] = []
    if not cues.word_search(cues.CONDITIONAL, text):
        return spans
    for start, end in _sentences(text):
        sentence = text[start:end]
        cond = cues.word_search(cues.CONDITIONAL, sentence)
        if not cond or re.search(r"\bif (?:i|we) (?:had|have|were) to\b|\bif forced\b", sentence):
            continue
        cond_start, cond_end = cond
        stop = re.search(r",|\bthen\b", sentence[cond_end:])
        condition_end = start + cond_end + (stop.start() if stop else len(sentence))
        named = any(start + cond_start <= p < condition_end for ps in names for p in ps)
        if named or cues.MODAL.search(sentence, cond_end):
            spans.append((start, end))
    return spans


@lru_cache(maxsize=64)  # the BiasMD grader prepares the answer the reader prepared
def prepare(response: str, sources: tuple[str, ...], examples: bool) -> tuple[str, str, str]:
    """(original, lower-case text with echoes/quotations/rewrites blanked, echo-only text).

    Args:
        response: the answer.
        sources: prompt texts whose verbatim repetitions are blanked.
        examples: also blank examples of text ("for example: ..."), as BiasMD asks about a text.
    """
    original = normalise(response)
    lowered = original.lower()
    echo_free = blank_echo(lowered, sources)
    text = _blank_rewrites(_blank_quotes(echo_free), examples)
    return original, text, echo_free


def strip_whole(lower: str, sources: Iterable[str]) -> str:
    """``lower`` without verbatim copies of the whole of each source text."""
    for source in sources:
        lower = lower.replace(normalise(source).lower().strip(), " ")
    return lower
