"""How a forked gateway ends: the interpreter's own exit, without tearing down the server.

A spawned gateway ends through ``Py_FinalizeEx``. A forked one would pay the
same, plus the teardown of every module the fork server loaded (about 5 ms:
clearing them writes to, and so copies, the server's pages). :func:`finish`
runs the steps of that exit that a gateway can observe, in the interpreter's
order (CPython 3.11, ``Py_RunMain`` and ``Py_FinalizeEx``), then ends with
the C library's ``exit``, as the interpreter does:

1. the call's status as the interpreter computes it: ``SystemExit(None)`` ->
   0, an int -> its low byte (an int subclass by its own value; -1 when it
   does not fit a C ``long``), anything
   else printed on stderr -> 1; another exception through ``sys.excepthook``
   (``sys.last_*`` set) -> 1;
2. the non-daemon threads joined (``threading._shutdown``);
3. the ``atexit`` handlers (``weakref.finalize`` objects included);
4. ``sys.stdout`` and ``sys.stderr`` flushed; ``gc.collect()`` when enabled;
5. ``finalize_modules`` for the modules imported after the fork: the
   special ``sys`` names set to ``None`` and the standard streams restored,
   those modules removed from ``sys.modules``, a collection, their
   dictionaries cleared in reverse import order as ``_PyModule_ClearDict``
   clears them (single-underscore names first), a collection;
6. the standard streams ended as the teardown ends them when it clears
   ``sys`` (an ``io`` object closed, a failure silent); the C library's
   ``exit(status)``: its exit handlers (``atexit``, C++ static destructors,
   those of libraries loaded by the call) and its streams, which ``os._exit``
   would skip.

It falls back to the interpreter's full exit (``None`` is returned and the
caller raises ``SystemExit(status)``, the status already computed and
reported) whenever skipping the server's teardown could change what the
gateway's exit does: an uncaught ``KeyboardInterrupt`` (the interpreter ends
with ``SIGINT``); another thread still alive after the join or after the
``atexit`` handlers (a daemon thread keeps running through a teardown); a
failed flush (the interpreter reports it and exits 120); and any object made
after the fork that is still alive after step 5 whose deallocation could do
more than free memory: such an object is held by the server's modules, and
only their teardown would end it (see :mod:`._inertness`). A fallback after
step 5 puts the server's modules back and hides ``sys.stdout``/``stderr`` from
the full exit's first flush (its own teardown restores them).

It is not used at all (the full exit, whole) when the judgement is not
possible: an interpreter whose type layout or exit it does not know
(:mod:`._typelayout`: CPython 3.11 without free threading only), a debug
build or development mode (their exit reports what it keeps silent
otherwise), a call that froze objects (``gc.freeze`` hides them from the
collector's list) or added an audit hook (the interpreter's exit calls them).
"""

from __future__ import annotations

import gc
import os
import sys
from _io import _IOBase
from collections.abc import Callable, Collection, Sequence
from contextlib import suppress
from types import ModuleType
from typing import Final

from boring_dispatch.process import _reach
from boring_dispatch.process.child import _inertness, _typelayout

__all__ = ["Snapshot", "applies", "finish", "status_of", "watch_audit_hooks"]

#: What ``finalize_modules_delete_special`` sets to ``None`` in ``sys`` (CPython 3.11).
_SYS_DELETES: Final = (
    "path", "argv", "ps1", "ps2", "last_type", "last_value", "last_traceback",
    "path_hooks", "path_importer_cache", "meta_path", "__interactivehook__",
)  # fmt: skip
_STREAMS: Final = ("stdin", "stdout", "stderr")
_C_LONG: Final = 1 << 63
#: Builtins set after the interpreter copied them (``open``) and by ``site``.
_ADDED_AFTER_COPY: Final = frozenset(
    {"open", "exit", "quit", "copyright", "credits", "license", "help", "_"}
)


def applies() -> bool:
    """Whether this interpreter is one whose exit the protocol follows (else never used)."""
    return _typelayout.DEALLOC_OFFSET is not None


