"""A second, independent reading of CliBench's scoring rules (``segment_seq`` and
``nl_to_code`` in CliBench's ``score_clibench.ipynb``), written statement by statement in
CliBench's own order, to check the package's ``--protocol clibench`` against. It maps text by
brute-force cosine over the index's title embeddings with numpy (no FAISS), and decides validity
by membership in the release."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import numpy.typing as npt


def reference_codes(
    seq: str,
    titles: list[str],
    codes: list[str],
    embeddings: npt.NDArray[np.float32],
    encode: Callable[[list[str]], npt.NDArray[np.float32]],
    valid: Callable[[str], bool],
) -> list[str]:
    """The set of predicted codes of one output (sorted), empty when CliBench drops it."""
    char_pool = [t.lower().replace(" ", "") for t in titles]

    def nl_to_code(nl: str) -> list[str]:
        key = nl.lower().replace(" ", "")
        if key in char_pool:
            return [codes[char_pool.index(key)]]
        vector = encode([nl])[0]
        sims = (embeddings @ vector).tolist()
        if max(sims) < 0:
            return []
        return [codes[sims.index(max(sims))]]

    original = seq
    points: list[str] = []
    try:
        if "\n\n" in seq:
            if len(re.findall(r"\n\n", seq)) <= 5:
                head = seq.strip()[0]
                if head.isdigit() or head in ("•", "-", "*", "o"):
                    seq = seq.split("\n\n")[0]
                else:
                    seq = seq.split("\n\n")[1]
                points = seq.split("\n")
            else:
                points = seq.split("\n\n")
        elif "\n" in seq:
            points = seq.split("\n")
        elif "<br>" in seq:
            points = seq.split("<br>")
    except IndexError:
        points = []
    if len(points) == 0:
        points = re.findall(r"\d+\.\s(.+?)(?=\d+\.|\Z)", original, flags=re.DOTALL)
    points = [p for p in points if len(p) > 0]
    predicted: list[str] = []
    for point in points:
        if len(point) > 0 and point[0].isdigit():
            match = re.search(r"\d+\.\s*(.+)", point)
            nl = match.group(1) if match else ""
        else:
            nl = point
        found = re.findall(r"[A-Z]\d+\.[A-Za-z0-9]+", point)
        for c in found:
            if f"({c})" in nl:
                nl = nl.replace(f"({c})", "").strip()
            if f"[{c}]" in nl:
                nl = nl.replace(f"[{c}]", "").strip()
            if c in nl:
                nl = nl.replace(c, "").strip()
            nl = nl.strip()
        for label in (
            "<sep>",
            "(ICD-10-CM Code: )",
            "(ICD-10-CM code: )",
            "(ICD-10-CM: )",
            "ICD-10-CM Code:",
            "ICD-10-CM code:",
            "ICD-10-CM:",
        ):
            nl = nl.replace(label, "")
        nl = nl.strip()
        from_nl = nl_to_code(nl)
        good = [c for c in found if valid(c)]
        predicted.extend(good if good else from_nl)
    return sorted(set(predicted))
