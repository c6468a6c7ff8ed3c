"""The caller's context as every adapter takes it: a mapping, or a function of the run."""

from __future__ import annotations

import pytest

from boring_dispatch.adapters._context import resolve_context


def test_a_mapping_or_none_is_the_context_itself() -> None:
    fixed = {"api_token": "t"}
    assert resolve_context(fixed, object()) is fixed
    assert resolve_context(None, object()) is None


def test_a_function_gets_the_run() -> None:
    assert resolve_context(lambda run: {"run": run}, 7) == {"run": 7}


@pytest.mark.parametrize("returned", [None, ["api_token", "t"], "api_token=t", 3])
def test_a_function_that_returns_no_mapping_is_refused(returned: object) -> None:
    with pytest.raises(TypeError, match="must return a mapping"):
        resolve_context(lambda _run: returned, None)  # type: ignore[arg-type,return-value]
