"""Whether the end of an object a forked call made does nothing observable.

The exit protocol (:mod:`~boring_dispatch.process.child._exit`) skips the
teardown of the fork server's modules only when every object the call made
that is still alive after its own modules' teardown is *inert*: ending it
would only free memory and drop references. That is judged by the object's
classes, never by running anything of the call's (only the interpreter's own
descriptors are read, no attribute a class could override):

- a built-in class whose deallocation only frees memory (:func:`inert_types`);
- a Python class without ``__del__`` whose deallocation is the interpreter's
  generic routine (read through :mod:`~boring_dispatch.process.child._typelayout`);
- a weak reference without a callback, or with one of the standard library's
  bookkeeping callbacks, its own classes judged as above.

Everything else is not: files, sockets, generators, database connections,
objects with ``__del__``, a weak reference with another callback.
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from types import BuiltinFunctionType, FunctionType, ModuleType
from typing import Final

from boring_dispatch.process.child import _typelayout

__all__ = ["inert", "inert_types"]


def inert(obj: object, exempt: Collection[int], inert_ids: Collection[int]) -> bool:
    """Whether the end of ``obj`` (made after the fork, still alive) does nothing observable.

    True for an exempt object, for a weak reference without a callback (or
    with one of the standard library's bookkeeping callbacks), and for an
    object every class of whose type is either one of the built-in types whose
    ids are ``inert_ids`` (:func:`inert_types`) or a Python class without
    ``__del__`` deallocated by the interpreter's generic routine. False for everything else: files,
    sockets, generators, database connections, objects with ``__del__``...
    """
    if id(obj) in exempt:
        return True
    # Only the interpreter's own descriptors are read: no lookup that a class of the
    # call could override (``__class__``, ``__mro__``, ``__getattr__``, a metaclass).
    classes: tuple[type, ...] = _MRO.__get__(type(obj))
    if issubclass(type(obj), _WEAKREF_TYPES):
        # A subclass's own end (``__del__``) is judged as any class's is.
        if not _bookkeeping(_CALLBACK.__get__(obj)):
            return False
        classes = tuple(klass for klass in classes if klass not in _WEAKREF_TYPES)
    return all(_inert_class(klass, inert_ids) for klass in classes)


def _inert_class(klass: type, inert_ids: Collection[int]) -> bool:
    if id(klass) in inert_ids:
        return True
    return (
        _typelayout.dealloc(klass) == _typelayout.GENERIC
        and "__del__" not in _DICT.__get__(klass)  # the class's own namespace
    )


def _bookkeeping(callback: object) -> bool:
    """No callback, or one that only removes an entry from a weak container.

    Only a plain function or a C function is looked at (neither can be
    subclassed, so reading their attributes runs nothing of the call's).
    """
    if callback is None:
        return True
    if type(callback) is FunctionType:
        code = callback.__code__
        return (code.co_qualname, code.co_filename.rpartition("/")[2]) in _BOOKKEEPING_CALLBACKS
    # _abc's registry and caches: the C function _destroy bound to a weak reference.
    return (
        type(callback) is BuiltinFunctionType
        and callback.__name__ == "_destroy"
        and type(callback.__self__) in _WEAKREF_TYPES
    )


def inert_types() -> frozenset[type]:
    """Built-in types whose deallocation only frees memory and drops references."""
    import _thread
    import abc
    import re
    import types

    random = sys.modules.get("_random")  # random.Random's base, when the call loaded it
    extra: set[type] = {random.Random} if isinstance(random, ModuleType) else set()
    return frozenset(
        {
            object, type, int, bool, float, complex, str, bytes, tuple, list, dict, set,
            frozenset, range, slice, type(None), property, classmethod, staticmethod,
            types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.CellType,
            types.CodeType, types.ModuleType, types.MappingProxyType, types.SimpleNamespace,
            types.GetSetDescriptorType, types.MemberDescriptorType, types.WrapperDescriptorType,
            types.MethodDescriptorType, types.ClassMethodDescriptorType,
            types.MethodWrapperType, re.Pattern, re.Match, _thread.LockType, _thread.RLock,
            type(vars(abc.ABC)["_abc_impl"]),  # _abc's per-class data
        }
        | extra
        | _BUILTIN_EXCEPTIONS
    )  # fmt: skip


def _weakref_types() -> tuple[type, ...]:
    import _weakref

    return (_weakref.ref,)


_WEAKREF_TYPES: Final = _weakref_types()
_MRO: Final = vars(type)["__mro__"]
_DICT: Final = vars(type)["__dict__"]


def _builtin_exceptions() -> frozenset[type]:
    """The interpreter's exception classes, taken at import (the call can add builtins)."""
    import builtins

    return frozenset(
        klass
        for klass in vars(builtins).values()
        if isinstance(klass, type) and issubclass(klass, BaseException)
    )


_BUILTIN_EXCEPTIONS: Final = _builtin_exceptions()
_CALLBACK: Final = vars(_WEAKREF_TYPES[0])["__callback__"]
#: Weak-reference callbacks of the standard library that only drop an entry from a container.
_BOOKKEEPING_CALLBACKS: Final = frozenset(
    {
        ("WeakSet.__init__.<locals>._remove", "_weakrefset.py"),
        ("WeakValueDictionary.__init__.<locals>.remove", "weakref.py"),
        ("WeakKeyDictionary.__init__.<locals>.remove", "weakref.py"),
        ("_removeHandlerRef", "__init__.py"),  # logging's handler list
    }
)
