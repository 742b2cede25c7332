"""The token-boundary contract, with the real tiny tokenizer and with a merging tokenizer."""

from __future__ import annotations

from typing import Any

from climb_vllm.engines.boundary import BoundaryEncoder


def test_contract_with_real_tokenizer(engine: Any) -> None:
    tok = engine.tokenizer
    encoder = BoundaryEncoder(tok)
    texts = ["Cholera is related to the name:", "Tuberculosis of prostate is related to the name:"]
    names = ["Esther", "Aaliyah", "Muhammad"]
    planned = encoder.plan(texts, names)
    assert encoder.mismatched_pairs == 0
    assert len(planned) == 2
    for plan in planned:
        text = texts[plan.text_index]
        prefix = tok(text)["input_ids"]
        assert list(plan.request.prefix) == prefix
        assert prefix[0] == tok.bos_token_id  # BOS exactly as the tokenizer adds it
        for cont, j in zip(plan.request.continuations, plan.name_indices):
            assert list(cont) == tok(f"{text} {names[j]}")["input_ids"][len(prefix) :]
    # Some names are several tokens, some one.
    lengths = {len(c) for c in planned[0].request.continuations}
    assert 1 in lengths and max(lengths) > 1


class MergingTokenizer:
    """Characters as ids with BOS=0, except that ": Z" is one token (a cross-boundary merge)."""

    def __call__(self, texts: Any, add_special_tokens: bool = True) -> dict[str, Any]:
        batch = [texts] if isinstance(texts, str) else texts
        out = []
        for text in batch:
            ids = [0] if add_special_tokens else []
            i = 0
            while i < len(text):
                if text.startswith(": Z", i):
                    ids.append(1000)
                    i += 3
                else:
                    ids.append(ord(text[i]))
                    i += 1
            out.append(ids)
        return {"input_ids": out[0] if isinstance(texts, str) else out}


def test_pairs_that_break_the_contract_are_split_at_the_common_prefix() -> None:
    encoder = BoundaryEncoder(MergingTokenizer())
    planned = encoder.plan(["ab:"], ["Yo", "Zed"])
    assert encoder.mismatched_pairs == 1
    shared = [p for p in planned if p.name_indices == (0,)][0].request
    assert shared.prefix == (0, ord("a"), ord("b"), ord(":"))
    assert shared.continuations == ((ord(" "), ord("Y"), ord("o")),)
    split = [p for p in planned if p.name_indices == (1,)][0].request
    # "ab:" -> [0, a, b, :] but "ab: Zed" -> [0, a, b, <: Z>, e, d]: common prefix is [0, a, b].
    assert split.prefix == (0, ord("a"), ord("b"))
    assert split.continuations == ((1000, ord("e"), ord("d")),)


def test_trailing_special_tokens_are_cut() -> None:
    class EosTokenizer(MergingTokenizer):
        def __call__(self, texts: Any, add_special_tokens: bool = True) -> dict[str, Any]:
            out = super().__call__(texts, add_special_tokens)
            if add_special_tokens:
                rows = [out["input_ids"]] if isinstance(texts, str) else out["input_ids"]
                for row in rows:
                    row.append(2)
            return out

    encoder = BoundaryEncoder(EosTokenizer())
    planned = encoder.plan(["ab"], ["Yo"])
    assert planned[0].request.prefix == (0, ord("a"), ord("b"))
    assert planned[0].request.continuations == ((ord(" "), ord("Y"), ord("o")),)


def _release_texts(codes: int) -> list[str]:
    from climb_vllm.benchmarks.intrinsic.config import DEFAULT_TEMPLATE
    from climb_vllm.resources.ontology import load_ontology

    descriptions = list(load_ontology().table["description"])
    step = max(1, len(descriptions) // codes)  # spread over every chapter
    return [DEFAULT_TEMPLATE.format(description=d) for d in descriptions[::step][:codes]]


def _tails_equal_full(tokenizer: Any, codes: int) -> BoundaryEncoder:
    from climb_vllm.resources.names import load_names

    texts = _release_texts(codes)
    names = load_names().distinct(5)
    tails = BoundaryEncoder(tokenizer)
    full = BoundaryEncoder(tokenizer, tails=False)
    for start in range(0, len(texts), 500):
        assert tails.plan(texts[start : start + 500], names) == full.plan(
            texts[start : start + 500], names
        )
    assert tails.mismatched_pairs == full.mismatched_pairs
    return tails


def test_tails_give_the_full_encoding_with_the_tiny_tokenizer(engine: Any) -> None:
    encoder = _tails_equal_full(engine.tokenizer, 1500)
    assert encoder.counts.tail_texts > 0 and encoder.counts.verification_failures == 0


def test_tails_give_the_full_encoding_with_gemma_3(real_model: Any) -> None:
    from transformers import AutoTokenizer

    encoder = _tails_equal_full(AutoTokenizer.from_pretrained(str(real_model)), 3000)
    assert encoder.counts.tail_texts == 3000 and encoder.counts.full_texts == 0


def test_tails_give_the_full_encoding_with_llama_3() -> None:
    from transformers import AutoTokenizer

    from climb_vllm.models.presets import tokenizer_folder

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_folder("llama3")))
    encoder = _tails_equal_full(tokenizer, 3000)
    assert encoder.counts.tail_texts == 3000 and encoder.counts.full_texts == 0


class FarMergingTokenizer(MergingTokenizer):
    """A text ending in "Zed" turns its first character into id 999: a merge far before the
    tail, which only the full encoding shows."""

    def __call__(self, texts: Any, add_special_tokens: bool = True) -> dict[str, Any]:
        out = super().__call__(texts, add_special_tokens)
        batch = [texts] if isinstance(texts, str) else texts
        rows = [out["input_ids"]] if isinstance(texts, str) else out["input_ids"]
        for text, row in zip(batch, rows):
            if text.endswith("Zed") and text.count(" ") > 4:
                row[1 if add_special_tokens else 0] = 999
        return out


def test_a_failed_verification_sends_the_call_to_the_full_path() -> None:
    texts = ["aa bb cc dd ee", "ff gg hh ii jj"]
    names = ["Yo", "Zed"]
    encoder = BoundaryEncoder(FarMergingTokenizer(), verify_pairs=200)
    planned = encoder.plan(texts, names)
    assert encoder.counts.verification_failures == 1
    assert encoder.counts.full_texts == 2 and encoder.counts.tail_texts == 0
    assert planned == BoundaryEncoder(FarMergingTokenizer(), tails=False).plan(texts, names)
    # "Zed" broke the contract (its first token changed): split at the common prefix.
    assert encoder.mismatched_pairs == 2


def test_short_texts_are_their_own_tail(engine: Any) -> None:
    texts = ["Cholera:", "Flu"]
    names = ["Esther", "Muhammad"]
    tails = BoundaryEncoder(engine.tokenizer)
    assert tails.plan(texts, names) == BoundaryEncoder(engine.tokenizer, tails=False).plan(
        texts, names
    )
