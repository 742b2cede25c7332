"""The child of a non-billable ICD-10-CM header that a coder takes: by the words the text says
where it says one that tells the children apart, else by the tabular list's conventions for a
text that says nothing more (:func:`default_child`)."""

from __future__ import annotations

import re
from collections.abc import Callable

from climb_vllm.resources.words import content_words


def _unspecified(title: str) -> bool:
    return "unspecified" in title or "not specified" in title


_NONDOMINANT = re.compile(r"\bnon-?dominant\b")

#: The words by which the tabular list names a side.
SIDES = frozenset({"right", "left"})


def _plain(title: str) -> str:
    """A title's words without punctuation ("alcohol abuse, with withdrawal, unspecified" and
    "alcohol abuse with withdrawal, unspecified" read the same)."""
    return " ".join(re.findall(r"[a-z0-9]+", title.lower()))


def stem(code: str) -> str:
    """``code`` without its 7th character and the "X" placeholders before it (S93.02XA ->
    S93.02), so that its last character is the one the tabular list's levels assign."""
    if len(code.replace(".", "")) == 7:
        code = code[:-1]
    return code.rstrip("X")


def default_child(
    children: list[str], titles: list[str], nos: frozenset[str] = frozenset(), parent: str = ""
) -> str | None:
    """The child a coder takes when the text says nothing more, in this order (titles in lower
    case, row-aligned with ``children``; ``nos``: the codes with an inclusion term "... NOS";
    ``parent``: their parent's title in lower case), leaving out a child titled "with other
    complication" when a sibling is titled "without complication" (B27.9 -> B27.90, not
    B27.99):

    0. titled as the parent followed by ", unspecified", punctuation aside (F10.12 -> F10.129,
       "alcohol abuse with intoxication, unspecified"; F10.13 -> F10.139);
    0a. titled "..., uncomplicated", the Index's default where the children name what the
       condition caused (F10.1 -> F10.10, not F10.19, "with unspecified alcohol-induced
       disorder"; F11.2 -> F11.20);
    0b. titled as the parent followed by ", unspecified site", and ending in "0" or "9" before
       any 7th character (C81.9 -> C81.90, where C81.99 is "Hodgkin lymphoma, unspecified,
       extranodal and solid organ sites"; T20.0 -> T20.00XA, where T20.09XA is "multiple
       sites"; a child ending in "1" is a side or an organism);
    1. ending in "9" and titled unspecified (I50 -> I50.9, I82.40 -> I82.409);
    2. ending in "0" and titled unspecified (E78.0 -> E78.00, S72.0 -> S72.00, where S72.09 is
       "other"; O32.1 -> O32.1XX0, "not applicable or unspecified"; K40.9 -> K40.90, "not
       specified as recurrent");
    3. ending in "9", unless it is a 7th character (E11 -> E11.9, "without complications";
       I26.9 -> I26.99, "other pulmonary embolism", the Index's code for a pulmonary embolism
       NOS; a 7th "9" of the O chapter is "other fetus");
    4. the first titled unspecified;
    5. the only one titled as the parent (I85 -> I85.0, "Esophageal varices", beside I85.1,
       "Secondary esophageal varices");
    6. the only one with an inclusion term "... NOS", the tabular list's own statement of
       the default (C91.1 -> C91.10, "chronic lymphocytic leukemia of B-cell type NOS"; J45.2
       -> J45.20; N40 -> N40.0, "enlarged prostate NOS"; I85 -> I85.00);
    7. the one titled "without" more often than every other child (the default when no
       complication is named: I25.1 -> I25.10, K70.1 -> K70.10; K80.2 -> K80.20, "without
       cholecystitis without obstruction");
    7a. the only one titled as a sibling with "not" before the sibling's last words, a
       feature the text would have to state (G43.0 -> G43.00, "migraine without aura, not
       intractable", beside "..., intractable"; G40.00 -> G40.009 then follows by rule 3);
    8. a 7th character "A", initial encounter (S06.0X9 -> S06.0X9A);
    9. the only child;
    10. the only child ending in "8" and titled "other".
    """
    extension = len(children[0].replace(".", "")) == 7
    pairs = list(zip(children, titles))
    if any("without complication" in t for t in titles):
        # "With other complication" is never what a text that names none means (B27.9 ->
        # B27.90, "unspecified without complication", not B27.99).
        pairs = [(c, t) for c, t in pairs if "with other complication" not in t]
    rules: tuple[Callable[[str, str], bool], ...] = (
        lambda c, t: _plain(t) == _plain(f"{parent} unspecified"),
        lambda c, t: t.endswith(", uncomplicated"),
        lambda c, t: t == f"{parent}, unspecified site" and stem(c)[-1] in "09",
        lambda c, t: c.endswith("9") and _unspecified(t),
        lambda c, t: c.endswith("0") and _unspecified(t),
        lambda c, t: c.endswith("9") and not extension,
        lambda c, t: _unspecified(t),
    )
    for rule in rules:
        chosen = next((c for c, t in pairs if rule(c, t)), None)
        if chosen is not None:
            return chosen
    same = [c for c, t in pairs if t == parent]
    if len(same) == 1:
        return same[0]
    stated = [c for c, _ in pairs if c in nos]
    if len(stated) == 1:
        return stated[0]
    counts = [t.count("without") for _, t in pairs]
    if counts and max(counts) > 0 and counts.count(max(counts)) == 1:
        return pairs[counts.index(max(counts))][0]
    titles_set = {t for _, t in pairs}
    negated = [c for c, t in pairs if re.sub(r"\bnot ", "", t, count=1) in titles_set - {t}]
    if len(negated) == 1:
        return negated[0]
    if extension:
        chosen = next((c for c in children if c.endswith("A")), None)
        if chosen is not None:
            return chosen
    if len(children) == 1:
        return children[0]
    # With no unspecified child, the "other" child is what the Index gives for the bare term
    # (D63 -> D63.8, "Anemia in other chronic diseases classified elsewhere"; D61.81,
    # "Pancytopenia" -> D61.818, "Other pancytopenia").
    other = [c for c, t in pairs if stem(c).endswith("8") and "other" in t.split()]
    return other[0] if len(other) == 1 else None


