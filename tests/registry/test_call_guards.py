"""``checked_copy``: the observation keeps the checked JSON's value, never the handler's object."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated

from hypothesis import given
from hypothesis import strategies as st
from pydantic import SecretBytes

from boring_dispatch import Registry, Sensitive, Tool, ToolError
from boring_dispatch.registry._call_guards import checked_copy

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _same(left: object, right: object) -> bool:
    """Equal values of the same exact types at every depth (``1 == 1.0 == True`` is not enough)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict) and isinstance(right, dict):
        return list(left) == list(right) and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_same, left, right))
    return left == right


@given(_JSON)
def test_the_copy_equals_the_checked_json_decoded_afresh(result: object) -> None:
    text = _ENCODER.encode(result)
    copied = checked_copy(result, text)
    assert _same(copied, json.loads(text))
    if isinstance(result, dict | list):
        assert copied is not result  # the handler cannot change what the observation holds


@given(st.dictionaries(st.text(), _SCALARS, max_size=6) | st.lists(_SCALARS, max_size=6))
def test_a_flat_container_is_a_fresh_shallow_copy(result: dict[str, object] | list[object]) -> None:
    copied = checked_copy(result, _ENCODER.encode(result))
    assert copied == result
    assert copied is not result
    assert type(copied) is type(result)


@given(st.sampled_from([{"k": (1, 2)}, [(1,)], {"k": {"n": 1}}, [[1]], {"k": [1]}, [{"a": 1}]]))
def test_a_nested_or_tuple_holding_result_is_decoded_from_its_text(result: object) -> None:
    text = _ENCODER.encode(result)
    copied = checked_copy(result, text)
    assert copied == json.loads(text)  # tuples became lists: the JSON, not the object
    inner_result = next(iter(result.values())) if isinstance(result, dict) else result[0]  # type: ignore[index]
    inner_copy = next(iter(copied.values())) if isinstance(copied, dict) else copied[0]  # type: ignore[index]
    assert inner_copy is not inner_result


def test_a_subclass_of_dict_or_str_is_not_copied_shallowly() -> None:
    class Loud(str):  # noqa: SLOT000 - a plain subclass, as a handler might return
        pass

    result = {"k": Loud("v")}
    copied = checked_copy(result, _ENCODER.encode(result))
    assert type(copied["k"]) is str  # type: ignore[index]


# --------------------------------------------------------------------------- #
# A sensitive bytes value is quoted as bytes: b'caf\xc3\xa9', not café.

_SECRET_TEXT = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], min_codepoint=0x21), min_size=6
).filter(lambda s: not s.isascii())


@given(secret=_SECRET_TEXT, how=st.sampled_from(["str", "repr", "format"]))
def test_a_sensitive_bytes_value_quoted_as_bytes_is_withheld(secret: str, how: str) -> None:
    def quoted(value: bytes) -> str:
        return {"str": str(value), "repr": repr(value), "format": f"key={value!r}"}[how]

    def plain(key: Annotated[bytes, Sensitive]) -> None:
        raise ToolError(f"bad {quoted(key)}")

    def wrapped(key: SecretBytes) -> None:
        raise ToolError(f"bad {quoted(key.get_secret_value())}")

    table = Registry(
        {"plain": Tool(plain, description="p"), "wrapped": Tool(wrapped, description="w")}
    )
    for name in ("plain", "wrapped"):
        observation = table.dispatch(name, {"key": secret})
        assert observation.code == "tool_error"
        assert observation.error is not None
        assert repr(secret.encode())[2:-1] not in observation.error.message


_QUOTINGS: dict[str, Callable[[str], str]] = {
    "plain": lambda s: s,
    "repr": repr,
    "ascii": ascii,
    "json": json.dumps,
    "json_utf8": lambda s: json.dumps(s, ensure_ascii=False),
    "bytes": lambda s: str(s.encode()),
    "list": lambda s: str([s]),
}


@given(
    secret=st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=4),
    how=st.sampled_from(sorted(_QUOTINGS)),
)
def test_reveals_finds_a_secret_in_every_standard_quoting(secret: str, how: str) -> None:
    """The quotings Python and JSON give a value by default, each inside a message."""
    from boring_dispatch.registry._call_guards import reveals

    assert reveals(f"failed: {_QUOTINGS[how](secret)} (see above)", [secret])