def status_of(run: Callable[[], int]) -> int:
    """Run the call; its exit status, reported as the interpreter reports it.

    An uncaught ``KeyboardInterrupt`` propagates: the interpreter's own exit
    ends the process with ``SIGINT``.
    """
    try:
        return _low_byte(run())
    except SystemExit as error:
        return _system_exit(error)
    except KeyboardInterrupt:
        raise  # the interpreter ends the process with SIGINT after its exit
    except BaseException as error:  # noqa: BLE001 - reported as the interpreter reports it
        _print_uncaught(error)
        return 1


def _low_byte(code: int) -> int:
    """The exit status of ``exit(code)`` after the interpreter's ``(int)PyLong_AsLong``.

    ``PyLong_AsLong`` reads an int subclass's own value: its ``__int__`` and
    ``__index__`` are never called (``int(code)`` would call them).
    """
    value = int.__int__(code)
    if not -_C_LONG <= value < _C_LONG:
        value = -1
    return value & 0xFF


def _system_exit(error: SystemExit) -> int:
    """``_Py_HandleSystemExit``: the status, and the message printed for a non-int code."""
    try:
        code: object = error.code
    except Exception:  # noqa: BLE001 - the interpreter prints the exception itself then
        code = error
    if code is None:
        return 0
    if isinstance(code, int):
        return _low_byte(code)
    stderr = getattr(sys, "stderr", None)
    try:
        text = str(code)
    except Exception:  # noqa: BLE001 - nothing is printed then
        text = ""
    for piece in (text, "\n"):
        try:
            if stderr is None:
                os.write(2, piece.encode("utf-8", "backslashreplace"))
            else:
                stderr.write(piece)
        except Exception:  # noqa: BLE001, S110 - the interpreter ignores it too
            pass
    return 1


def _print_uncaught(error: BaseException) -> None:
    """``PyErr_Print``: ``sys.last_*``, then ``sys.excepthook`` (its own failure printed too)."""
    kind, tb = type(error), error.__traceback__
    sys.last_type, sys.last_value, sys.last_traceback = kind, error, tb
    hook = getattr(sys, "excepthook", None)
    if hook is None:
        os.write(2, b"sys.excepthook is missing\n")
        return
    try:
        hook(kind, error, tb)
    except BaseException as failure:  # noqa: BLE001 - as pythonrun.c reports it
        sys.stderr.write("Error in sys.excepthook:\n")
        sys.__excepthook__(type(failure), failure, failure.__traceback__)
        sys.stderr.write("\nOriginal exception was:\n")
        sys.__excepthook__(kind, error, tb)


class Snapshot:
    """What the interpreter's exit restores or tells apart, taken in the child at the fork."""

    def __init__(self) -> None:
        import builtins

        #: ``sys.modules``: the server's modules (its teardown is what is skipped).
        self.modules: Final = dict(sys.modules)
        #: The objects frozen at the fork (the server's): a call that freezes its own
        #: hides them from ``gc.get_objects``, so their ends could not be judged.
        self.frozen: Final = gc.get_freeze_count()
        #: The builtins as ``pycore_init_builtins`` copied them: the interpreter's exit
        #: restores that copy, without ``open`` and what ``site`` added.
        self.builtins: Final = {
            key: value for key, value in vars(builtins).items() if key not in _ADDED_AFTER_COPY
        }
        #: Audit hooks added so far (the server's watch counts them; ``None``: no watch).
        self.audit_hooks: Final = len(_HOOKS_ADDED) if _HOOKS_ADDED else None


#: ``[watching, then one entry per audit hook added]`` (:func:`watch_audit_hooks`).
_HOOKS_ADDED: Final[list[bool]] = []


def _on_audit(event: str, _args: tuple[object, ...]) -> None:
    if event == "sys.addaudithook":
        _HOOKS_ADDED.append(True)


def watch_audit_hooks() -> None:
    """In the fork server, once: count the audit hooks a call adds.

    The interpreter's exit calls every audit hook (``cpython.PyInterpreterState_Clear``
    among other events); the protocol would not. No API lists them, so the
    server's own hook counts ``sys.addaudithook`` events (a hook cannot be
    added without raising one), and a call that added one takes the full exit.
    """
    if not _HOOKS_ADDED:
        _HOOKS_ADDED.append(True)
        sys.addaudithook(_on_audit)


