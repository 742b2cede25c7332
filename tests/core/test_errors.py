"""The user-facing error type."""

from __future__ import annotations

import pickle

from climb_vllm.core.errors import UserError


def test_user_error_survives_pickling() -> None:
    """Worker processes send errors back pickled; both parts must arrive."""
    error = pickle.loads(pickle.dumps(UserError("Something broke.", "do this.")))
    assert isinstance(error, UserError)
    assert (error.message, error.fix) == ("Something broke.", "do this.")
    assert str(error) == "Something broke. Fix: do this."
