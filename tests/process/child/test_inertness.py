"""Whether an object's end does nothing observable (``_inertness``), over families of objects.

An object judged inert is one whose end the exit protocol may skip (the fork
server's teardown would have ended it); anything whose end could act must be
judged not inert, whatever class of the call's wraps it.
"""

from __future__ import annotations

import gc
import io
import re
import socket
import sqlite3
import tempfile
import threading
import weakref
from collections.abc import Iterator

import pytest

from boring_dispatch.process.child import _inertness


class _WithDel:
    def __del__(self) -> None:
        pass


class _InheritsDel(_WithDel):
    pass


class _Plain:
    pass


class _PlainDict(dict[str, int]):
    pass


def _generator() -> Iterator[int]:
    yield 1


class _RefWithDel(weakref.ref):  # type: ignore[type-arg]
    def __del__(self) -> None:
        pass


class _RefHidingCallback(weakref.ref):  # type: ignore[type-arg]
    @property
    def __callback__(self) -> None:  # type: ignore[override]
        return None


class _PlainRef(weakref.ref):  # type: ignore[type-arg]
    pass


def _inert(obj: object) -> bool:
    return _inertness.inert(obj, set(), {id(klass) for klass in _inertness.inert_types()})


@pytest.mark.parametrize(
    "make",
    [
        _Plain,
        lambda: _PlainDict(a=1),
        lambda: {"a": [1, (2, 3)]},
        lambda: re.compile("x+"),
        threading.RLock,
        lambda: weakref.ref(_Plain),
        lambda: _PlainRef(_Plain),
        lambda: ValueError("kept"),
        lambda: _Plain,
    ],
)
def test_objects_whose_end_does_nothing_are_inert(make: object) -> None:
    assert _inert(make())  # type: ignore[operator]


@pytest.mark.parametrize(
    "make",
    [
        _WithDel,
        _InheritsDel,
        lambda: io.BytesIO(b"x"),
        lambda: io.StringIO("x"),
        _generator,
        lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM),
        lambda: sqlite3.connect(":memory:"),
        lambda: weakref.ref(_Plain, print),
        lambda: _RefWithDel(_Plain),
        lambda: _RefHidingCallback(_Plain, print),
        type("Buffer", (io.BytesIO,), {}),
        tempfile.SpooledTemporaryFile,
    ],
)
def test_objects_whose_end_may_act_are_not_inert(make: object) -> None:
    made = make()  # type: ignore[operator]
    try:
        assert not _inert(made)
    finally:
        for close in ("close", "detach"):
            if hasattr(made, close):
                getattr(made, close)()
                break
        del made
        gc.collect()
