"""A run option declared once, on its configuration field.

A configuration field is a command-line option when its annotation carries a :class:`Flag`::

    top_k: Annotated[int, Flag("--top-k", suite=("--top-k",))] = Field(
        default=5, ge=1, le=MAX_K, description="names per (sex, ethnicity) group"
    )

The field holds everything else once: its type (and so argparse's choices, from a
``Literal``), its default, its bounds (pydantic enforces them; ``--help`` states them) and its
help (``description``). The parser, the run configuration and the report's scope all read the
field, as Inspect's task parameters are read from one typed signature. A subclass that only
changes a default (``max_tokens: int = Field(default=180, ge=1)``) keeps its parent's flag and
help: :func:`field_spec` looks them up along the class's bases.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo


@dataclass(frozen=True)
class Flag:
    """How a configuration field is offered on the command line.

    Attributes:
        name: the option of ``eval <benchmark>``, e.g. ``--top-k``.
        suite: its flags in ``eval all``, the most specific first (empty: not offered there);
            the first one given is used. Benchmarks that declare the same suite flag share one
            option (``--seed``; ``--limit`` beside ``--limit-<benchmark>``).
        suite_help: the help of its first suite flag (None: the field's description).
        metavar: the value's name in ``--help`` (None: the field's name in capitals).
        repeat: the option may be given several times, each use one element of the field's
            tuple.
        negate: a switch that sets a boolean field False (``--no-controls``); a boolean field
            without it is a switch that sets it True.
    """

    name: str
    suite: tuple[str, ...] = ()
    suite_help: str | None = None
    metavar: str | None = None
    repeat: bool = False
    negate: bool = False


@dataclass(frozen=True)
class FieldSpec:
    """Everything the command line needs of one flagged field.

    Attributes:
        name: the field's name (the option's destination).
        flag: its :class:`Flag`.
        help: its description, then its bounds.
        default: its default, or None where ``--help`` shows none (a switch, or None itself).
        choices: the values a ``Literal`` annotation allows, or None.
        switch: a boolean field: the option takes no value.
    """

    name: str
    flag: Flag
    help: str
    default: Any
    choices: tuple[str, ...] | None
    switch: bool


def _flag_and_help(config_type: type[BaseModel], name: str) -> tuple[Flag | None, str]:
    """The field's flag and description, from the nearest class along ``config_type``'s bases
    that declares each (an override of a default keeps both)."""
    flag: Flag | None = None
    description = ""
    for cls in config_type.__mro__:
        fields: dict[str, FieldInfo] | None = getattr(cls, "__pydantic_fields__", None)
        info = (fields or {}).get(name)
        if info is None:
            continue
        if flag is None:
            flag = next((m for m in info.metadata if isinstance(m, Flag)), None)
        description = description or (info.description or "")
        if flag is not None and description:
            break
    return flag, description


def bounds_text(info: FieldInfo) -> str:
    """The field's numeric bounds in words ("from 1 to 50", "at least 24", "above 0, at most
    1"), or "" when it has none."""
    low = high = ""
    for item in info.metadata:
        for attribute, words in (("ge", "at least"), ("gt", "above")):
            value = getattr(item, attribute, None)
            if value is not None:
                low = f"{words} {value}"
        for attribute, words in (("le", "at most"), ("lt", "below")):
            value = getattr(item, attribute, None)
            if value is not None:
                high = f"{words} {value}"
    if low.startswith("at least") and high.startswith("at most"):
        return f"from {low.removeprefix('at least ')} to {high.removeprefix('at most ')}"
    return ", ".join(part for part in (low, high) if part)


def literal_choices(annotation: Any) -> tuple[str, ...] | None:
    """The values of a ``Literal`` in ``annotation`` (also inside ``X | None`` or
    ``tuple[Literal[...], ...]``), or None."""
    if typing.get_origin(annotation) is Literal:
        return tuple(str(value) for value in typing.get_args(annotation))
    if typing.get_origin(annotation) in (tuple, typing.Union, types.UnionType):
        for argument in typing.get_args(annotation):
            found = literal_choices(argument)
            if found is not None:
                return found
    return None


def field_spec(config_type: type[BaseModel], name: str) -> FieldSpec | None:
    """The option of field ``name`` of ``config_type``, or None when the field has no flag."""
    info = config_type.model_fields[name]
    flag, description = _flag_and_help(config_type, name)
    if flag is None:
        return None
    switch = info.annotation is bool
    bounds = bounds_text(info)
    return FieldSpec(
        name=name,
        flag=flag,
        help=f"{description}; {bounds}" if bounds else description,
        default=None if switch else info.default,
        choices=literal_choices(info.annotation),
        switch=switch,
    )


def flagged_fields(
    config_type: type[BaseModel], names: tuple[str, ...] | None = None
) -> list[FieldSpec]:
    """The flagged fields of ``config_type``.

    Args:
        config_type: the configuration class.
        names: only these fields, in this order (None: every flagged field, in declaration
            order).
    """
    chosen = tuple(config_type.model_fields) if names is None else names
    specs = (field_spec(config_type, name) for name in chosen)
    return [spec for spec in specs if spec is not None]


def flag_of(config_type: type[BaseModel], name: str) -> str:
    """The option that sets field ``name``: its flag, else ``--`` and the name with hyphens."""
    if name in config_type.model_fields:
        flag, _ = _flag_and_help(config_type, name)
        if flag is not None:
            return flag.name
    return "--" + name.replace("_", "-")
