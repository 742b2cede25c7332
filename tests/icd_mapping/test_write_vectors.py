"""Writing the packaged vectors: the facts recorded and the rows found again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.icd_mapping import title_index, write_vectors
from climb_vllm.icd_mapping.packaged_vectors import load
from climb_vllm.resources.encoder import encoder_fingerprint


def test_the_writer_stores_every_indexed_text_with_its_facts(  # type: ignore[no-untyped-def]
    ontology_2021, encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codes = ["I10", "E11.9", "J18.9", "N17.9"]
    real = title_index.build_or_load

    def few_codes(ontology: Any, **kwargs: Any) -> title_index.TitleIndex:
        assert kwargs["precision"] == "float32" and kwargs["names"]
        return real(ontology, codes, encoder, **kwargs)

    monkeypatch.setattr(title_index, "build_or_load", few_codes)
    facts = write_vectors.main(["--cache", str(tmp_path / "c"), "--out", str(tmp_path / "o")])
    assert facts["release_sha256"] == ontology_2021.sha256
    assert facts["encoder"] == encoder_fingerprint()
    stored = load(facts["encoder"], tmp_path / "o")
    assert stored is not None and stored.facts == facts
    built = real(ontology_2021, codes, encoder, cache=tmp_path / "c", names=True)
    assert facts["rows"] == len(set(built.titles)) > len(codes)
    assert stored.lookup(built.titles)[1].all()


def test_an_unwritable_destination_is_one_error_naming_the_fix(  # type: ignore[no-untyped-def]
    encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = title_index.build_or_load
    monkeypatch.setattr(
        title_index, "build_or_load", lambda ontology, **kw: real(ontology, ["I10"], encoder, **kw)
    )
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(UserError, match="--out"):
        write_vectors.main(["--cache", str(tmp_path / "c"), "--out", str(blocker / "sub")])
