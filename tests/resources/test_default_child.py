"""The child of a header that a coder takes, on made-up titles (the release's own headers are
tested through ``Ontology.default_leaf`` in test_ontology.py)."""

from __future__ import annotations

from climb_vllm.resources.default_child import by_side, by_words, default_child, stem


def test_by_words_takes_the_child_whose_own_words_the_text_says() -> None:
    children = ["H.3", "H.6", "H.4"]
    titles = [
        "subluxation of unspecified hip",
        "dislocation of unspecified hip",
        "dislocation of right hip",
    ]
    # "hip" is every child's word; "dislocation" tells two apart, and "right" is not said.
    assert by_words(children, titles, frozenset({"dislocation", "hip"})) == "H.6"
    assert by_words(children, titles, frozenset({"dislocation", "right", "hip"})) == "H.4"
    # Saying none of the children's own words leaves it to the conventions: the first child
    # titled unspecified.
    assert by_words(children, titles, frozenset({"hip"})) == "H.3"


def test_by_words_lets_the_conventions_choose_among_the_most_said() -> None:
    children = ["K.0", "K.1", "K.3", "K.5"]
    titles = [
        "acute ulcer with hemorrhage",
        "acute ulcer with perforation",
        "acute ulcer without hemorrhage or perforation",
        "chronic ulcer with perforation",
    ]
    # Three children say "acute"; the one titled "without" is the default among them.
    assert by_words(children, titles, frozenset({"acute", "ulcer"})) == "K.3"


def test_by_words_prefers_fewest_unsaid_words_when_the_conventions_cannot_choose() -> None:
    children = ["I.21", "I.22", "I.23"]
    titles = ["acute heart failure", "chronic heart failure", "acute on chronic heart failure"]
    assert by_words(children, titles, frozenset({"chronic", "heart", "failure"})) == "I.22"


def test_generic_words_tell_no_child_apart() -> None:
    children = ["F.20", "F.29"]
    titles = ["alcohol dependence, uncomplicated", "alcohol dependence with induced disorder"]
    said = frozenset({"severe", "alcohol", "disorder"})
    # "disorder" is generic: the text says no child's own word, and "uncomplicated" is the
    # default.
    assert by_words(children, titles, said) == "F.20"


def test_by_side_keeps_the_named_side_and_its_default_dominance() -> None:
    children = ["X.0", "X.1", "X.2", "X.3", "X.4"]
    titles = [
        "hemiplegia affecting unspecified side",
        "hemiplegia affecting right dominant side",
        "hemiplegia affecting left dominant side",
        "hemiplegia affecting right non-dominant side",
        "hemiplegia affecting left nondominant side",
    ]
    assert by_side(children, titles, "left") == [4]
    assert by_side(children, titles, "right") == [1]
    assert by_side(children, titles, None) == [0]
    # No child of the named side: every child stays.
    assert by_side(["Y.0", "Y.1"], ["a of b", "c of d"], "left") == [0, 1]


def test_default_child_takes_not_x_beside_x() -> None:
    titles = ["migraine, intractable", "migraine, not intractable"]
    assert default_child(["G.1", "G.0"], titles) == "G.0"
    # "Not" that negates no sibling's title decides nothing.
    assert default_child(["C.1", "C.2"], ["disease, not classified", "other disease"]) is None


def test_stem_drops_the_seventh_character_and_its_placeholders() -> None:
    assert stem("S93.02XA") == "S93.02"
    assert stem("S73.006A") == "S73.006"
    assert stem("I50.9") == "I50.9"