def _run_exit_handlers() -> None:
    """Step 3, a failing built-in handler reported as the interpreter's exit does (no traceback).

    Under the default hook, the traceback entry of this frame is left out.
    """
    import atexit

    default = sys.unraisablehook is sys.__unraisablehook__
    if default:
        sys.unraisablehook = _report_unraisable
    try:
        atexit._run_exitfuncs()  # noqa: SLF001 - the interpreter's own step
    finally:
        if default and sys.unraisablehook is _report_unraisable:  # a handler may set its own
            sys.unraisablehook = sys.__unraisablehook__


def _report_unraisable(args: object) -> None:
    trace = getattr(args, "exc_traceback", None)
    if trace is not None and trace.tb_frame.f_code is _run_exit_handlers.__code__:
        fields = list(args)  # type: ignore[call-overload]
        fields[2] = trace.tb_next  # (exc_type, exc_value, exc_traceback, err_msg, object)
        args = type(args)(fields)  # type: ignore[call-arg]
    sys.__unraisablehook__(args)  # type: ignore[arg-type]


def finish(status: int, taken: Snapshot, streams: Sequence[Callable[[], object]]) -> None:
    """End the process as the interpreter's exit would, or return to fall back to it.

    ``taken`` is what :class:`Snapshot` saw at the fork; ``streams`` weak
    references to the standard streams the child made (all their layers):
    weak, so that each ends when a spawned one would (a replaced stream at
    once); those still alive are finalized as the teardown finalizes them.
    """
    if not _judgeable(taken):
        return
    if "threading" in sys.modules:
        sys.modules["threading"]._shutdown()  # noqa: SLF001 - the interpreter's own step
    if not _alone():
        return
    _run_exit_handlers()
    if not _alone() or not _flushed():
        return
    if gc.isenabled():
        gc.collect()
    # Everything the rest needs, before the call's modules (``_random``) and sys.modules go.
    inert_types = _inertness.inert_types()  # held: their ids stay theirs
    inert_ids = {id(klass) for klass in inert_types}
    libc = _reach.libc()
    _clear_special()
    server: dict[str, ModuleType] = {}
    try:
        _clear_modules(taken, server)
        # Only now: held from the start, a stream an atexit handler kept alive would
        # outlive the handlers and be flushed after sys.stdout, not before (as spawned).
        made = [stream for stream in (weak() for weak in streams) if stream is not None]
        exempt = {id(stream) for stream in made}  # held here while alive
        ending = _alone() and all(
            _inertness.inert(obj, exempt, inert_ids) for obj in gc.get_objects()
        )
    except BaseException:
        _resume(server)
        raise
    if not ending:
        _resume(server)
        return
    _end_streams(made)
    libc.exit(status)  # its handlers and streams, as after Py_FinalizeEx
    os._exit(status)  # not reached


def _resume(server: dict[str, ModuleType]) -> None:
    """Hand a half-done exit back to the interpreter's, which tears the server's modules down.

    The interpreter's exit has flushed ``sys.stdout`` and ``sys.stderr`` once
    already (step 4); after its teardown it finds no ``sys`` names to flush.
    Starting over, it would flush the restored original streams first, and a
    failure there would turn the status into 120: they are hidden from that
    flush (its own teardown restores them again before the modules go).
    """
    sys.modules.update(server)
    sys.stdout = sys.stderr = None


def _end_streams(made: Sequence[object]) -> None:
    """The end of the standard streams, as the interpreter's teardown ends them.

    ``sys``'s streams and the layers the child made that are still alive
    (a call may hold one elsewhere) are finalized as ``io`` objects are:
    closed, a failure silent (``iobase_finalize`` outside development mode);
    anything that is not an ``io`` object is only dropped. The child's raw
    files do not own descriptors 0-2: nothing is closed for the C library.
    """
    names = ("stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__")
    seen: set[int] = set()
    for stream in (*(getattr(sys, name, None) for name in names), *made):
        if id(stream) in seen or not issubclass(type(stream), _IOBASE) or _closed(stream):
            continue
        seen.add(id(stream))
        with suppress(Exception):
            stream.close()  # type: ignore[union-attr]