def by_side(children: list[str], titles: list[str], side: str | None) -> list[int]:
    """The positions of the children a text that names ``side`` ("right", "left" or None) may
    take (titles in lower case, row-aligned with ``children``; all of them when none fits):

    - a named side keeps the children of that side (S93.40 -> S93.401 for "right"); where they
      differ by dominance, the left side is the non-dominant and the right the dominant one,
      the official guidelines' default when dominance is not documented (I69.35 -> I69.354
      for "left hemiplegia following a stroke");
    - no side keeps the children that name none (S73.00 -> S73.006, not the right hip).
    """
    if side is not None:
        kept = [k for k, t in enumerate(titles) if side in t.split()]
        if any("dominant" in titles[k] for k in kept):
            # "non-dominant" in chapter I, "nondominant" in G81-G83.
            kept = [k for k in kept if bool(_NONDOMINANT.search(titles[k])) == (side == "left")]
    else:
        kept = [k for k, t in enumerate(titles) if not SIDES & set(t.split())]
    return kept or list(range(len(children)))


#: Words that name a kind of condition, not which child: "severe alcohol use disorder" says
#: nothing of F10.29, "alcohol dependence with unspecified alcohol-induced disorder".
GENERIC_WORDS = frozenset({"disorder", "disease", "syndrome", "condition", "classified"})


def own_words(titles: list[str]) -> list[frozenset[str]]:
    """Each title's own words: its content words
    (:func:`~climb_vllm.resources.words.content_words`) that not every title has, the
    :data:`GENERIC_WORDS` aside."""
    common = common_words(titles)
    return [content_words(t) - GENERIC_WORDS - common for t in titles]


def common_words(titles: list[str]) -> frozenset[str]:
    """The content words every title has, the :data:`GENERIC_WORDS` aside."""
    words = [content_words(t) - GENERIC_WORDS for t in titles]
    return frozenset.intersection(*words) if words else frozenset()


def by_words(
    children: list[str],
    titles: list[str],
    said: frozenset[str],
    nos: frozenset[str] = frozenset(),
    parent: str = "",
) -> str | None:
    """The child a text saying ``said`` (its content words) takes among ``children`` (titles
    in lower case, row-aligned), by the words that tell the children apart
    (:func:`own_words`):

    1. of the children whose own words the text says most, the one :func:`default_child`
       takes ("acute gastric ulcer": of K25.0-K25.3, the acute ones, K25.3 "without
       hemorrhage or perforation"; "dislocation of the hip": S73.006, of the dislocations the
       one that adds no side, the side being decided before);
    2. else, of those, the ones with fewest own words the text does not say, by
       :func:`default_child` ("chronic heart failure": I50.22, not I50.23 "acute on
       chronic");
    3. else, and when the text says no child's own word, :func:`default_child` among all.
    """
    own = own_words(titles)
    hits = [len(w & said) for w in own]
    tiers: list[list[int]] = []
    if hits and max(hits) > 0:
        best = [k for k, h in enumerate(hits) if h == max(hits)]
        misses = {k: len(own[k] - said) for k in best}
        tiers = [best, [k for k in best if misses[k] == min(misses.values())]]
    tiers.append(list(range(len(children))))
    for tier in tiers:
        chosen = default_child([children[k] for k in tier], [titles[k] for k in tier], nos, parent)
        if chosen is not None:
            return chosen
    return None
