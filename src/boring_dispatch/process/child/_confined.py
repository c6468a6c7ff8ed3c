"""The confined importer: serves one logical package from one module root (child side, stdlib only).

The runner installs :class:`ConfinedFinder` first in ``sys.meta_path``. It
answers only for the logical package ``<pkg>`` and names below it; every
other import goes through the normal import system. Mapping:

- ``<pkg>`` -> ``<root>/__init__.py`` when that is a regular file, otherwise an
  empty synthetic package;
- ``<pkg>.a.b`` -> ``<root>/a/b/__init__.py`` (a package) or ``<root>/a/b.py``
  (a module); both existing is refused as ambiguous.

Refused with :class:`ConfinedImportError`: a name part that is not an
identifier (or is ``__init__``), any symlink on the way below the root, a
node that is neither a directory nor a regular file, and (the rule a gateway
file is held to, extended to every directory on the way) a world-writable
file or directory, or one owned by a user other than root and the
dispatcher's (``--owners``): the module root, package directories,
``__init__.py``, helper modules and subpackages alike. Packages get an empty
``__path__`` so that their submodules come only from this finder. Source is
read through a no-follow walk from the root (one ``openat`` per component)
at import time, every directory and the file checked on its open descriptor
(``fstat``, so a swap after the check cannot change what runs), compiled
with the physical path as file name; ``__file__`` is the physical path.
Group-writable files and directories are accepted, as for the gateway file,
so that checkouts under ``umask 002`` work.

This is a guardrail against accidents (a sibling ``import helper``, another
repository module on an ambient path, a symlink planted in a module), not a
sandbox: code that runs in the child can always reach other code (``import
posix`` is preloaded, ``sys.meta_path`` can be edited). The process boundary,
the scrubbed environment, closed descriptors and the limits are the boundary.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Sequence
from importlib._abc import Loader  # what importlib.abc.Loader is, without importlib.abc
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Final

__all__ = ["ConfinedFinder", "ConfinedImportError", "install"]

_MAX_SOURCE: Final = 16 * 1024 * 1024
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class ConfinedImportError(ImportError):
    """The confined importer refused a name inside the logical package."""


# Not importlib.abc: importing it loads importlib.resources, tempfile and shutil into
# every gateway process. The finder needs no base class (sys.meta_path takes any object
# with find_spec; MetaPathFinder adds a no-op invalidate_caches and the deprecated
# find_module), and importlib.abc.Loader is importlib._abc.Loader.


class ConfinedFinder:
    """Finds ``<package>`` and ``<package>.*`` under ``root`` and nothing else."""

    def __init__(self, package: str, root: str, owners: frozenset[int]) -> None:
        self.package: Final = package
        self.root: Final = root
        #: The uids that may own what this finder serves.
        self.owners: Final = owners
        #: Names this finder (or its loader) refused or did not find, in this process.
        self.refused: Final[set[str]] = set()

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        del path, target  # the location comes from the name alone
        if fullname != self.package and not fullname.startswith(self.package + "."):
            return None
        try:
            return self._find(fullname)
        except ImportError:
            self.refused.add(fullname)
            raise

    def _find(self, fullname: str) -> ModuleSpec:
        parts = tuple(fullname.split(".")[1:])
        for part in parts:
            if not part.isidentifier() or part == "__init__":
                raise ConfinedImportError("invalid confined module name", name=fullname)
        if not parts:
            init = ("__init__.py",)
            kind = self._kind(init, fullname)
            if kind == "missing":
                return self._spec(fullname, None, is_package=True)
            if kind != "file":
                raise ConfinedImportError("package __init__ is not a file", name=fullname)
            return self._spec(fullname, init, is_package=True)
        package_init = (*parts, "__init__.py")
        module_file = (*parts[:-1], parts[-1] + ".py")
        is_package = (
            self._kind(parts, fullname) == "dir" and self._kind(package_init, fullname) == "file"
        )
        module_kind = self._kind(module_file, fullname)
        if module_kind not in {"missing", "file"}:
            raise ConfinedImportError("confined module is not a file", name=fullname)
        is_module = module_kind == "file"
        if is_package and is_module:
            raise ConfinedImportError("ambiguous confined module", name=fullname)
        if not (is_package or is_module):
            raise ModuleNotFoundError("module is outside the confined package", name=fullname)
        return self._spec(fullname, package_init if is_package else module_file, is_package)

    def _kind(self, relative: Sequence[str], fullname: str) -> str:
        """``missing``, ``dir``, ``file`` or ``other``; a symlink anywhere is refused."""
        current = self.root
        mode = 0
        for part in relative:
            current = os.path.join(current, part)  # noqa: PTH118 - parts are identifiers
            try:
                info = os.lstat(current)
            except FileNotFoundError:
                return "missing"
            except OSError as error:
                raise ConfinedImportError("cannot inspect confined path", name=fullname) from error
            mode = info.st_mode
            if stat.S_ISLNK(mode):
                raise ConfinedImportError("symlink in confined path", name=fullname)
            if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
                _check_safe(info, self.owners, fullname)
        if stat.S_ISDIR(mode):
            return "dir"
        return "file" if stat.S_ISREG(mode) else "other"

    def _spec(self, fullname: str, relative: Sequence[str] | None, is_package: bool) -> ModuleSpec:
        physical = None if relative is None else os.path.join(self.root, *relative)  # noqa: PTH118
        loader = _ConfinedLoader(
            self.root, None if relative is None else tuple(relative), self.refused, self.owners
        )
        spec = ModuleSpec(fullname, loader, origin=physical, is_package=is_package)
        spec.has_location = physical is not None
        return spec


class _ConfinedLoader(Loader):
    """Executes a confined source file read through a no-follow walk."""

    def __init__(
        self,
        root: str,
        relative: tuple[str, ...] | None,
        refused: set[str],
        owners: frozenset[int],
    ) -> None:
        self._root = root
        self._relative = relative
        self._refused = refused
        self._owners = owners

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        del spec  # default module creation
        return None

    def exec_module(self, module: ModuleType) -> None:
        if self._relative is None:
            return  # synthetic package: no code
        physical = os.path.join(self._root, *self._relative)  # noqa: PTH118
        try:
            source = read_confined(self._root, self._relative, module.__name__, self._owners)
        except ImportError:
            self._refused.add(module.__name__)
            raise
        code = compile(source, physical, "exec", dont_inherit=True)
        before = list(sys.path)
        exec(code, module.__dict__)  # noqa: S102  # allowed: this is the import system for the gateway file
        if sys.path != before:
            sys.path[:] = before
            raise ConfinedImportError("gateway mutated sys.path", name=module.__name__)


def read_confined(
    root: str, relative: Sequence[str], fullname: str, owners: frozenset[int]
) -> bytes:
    """Read ``root/relative`` opening each component with ``O_NOFOLLOW`` from the root down.

    Raises:
        ConfinedImportError: a component is a symlink or not a directory, the
            leaf is not a regular file, it is larger than 16 MiB, or the root,
            a directory on the way or the leaf is world-writable or owned by a
            uid not in ``owners``.
    """
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise ConfinedImportError("cannot open the module root", name=fullname) from error
    try:
        _check_safe(os.fstat(fd), owners, fullname)
        for part in relative[:-1]:
            next_fd = _open_at(part, _DIR_FLAGS, fd, fullname)
            os.close(fd)
            fd = next_fd
            _check_safe(os.fstat(fd), owners, fullname)
        leaf = _open_at(relative[-1], _FILE_FLAGS, fd, fullname)
    finally:
        os.close(fd)
    try:
        info = os.fstat(leaf)
        if not stat.S_ISREG(info.st_mode):
            raise ConfinedImportError("confined source is not a regular file", name=fullname)
        _check_safe(info, owners, fullname)
        if info.st_size > _MAX_SOURCE:
            raise ConfinedImportError("confined source is too large", name=fullname)
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(leaf, 1 << 16):
            size += len(chunk)
            if size > _MAX_SOURCE:
                raise ConfinedImportError("confined source is too large", name=fullname)
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(leaf)


def _check_safe(info: os.stat_result, owners: frozenset[int], fullname: str) -> None:
    """The file-safety rule of every node served: not world-writable, a trusted owner."""
    if info.st_mode & stat.S_IWOTH:
        raise ConfinedImportError("confined path is world-writable", name=fullname)
    if info.st_uid not in owners:
        raise ConfinedImportError("confined path has an untrusted owner", name=fullname)


def _open_at(name: str, flags: int, dir_fd: int, fullname: str) -> int:
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as error:
        reason = "symlink in confined path" if error.errno in {errno.ELOOP, errno.ENOTDIR} else None
        raise ConfinedImportError(reason or "cannot open confined path", name=fullname) from error


def install(package: str, root: str, owners: frozenset[int]) -> ConfinedFinder:
    """Drop cached modules of ``package`` and put a finder for it first in ``sys.meta_path``."""
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]
    finder = ConfinedFinder(package, root, owners)
    sys.meta_path.insert(0, finder)
    return finder