def _judgeable(taken: Snapshot) -> bool:
    """Whether what the full exit would do can be told at all on this interpreter, for this call."""
    if not applies() or sys.flags.dev_mode or _DEBUG_BUILD:
        # Classes cannot be told apart on this interpreter; in development mode and
        # in a debug build the interpreter's exit reports what it otherwise keeps silent
        # (an io object's failed close, see _end_streams).
        return False
    if gc.get_freeze_count() > taken.frozen:
        return False  # the call froze objects of its own (gc.freeze): hidden from gc.get_objects
    # An audit hook of the call (or none watched): the interpreter's exit calls it.
    return taken.audit_hooks is not None and len(_HOOKS_ADDED) == taken.audit_hooks


def _alone() -> bool:
    """Whether this is the process's only thread."""
    try:
        return len(os.listdir("/proc/self/task")) == 1  # noqa: PTH208 - a count
    except OSError:
        return False


def _flushed(extra: Collection[object] = ()) -> bool:
    """``flush_std_files``: ``sys.stdout`` and ``sys.stderr`` unless ``None`` or closed."""
    for stream in (getattr(sys, "stdout", None), getattr(sys, "stderr", None), *extra):
        if stream is None or _closed(stream):
            continue
        try:
            stream.flush()  # type: ignore[union-attr]  # none: the interpreter reports it
        except Exception:  # noqa: BLE001 - the interpreter reports it and exits 120
            return False
    return True


def _closed(stream: object) -> bool:
    """``file_is_closed``: a ``closed`` that is missing, fails or has no truth reads as open."""
    try:
        return bool(stream.closed)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - the interpreter clears it and flushes
        return False


def _clear_special() -> None:
    """``finalize_modules_delete_special``."""
    import builtins

    builtins._ = None  # type: ignore[attr-defined]
    for name in _SYS_DELETES:
        setattr(sys, name, None)
    for name in _STREAMS:
        setattr(sys, name, getattr(sys, f"__{name}__", None))


def _clear_modules(taken: Snapshot, server: dict[str, ModuleType]) -> None:
    """``finalize_modules`` for the modules loaded after the fork.

    ``sys.modules`` is emptied, the builtins restored, a collection runs, then
    the dictionaries of the call's modules still alive are cleared, newest
    first, and a collection runs. ``server`` receives the server's modules
    (taken out of ``sys.modules`` as the interpreter's exit takes them out).
    Anything else a call put in ``sys.modules`` is only dropped, as there.
    """
    import builtins
    from _weakref import ref

    alive: list[ref[ModuleType]] = []
    for name, module in list(sys.modules.items()):
        if taken.modules.get(name) is module:
            server[name] = module
        elif issubclass(type(module), ModuleType):  # PyModule_Check
            alive.append(ref(module))
        sys.modules[name] = None  # type: ignore[assignment]
    del name, module
    sys.modules.clear()
    namespace = vars(builtins)
    namespace.clear()
    namespace.update(taken.builtins)
    gc.collect()
    for weak in reversed(alive):
        found = weak()
        if found is not None:
            _clear_dict(vars(found))
        del found
    gc.collect()


def _clear_dict(namespace: dict[str, object]) -> None:
    """``_PyModule_ClearDict``: ``_x`` names first, then all but ``__builtins__``."""
    for key in list(namespace):
        single = isinstance(key, str) and key[:1] == "_" and key[1:2] != "_"
        if single and namespace.get(key) is not None:
            namespace[key] = None
    for key in list(namespace):
        if isinstance(key, str) and key != "__builtins__" and namespace.get(key) is not None:
            namespace[key] = None


#: A debug build (``Py_DEBUG``): its ``iobase_finalize`` reports a failed close.
_DEBUG_BUILD: Final = hasattr(sys, "gettotalrefcount")
_IOBASE: Final = _IOBase  # the C base of every io object (io.IOBase is its ABC)
