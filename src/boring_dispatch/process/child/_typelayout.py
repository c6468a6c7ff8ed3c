"""Reading a class's deallocation routine (``tp_dealloc``), or knowing that it cannot be read.

The exit protocol (:mod:`~boring_dispatch.process.child._exit`) tells a class
whose instances end by the interpreter's generic routine (``subtype_dealloc``,
every Python class) from one with its own (files, sockets, ...). CPython has no
API for that: ``tp_dealloc`` is read from the type object through ``ctypes``.
Its place depends on the build: after the object head (16 bytes on a default
build, more with ``Py_TRACE_REFS`` or free threading), ``ob_size``,
``tp_name``, ``tp_basicsize`` and ``tp_itemsize``.

Reading at a wrong place would return some other field, and a class with its
own deallocation could then pass for a plain one: its end would be skipped.
So :data:`DEALLOC_OFFSET` is ``None`` (and the protocol always takes the
interpreter's full exit) unless, on the CPython versions whose exit the
protocol follows (:data:`CHECKED_VERSIONS`, not free-threaded):

- the two fields before it read as ``__basicsize__`` and ``__itemsize__``
  for a family of built-in and Python classes of different sizes (only
  integers are read: no pointer is followed);
- it reads the same routine for two unrelated Python classes, and for
  ``io.FileIO``, ``_socket.socket`` and ``list`` three others, none of them
  the generic one and none null.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Final

__all__ = [
    "CHECKED_VERSIONS",
    "DEALLOC_OFFSET",
    "GENERIC",
    "dealloc",
    "layout_holds",
    "offset_for",
]

#: The interpreter versions whose exit (``Py_RunMain``, ``Py_FinalizeEx``) the protocol follows.
CHECKED_VERSIONS: Final = frozenset({(3, 11)})
_WORD: Final = ctypes.sizeof(ctypes.c_void_p)


class _Plain:
    """A Python class."""


class _Other(dict[str, int]):
    """Another, unrelated in layout (a ``dict`` subclass with slots)."""

    __slots__ = ("extra",)


def _sized() -> tuple[type, ...]:
    import _socket
    import io

    return (_Plain, _Other, object, int, tuple, bytes, list, dict, io.FileIO, _socket.socket)


def _word(klass: type, offset: int, kind: type[ctypes.c_ssize_t | ctypes.c_void_p]) -> int:
    return kind.from_address(id(klass) + offset).value or 0


def layout_holds(offset: int) -> bool:
    """Whether ``tp_dealloc`` of this interpreter's type objects sits at ``offset``."""
    if offset < 3 * _WORD or offset % _WORD:
        return False
    for klass in _sized():
        sizes = (
            _word(klass, offset - 2 * _WORD, ctypes.c_ssize_t),
            _word(klass, offset - _WORD, ctypes.c_ssize_t),
        )
        if sizes != (klass.__basicsize__, klass.__itemsize__):
            return False
    import _socket
    import io

    generic = _word(_Plain, offset, ctypes.c_void_p)
    others = {_word(klass, offset, ctypes.c_void_p) for klass in (io.FileIO, _socket.socket, list)}
    return (
        generic != 0
        and _word(_Other, offset, ctypes.c_void_p) == generic
        and len(others) == 3
        and not others & {0, generic}
    )


def offset_for(version: tuple[int, int], build: str) -> int | None:
    """The place of ``tp_dealloc`` on this interpreter, or ``None`` (never read then)."""
    if sys.implementation.name != "cpython" or version not in CHECKED_VERSIONS:
        return None
    if "free-threading" in build:
        return None  # another object head, another collector: the protocol was not written for it
    # The object head, then ob_size, tp_name, tp_basicsize, tp_itemsize.
    offset = object.__basicsize__ + 4 * _WORD
    return offset if layout_holds(offset) else None


#: Where ``tp_dealloc`` sits in a type object; ``None`` when that is not known for sure.
DEALLOC_OFFSET: Final = offset_for((sys.version_info.major, sys.version_info.minor), sys.version)


def dealloc(klass: type) -> int:
    """``klass``'s deallocation routine (an address); only when :data:`DEALLOC_OFFSET` is set."""
    if DEALLOC_OFFSET is None:
        raise RuntimeError("the type layout of this interpreter is not known")
    return _word(klass, DEALLOC_OFFSET, ctypes.c_void_p)


#: The generic routine of Python classes (``subtype_dealloc``), or 0 when unknown.
GENERIC: Final = dealloc(_Plain) if DEALLOC_OFFSET is not None else 0
