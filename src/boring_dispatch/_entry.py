"""The ``dispatcher`` entry point: the dispatcher's own interpreter ignores ``PYTHON*``.

The gateway child always runs ``python -I``. The dispatcher process must not
honour the caller's ``PYTHONPATH`` either: a ``json.py`` or a ``pydantic/``
on it would run inside the process that holds the operator's credentials
and decides every call. So the console script and ``python -m
boring_dispatch`` start here, before anything else of ours is imported
(this module and the package ``__init__`` import nothing but ``os`` and
``sys``, which the interpreter has loaded already, and, once that is decided,
``gc``, which is built into the interpreter):

- when a ``PYTHON*`` variable that can change what runs is set (anything but
  :data:`HARMLESS`) and the interpreter is not isolated already, the process
  re-executes itself as ``python -I -m boring_dispatch ...``: the same pid,
  descriptors and arguments, with every ``PYTHON*`` variable ignored. This
  costs one more interpreter start, only then;
- otherwise it drops ``sys.path[0]`` (the script's directory or, for ``-m``,
  the working directory), as ``-I``/``-P`` would.

What it cannot do: code that the interpreter runs before any module of ours
(``site`` and its ``.pth`` files, ``sitecustomize``/``usercustomize``, the
module named by ``PYTHONWARNINGS``, the console script's own ``import re``)
is found on ``PYTHONPATH`` as usual. ``python -I -m boring_dispatch`` avoids
even that.

``dispatcher ... --registry pkg.module:NAME`` loads the operator's own module:
when nothing installed has its top-level name, that one name is read from the
working directory or a ``PYTHONPATH`` entry by its spec, and nothing is added
to ``sys.path`` (see :mod:`boring_dispatch.registry.spec`), so a checkout can
add that module but shadow nothing the dispatcher imports.
"""

import os
import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing could run a planted module
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["HARMLESS", "main", "needs_isolation", "standard_descriptors"]

#: ``PYTHON*`` variables that neither run code nor change imports, warnings, asserts or
#: limits: they do not trigger the re-execution (a developer's shell often sets them).
HARMLESS = frozenset(
    {
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "PYTHONCOERCECLOCALE",
        "PYTHONHASHSEED",
        "PYTHONNOUSERSITE",
        "PYTHONSAFEPATH",
        "PYTHONFAULTHANDLER",
        "PYTHONSTARTUP",  # read by interactive sessions only (PYTHONINSPECT is not harmless)
    }
)


def needs_isolation(environ: "Mapping[str, str]") -> bool:
    """Whether ``environ`` sets a ``PYTHON*`` variable outside :data:`HARMLESS` (non-empty)."""
    return any(
        name.startswith("PYTHON") and value and name not in HARMLESS
        for name, value in environ.items()
    )


def main() -> int:
    """Run the ``dispatcher`` command in an interpreter that ignores ``PYTHON*``."""
    standard_descriptors()
    if not sys.flags.isolated:
        if needs_isolation(os.environ) and not sys.flags.ignore_environment:
            _reexec_isolated()
        elif not sys.flags.safe_path and sys.path:
            del sys.path[0]  # the script's directory, or the working directory for -m
    # Everything the command imports lives until the process exits: the garbage
    # collector would walk it again and again for nothing. It is off until the
    # command's imports are done (surfaces/cli/main.py, ``_imports_done``). ``gc`` is
    # built into the interpreter: no file on a path can stand in for it.
    import gc

    gc.disable()
    from boring_dispatch.surfaces.cli.main import main as cli_main

    return cli_main(collector_paused=True)


def standard_descriptors() -> None:
    """Put ``/dev/null`` on a standard descriptor (0, 1, 2) the caller closed (``>&-``).

    Otherwise the next file the dispatcher opens (an ``--audit`` file, a socket
    to a nested call's broker) would take the lowest free number and become its
    stdout or stderr, and a gateway, which inherits the dispatcher's stdout and
    stderr, would start with them closed and hand the numbers to its own files.
    A closed stream is therefore like ``/dev/null``: what is written to it is
    dropped, and the exit status is the command's (OpenSSH does the same).
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null == fd:
                os.set_inheritable(fd, True)  # noqa: FBT003 - positional only; a standard descriptor
            else:
                os.dup2(null, fd)
                os.close(null)
    # The interpreter made no stream for a descriptor that was closed at its start.
    if sys.stdin is None:
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as the process
    if sys.stdout is None:
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(  # noqa: SIM115
            2, "w", encoding="utf-8", errors="backslashreplace", closefd=False
        )


def _reexec_isolated() -> None:
    executable = sys.executable
    if not executable:
        sys.stderr.write(
            "error: cannot restart the dispatcher isolated; unset the PYTHON* variables"
            " or run `python -I -m boring_dispatch`\n"
        )
        raise SystemExit(2)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(executable, [executable, "-I", "-m", "boring_dispatch", *sys.argv[1:]])  # noqa: S606 - our own interpreter, never a shell
    except OSError:
        sys.stderr.write("error: cannot restart the dispatcher isolated\n")
        raise SystemExit(2) from None
