"""The one error type shown to users: a message that says what went wrong and how to fix it."""

from __future__ import annotations

from typing import Any


class UserError(Exception):
    """A problem the user can fix; the CLI prints it as one line and exits non-zero.

    Args:
        message: what went wrong, in the user's terms.
        fix: the action that resolves it (printed after the message).
    """

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(f"{message} Fix: {fix}")
        self.message = message
        self.fix = fix

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Rebuilt from both parts, so that it survives the trip back from a worker process.
        return (UserError, (self.message, self.fix))


class NotApplicable(UserError):
    """A benchmark that cannot run on this engine at all (a server without prompt log-probs for
    a scoring benchmark): ``eval <benchmark>`` stops with it as an error; ``eval all`` reports
    the benchmark as not applicable, not as failed, and runs the others.

    Args:
        message: why the benchmark cannot run here.
        fix: what would make it run.
    """

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (NotApplicable, (self.message, self.fix))
