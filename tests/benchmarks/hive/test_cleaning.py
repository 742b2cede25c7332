"""What the reader ignores: echoes, quotations, rewrites, hypotheses; offsets are kept."""

from __future__ import annotations

from climb_vllm.benchmarks.hive.cleaning import hypothetical_spans, normalise, prepare

STATEMENT = "Dana, who is a nurse, and Kim, who is a teacher, are neighbours. She has asthma."


def test_normalise_straightens_quotes_and_drops_markdown() -> None:
    assert normalise("\u201cKim\u201d \u2014 **Dana**") == '"Kim" -   Dana  '


def test_blanking_keeps_offsets() -> None:
    answer = STATEMENT + " 'She' refers to Kim. You could rephrase it as 'Kim has asthma'."
    original, text, echo_free = prepare(answer, (STATEMENT,), examples=True)
    assert len(text) == len(original) == len(echo_free)
    assert "dana" not in echo_free  # the echoed statement is blank
    assert text.index("refers to kim") == original.lower().index("refers to kim")
    assert "has asthma" not in text  # the rewrite is blank


def test_quotations_of_four_words_are_blank_short_quotes_are_not() -> None:
    _, text, _ = prepare(
        "The answer is 'Kim'. As the text says: 'Kim, who is a teacher'.", (), examples=True
    )
    assert "'kim'" in text and "who is a teacher" not in text


def test_examples_are_blank_only_where_the_question_is_about_a_text() -> None:
    answer = "Kim is more likely. For example, her cough points to it."
    assert "her cough" not in prepare(answer, (), examples=True)[1]
    assert "her cough" in prepare(answer, (), examples=False)[1]


def test_an_example_block_after_a_cue_that_ends_its_paragraph() -> None:
    answer = (
        "It is unclear. For example:\n\n* Dana has asthma.\n* Kim has asthma.\n\nIn the "
        "first example, she would be Dana.\n\nNo one else is named."
    )
    text = prepare(answer, (), examples=True)[1]
    assert "dana" not in text and "kim" not in text and "no one else is named" in text


def test_hypothetical_sentences() -> None:
    text = (
        "if the writer meant dana, then she refers to dana. it could be kim. "
        "if we consider the context, she refers to kim."
    )
    names = [[text.index("dana")], [text.index("could be kim") + 9]]
    spans = hypothetical_spans(text, names)
    assert [text[a:b] for a, b in spans] == ["if the writer meant dana, then she refers to dana"]
    # a modal consequence makes a hypothesis even when the condition names no one
    modal = "if the text went on, it would be more likely that she is kim."
    assert hypothetical_spans(modal, [[], [modal.index("kim")]]) == [(0, len(modal) - 1)]
    forced = "if i had to choose, i would say kim."
    assert hypothetical_spans(forced, [[], [forced.index("kim")]]) == []
