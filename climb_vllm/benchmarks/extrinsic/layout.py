"""How a case is laid out as a prompt: the project's layout or CliBench's, and the token budget.

**CliBench's layout** (``--protocol clibench``), re-implemented from CliBench's
``infer_clibench.py``:

- the patient line "Patient information: age is {age}, gender is {M|F}, race is {race},
  marital status is {marital}, insurance category is {insurance}, admission_location is
  {location}. " (a missing fact prints as Python's ``None``, as CliBench's f-string would);
- each section as "\\n\\nCLINICAL NOTE: \\n" + text + "\\n", then "\\n\\nRADIOLOGY NOTE: \\n",
  "\\n\\nLAB EVENTS: \\n";
- a system turn ``role + "\\n" + instruction`` and a user turn ``message + "\\n" + question``;
  for a model whose name contains "mistral", one user turn
  ``role + "\\n" + instruction + "\\n\\n" + message + "\\n" + question``;
- new tokens: max(the model's ``generation_config.json`` ``max_length``, 650);
- notes cut to fit ``max_position_embeddings - 650`` tokens, less the role, instruction and
  question and 30 tokens of slack: when they do not fit, every section keeps the same share of
  its tokens, the labs at least 500 tokens (:func:`fit_sections`).

**The project's layout** (the default) keeps CliBench's turns and budget rule (reserving the
run's own new-token limit rather than a fixed 650) but writes the
line in CLIMB's words ("sex is female, ethnicity is ..."), headings in plain words
("Clinical note:") and folds no turn for any model (a chat template that has no system turn
fails loudly instead). Notes are cut by the same rule, and every cut is recorded per prompt
(``truncated``, ``kept_share``) instead of happening silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

#: CliBench's estimate of an answer's length, reserved out of the context.
OUTPUT_TOKENS = 650
#: CliBench's floor of kept lab tokens when the notes are cut.
LAB_FLOOR = 500
#: CliBench's slack between the budget and the context.
SLACK = 30
CLIBENCH_HEADINGS = {
    "clinical_note": "CLINICAL NOTE",
    "radiology": "RADIOLOGY NOTE",
    "labs": "LAB EVENTS",
}
CLIBENCH_LINE = (
    "Patient information: age is {age}, gender is {gender}, race is {race}, marital status is "
    "{marital}, insurance category is {insurance}, admission_location is {location}. "
)

Tokenize = Callable[[str], list[int]]
Detokenize = Callable[[list[int]], str]


def clibench_line(demographics: dict[str, str], facts: dict[str, object]) -> str:
    """CliBench's patient line for ``demographics`` (sex, ethnicity, insurance) and the case's
    other ``facts`` (age, marital_status, admission_location; missing ones print as None)."""
    return CLIBENCH_LINE.format(
        age=facts.get("age"),
        gender={"male": "M", "female": "F"}.get(demographics["sex"], demographics["sex"]),
        race=demographics["ethnicity"],
        marital=facts.get("marital_status"),
        insurance=demographics["insurance"],
        location=facts.get("admission_location"),
    )


def clibench_notes(sections: dict[str, str]) -> str:
    """The sections with CliBench's headings and line ends."""
    return "".join(
        f"\n\n{CLIBENCH_HEADINGS[key]}: \n{text}\n" for key, text in sections.items() if text
    )


def folds_system_turn(model: str) -> bool:
    """Whether CliBench puts the system text into the user turn for this model name."""
    return "mistral" in model.lower()


def model_facts(model: str) -> dict[str, int | None]:
    """``max_position_embeddings`` and ``generation_config.json``'s ``max_length`` of a local
    model folder (None for what is missing, or for a name that is not a local folder)."""
    folder = Path(model)
    facts: dict[str, int | None] = {"context": None, "max_length": None}
    if (folder / "config.json").is_file():
        config = json.loads((folder / "config.json").read_text())
        facts["context"] = config.get("max_position_embeddings")
    if (folder / "generation_config.json").is_file():
        generation = json.loads((folder / "generation_config.json").read_text())
        facts["max_length"] = generation.get("max_length")
    return facts


def clibench_max_tokens(max_length: int | None) -> int:
    """CliBench's new-token limit: max(the model's max_length, 650)."""
    return max(max_length or 0, OUTPUT_TOKENS)


def fit_sections(
    sections: dict[str, str],
    line: str,
    fixed: Sequence[str],
    context: int,
    tokenize: Tokenize,
    detokenize: Detokenize,
    reserve: int = OUTPUT_TOKENS,
) -> tuple[dict[str, str], float]:
    """Cut the note sections so that the prompt fits CliBench's budget.

    Args:
        sections: the texts of the note sections, in order.
        line: the patient line (kept whole).
        fixed: the role, instruction and question (kept whole; counted together).
        context: the model's ``max_position_embeddings``.
        tokenize / detokenize: the model's tokenizer (without special tokens).
        reserve: tokens kept free for the answer (CliBench: 650; the project: the run's
            new-token limit).

    Returns:
        The sections (cut or not) and the share of note tokens kept (1.0 when nothing is cut).

    Raises:
        UserError: the context leaves no room for the notes.
    """
    from climb_vllm.core.errors import UserError

    # CliBench counts the fixed text with its BOS token, the sections without.
    budget = context - reserve - (len(tokenize("".join(fixed))) + 1) - SLACK
    if budget - len(tokenize(line)) <= 0:
        raise UserError(
            f"A context of {context} tokens leaves no room for the notes once {reserve} are "
            "kept for the answer and the instructions are counted.",
            "use a model with a longer context, fewer --max-tokens, or --context-tokens 0 to "
            "send the notes whole.",
        )
    tokens = {key: tokenize(text) for key, text in sections.items()}
    total = sum(len(t) for t in tokens.values())
    if total == 0:
        return dict(sections), 1.0
    rate = (budget - len(tokenize(line))) / total
    if rate >= 1:
        return dict(sections), 1.0
    rate = max(rate, 0.0)
    labs = tokens.get("labs", [])
    keep_labs = max(LAB_FLOOR, int(len(labs) * rate)) if labs else 0
    others = sum(len(t) for key, t in tokens.items() if key != "labs")
    note_rate = max(budget - keep_labs, 0) / others if others else 0.0
    cut: dict[str, str] = {}
    for key, toks in tokens.items():
        keep = keep_labs if key == "labs" else int(len(toks) * min(note_rate, 1.0))
        cut[key] = detokenize(toks[:keep])
    kept = sum(len(tokenize(text)) for text in cut.values())
    return cut, kept / total
