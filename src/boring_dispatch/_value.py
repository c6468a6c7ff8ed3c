"""``@value``: frozen, slotted value classes without the cost of ``dataclasses``.

A class decorated with ``@dataclass(frozen=True, slots=True)`` costs about
0.5 ms to create, because ``dataclasses`` compiles generated source for each
method at import time, and the CLI creates a dozen of them on every start. A
``@value`` class is created in microseconds: its methods are shared, written
once here, and cached as bytecode like any other code.

What a ``@value`` class keeps from a frozen slotted dataclass: the same
declaration (annotated fields in order, plain defaults), ``__slots__``, the
same ``__init__`` signature (checked by type checkers through
``dataclass_transform``), assignment and deletion refused with
``dataclasses.FrozenInstanceError``, equality between instances of the same
class field by field, a hash of the fields, a ``Name(field=...)`` repr,
``__match_args__``, copy and pickle, and :func:`replace`. What it does not
offer: ``dataclasses.fields``, ``dataclasses.replace`` and ``asdict``,
``field(...)`` specifiers, ``ClassVar`` fields and inheritance.
"""

from __future__ import annotations

from boring_dispatch._static import dataclass_transform

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _T = TypeVar("_T")


__all__ = ["replace", "value"]

_MISSING: Any = object()


class _Value:
    """The shared methods; ``_fields`` is the ordered tuple of field names."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _defaults: tuple[object, ...] = ()

    def __init__(self, *args: object, **kwargs: object) -> None:
        names = self._fields
        count = len(args)
        if count > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments")
        setter = object.__setattr__
        for name, given in zip(names, args, strict=False):
            setter(self, name, given)
        if count < len(names):
            pop = kwargs.pop
            for name, default in zip(names[count:], self._defaults[count:], strict=True):
                given = pop(name, default)
                if given is _MISSING:
                    _refuse_left_over(self, kwargs, names[count:])  # reported first, as a call does
                    raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
                setter(self, name, given)
        if kwargs:  # left over: named twice, or not a field
            _refuse_left_over(self, kwargs, ())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Value) and other.__class__ is self.__class__:
            return _astuple(self) == _astuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(_astuple(self))

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={v!r}" for n, v in zip(self._fields, _astuple(self), strict=True))
        return f"{type(self).__qualname__}({fields})"

    def __setattr__(self, name: str, given: object) -> None:
        raise _frozen(name)

    def __delattr__(self, name: str) -> None:
        raise _frozen(name)

    def __reduce__(self) -> tuple[type[_Value], tuple[object, ...]]:
        return (type(self), _astuple(self))


def _refuse_left_over(
    instance: _Value, kwargs: dict[str, object], pending: tuple[str, ...]
) -> None:
    """Raise for the first keyword that is not a field or names a field given already.

    ``pending`` are the fields not yet set, whose keywords are still in ``kwargs``.
    """
    for name in kwargs:
        if name in pending:
            continue
        if name in instance._fields:
            raise TypeError(f"{type(instance).__name__}() got multiple values for {name!r}")
        raise TypeError(f"{type(instance).__name__}() got an unexpected argument {name!r}")


def _astuple(instance: _Value) -> tuple[object, ...]:
    return tuple(object.__getattribute__(instance, name) for name in instance._fields)


def _frozen(name: str) -> AttributeError:
    # Imported only when something tries to mutate a value: the same exception as a dataclass.
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(f"cannot assign to field {name!r}")


@dataclass_transform(frozen_default=True)
def value(cls: type[_T]) -> type[_T]:
    """Turn a plain class of annotated fields into a frozen slotted value class.

    Every annotation of the class body is a field, in order; a field with a
    default may not precede one without.

    Raises:
        TypeError: the class has a base class, a field without a default
            follows one with a default, a default is mutable (unhashable),
            or a field is a ``ClassVar``.
    """
    if cls.__bases__ != (object,):
        raise TypeError("a @value class has no base class")
    body = dict(cls.__dict__)
    names = tuple(body.get("__annotations__", {}))
    defaults = tuple(body.pop(name, _MISSING) for name in names)
    annotations: dict[str, object] = body.get("__annotations__", {})
    if any(str(annotations[name]).startswith(("ClassVar", "typing.ClassVar")) for name in names):
        raise TypeError("a @value class has no ClassVar fields")
    required = [default is _MISSING for default in defaults]
    if required != sorted(required, reverse=True):
        raise TypeError("a field without a default follows one with a default")
    if any(d is not _MISSING and type(d).__hash__ is None for d in defaults):
        raise TypeError("a default is mutable (unhashable); instances would share it")
    for name in ("__dict__", "__weakref__"):
        body.pop(name, None)
    body.update(__slots__=names, _fields=names, _defaults=defaults, __match_args__=names)
    return type(cls.__name__, (_Value,), body)


def replace(instance: _T, /, **changes: object) -> _T:
    """A copy of the ``@value`` instance with the given fields changed.

    Raises:
        TypeError: ``instance`` is not a ``@value`` instance, or a name is not a field.
    """
    if not isinstance(instance, _Value):
        raise TypeError("replace() takes a @value instance")
    current = dict(zip(instance._fields, _astuple(instance), strict=True))
    return type(instance)(**(current | changes))
