"""``@value`` classes keep the frozen slotted dataclass semantics that the pipeline relies on."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch import records
from boring_dispatch._value import replace, value
from boring_dispatch.gateway import NestedResult, RuntimeContext
from boring_dispatch.observe.trace import Span
from boring_dispatch.process.child.runner import Spec
from boring_dispatch.repository import authorize


@value
class Point:
    """A documented value."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = ()

    def norm(self) -> int:
        return abs(self.x) + abs(self.y)


@value
class Other:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


VALUE_CLASSES = [
    *(getattr(records, name) for name in records.__all__ if name != "AUDIENCES"),
    authorize.Filter,
    authorize.Gate,
    authorize.Authorization,
    NestedResult,
    RuntimeContext,
    Span,
    Spec,
]


def test_fields_are_set_positionally_or_by_keyword_with_defaults() -> None:
    assert Point(1).y == 0
    assert Point(1, 2).y == 2
    assert Point(x=1, tags=("a",)).tags == ("a",)
    assert Point(1, 2).norm() == 3


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((), {}),
        ((1, 2, (), 4), {}),
        ((1,), {"x": 1}),
        ((1,), {"z": 1}),
    ],
)
def test_a_wrong_call_is_a_type_error(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    with pytest.raises(TypeError):
        Point(*args, **kwargs)  # type: ignore[arg-type]


def test_assignment_and_deletion_raise_the_dataclass_frozen_error() -> None:
    point = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.x
    with pytest.raises(AttributeError):
        point.z = 1  # type: ignore[attr-defined]
    assert point.x == 1
    assert not hasattr(point, "__dict__")


def test_equality_and_hash_are_by_class_and_fields() -> None:
    assert Point(1, 2) == Point(1, 2)
    assert hash(Point(1, 2)) == hash(Point(1, 2))
    assert Point(1, 2) != Point(2, 1)
    same_fields: object = Other(1, 2)
    as_tuple: object = (1, 2, ())
    assert Point(1, 2) != same_fields
    assert Point(1, 2) != as_tuple
    assert len({Point(1), Point(1), Point(2)}) == 2


def test_repr_names_the_class_and_every_field() -> None:
    assert repr(Point(1, tags=("a",))) == "Point(x=1, y=0, tags=('a',))"


def test_match_args_list_the_fields_in_order() -> None:
    assert Point.__match_args__ == ("x", "y", "tags")
    match Point(3, 4):
        case Point(x, y):
            assert (x, y) == (3, 4)
        case _:
            pytest.fail("no match")


def test_copy_and_replace_build_equal_or_changed_instances() -> None:
    point = Point(1, 2, ("a",))
    assert copy.copy(point) == point
    assert copy.deepcopy(point) == point
    assert replace(point, y=5) == Point(1, 5, ("a",))
    with pytest.raises(TypeError):
        replace(point, z=1)
    with pytest.raises(TypeError):
        replace((1, 2))


def test_the_decorator_refuses_what_it_cannot_keep_frozen_or_ordered() -> None:
    with pytest.raises(TypeError):

        @value
        class Late:
            a: int = 0
            b: int  # type: ignore[misc]

    with pytest.raises(TypeError):

        @value
        class Shared:
            items: list[int] = []  # noqa: RUF012 - the refused case

    with pytest.raises(TypeError):

        @value
        class Derived(Point):
            z: int = 0

    with pytest.raises(TypeError):

        @value
        class Constant:
            limit: ClassVar[int] = 3


@pytest.mark.parametrize("cls", VALUE_CLASSES, ids=lambda cls: cls.__qualname__)
def test_every_value_class_of_the_pipeline_is_slotted_frozen_and_not_a_dataclass(
    cls: Any,
) -> None:
    assert cls.__slots__ == cls.__match_args__
    assert cls.__setattr__ is Point.__setattr__
    assert cls.__delattr__ is Point.__delattr__
    assert not dataclasses.is_dataclass(cls)


def _old_init_error(args: tuple[object, ...], kwargs: dict[str, object]) -> str | None:
    """The message the first ``@value`` ``__init__`` raised for ``Point(*args, **kwargs)``."""
    names = ("x", "y", "tags")
    if len(args) > len(names):
        return "Point() takes 3 arguments"
    values = dict(zip(names, args, strict=False))
    for name, supplied in kwargs.items():
        if name not in names:
            return f"Point() got an unexpected argument {name!r}"
        if name in values:
            return f"Point() got multiple values for {name!r}"
        values[name] = supplied
    return "Point() missing argument 'x'" if "x" not in values else None


@given(
    st.lists(st.integers(), max_size=4).map(tuple),
    st.dictionaries(st.sampled_from(["x", "y", "tags", "z", "_fields"]), st.integers()),
)
def test_a_wrong_call_raises_the_same_error_as_the_first_init(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    """Two mistakes in one call (a missing field and a stray keyword): the stray one is named."""
    expected = _old_init_error(args, kwargs)
    if expected is None:
        assert Point(*args, **kwargs) == Point(*args, **kwargs)  # type: ignore[arg-type]
        return
    with pytest.raises(TypeError) as raised:
        Point(*args, **kwargs)  # type: ignore[arg-type]
    assert str(raised.value) == expected
