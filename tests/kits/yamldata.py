"""Comparing loaded YAML or TOML data exactly (types, key order, float signs)."""

from __future__ import annotations

import math


def same(left: object, right: object) -> bool:
    """Equal with exact types, key order and float signs (``True != 1``, ``1 != 1.0``)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        assert isinstance(right, dict)
        return list(left) == list(right) and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        assert isinstance(right, list)
        return len(left) == len(right) and all(map(same, left, right))
    if isinstance(left, float):
        assert isinstance(right, float)
        return left == right and math.copysign(1, left) == math.copysign(1, right)
    return left == right
