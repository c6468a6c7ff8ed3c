"""Reading ``tp_dealloc`` (``_typelayout``): only at the place checked, else never (the full exit).

The exit protocol skips the end of an object only when every class of it is
told apart by its deallocation routine; read at a wrong place (another build:
free threading, ``Py_TRACE_REFS``, another version), a file's routine could
pass for the generic one. These tests check that the start-up check accepts
the real place only, that an interpreter it was not written for never reads
it, and that without it a forked gateway always ends through the full exit.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.process.child import _typelayout

WORD = ctypes.sizeof(ctypes.c_void_p)
#: Well inside every type object (``PyTypeObject`` is far larger).
SPAN = 30 * WORD


def test_this_interpreter_has_a_checked_layout() -> None:
    assert sys.version_info[:2] in _typelayout.CHECKED_VERSIONS  # the suite's interpreter
    assert object.__basicsize__ + 4 * WORD == _typelayout.DEALLOC_OFFSET
    assert _typelayout.GENERIC != 0


@given(offset=st.integers(0, SPAN))
def test_the_layout_check_accepts_the_real_place_only(offset: int) -> None:
    assert _typelayout.layout_holds(offset) is (offset == _typelayout.DEALLOC_OFFSET)


@given(
    minor=st.integers(0, 40).filter(lambda minor: (3, minor) not in _typelayout.CHECKED_VERSIONS)
)
def test_an_unchecked_version_never_reads_the_type_layout(minor: int) -> None:
    assert _typelayout.offset_for((3, minor), sys.version) is None


@pytest.mark.parametrize(
    "build",
    ["3.13.0 experimental free-threading build (main, Oct  7 2024)", "3.14.0 free-threading build"],
)
def test_a_free_threaded_build_never_reads_the_type_layout(build: str) -> None:
    assert _typelayout.offset_for((3, 11), build) is None


_FINISH = """
import gc, os, sys
from boring_dispatch.process.child import _exit, _forked, _typelayout
if {unknown!r} == "layout":
    _typelayout.DEALLOC_OFFSET = None
if {unknown!r} == "debug build":
    _exit._DEBUG_BUILD = True
_forked.preload()  # as the fork server does
gc.freeze()  # as a forked child does: what came before is not the call's
taken = _exit.Snapshot()
import colorsys, textwrap  # the call's modules
_exit.finish(7, taken, [])
os.write(1, b"full exit")
raise SystemExit(7)
"""


@pytest.mark.parametrize("unknown", ["", "layout", "debug build", "development mode"])
def test_without_a_known_layout_the_call_ends_through_the_full_exit(unknown: str) -> None:
    """Unknown type layout, a debug build or development mode (the interpreter's exit
    reports failures that it keeps silent otherwise): the full exit."""
    dev = ["-X", "dev"] if unknown == "development mode" else []
    done = subprocess.run(
        [sys.executable, "-I", *dev, "-c", textwrap.dedent(_FINISH.format(unknown=unknown))],
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert (done.returncode, done.stderr) == (7, b"")
    # Known: the protocol's own end (os._exit); unknown: back to the interpreter's exit.
    assert done.stdout == (b"full exit" if unknown else b"")


_COMPILING_CALL = """
import gc, os
from boring_dispatch.process.child import _exit, _forked
_forked.preload()  # as the fork server does
gc.freeze()
taken = _exit.Snapshot()
compile("x = 1", "<gateway>", "exec", dont_inherit=True)  # as the confined importer does
_exit.finish(7, taken, [])
os.write(1, b"full exit")
raise SystemExit(7)
"""


def test_a_call_that_compiles_source_still_ends_through_the_protocol(tmp_path: Path) -> None:
    """The interpreter makes its AST singletons at the first ``compile()``.

    Every gateway is compiled by the confined importer; when the fork server
    compiled nothing before the fork (all its modules from ``.pyc`` files, as
    in an installed package) those singletons were the call's, alive, and of a
    class with its own deallocation: every call fell back to the full exit.
    Here every module comes from a ``.pyc`` (a fresh cache, filled first).
    """
    cache = ["-X", f"pycache_prefix={tmp_path}"]
    warm = "from boring_dispatch.process.child import _exit, _forked\n_forked.preload()"
    for script in (warm, _COMPILING_CALL):  # the first fills the cache
        done = subprocess.run(
            [sys.executable, "-I", *cache, "-c", script],
            capture_output=True,
            timeout=30,
            check=False,
        )
    assert (done.returncode, done.stdout, done.stderr) == (7, b"", b"")
