"""The bind stage's refusal reasons: one list, re-exported by ``_shapes`` on demand."""

from __future__ import annotations

from typing import get_args

import pytest

from boring_dispatch.repository import _reasons, _shapes


def test_shapes_re_exports_the_reasons_of_their_own_module() -> None:
    assert _shapes.RefusalReason is _reasons.RefusalReason
    assert _shapes.REFUSAL_REASONS is _reasons.REFUSAL_REASONS
    assert frozenset(get_args(_shapes.RefusalReason)) == _shapes.REFUSAL_REASONS
    assert {"binding_malformed", "no_pattern", "value_format", "safety_net"} <= (
        _shapes.REFUSAL_REASONS
    )


@pytest.mark.parametrize("name", ["Literal", "get_args", "refusal_reason", "REFUSAL", "_reasons"])
def test_other_names_are_not_conjured_by_the_lazy_export(name: str) -> None:
    with pytest.raises(AttributeError):
        getattr(_shapes, name)
