"""The repository configuration, ``officina.toml`` (BLUEPRINTS-V6 section 1).

The dispatcher is given one exact absolute path; it never looks for the file
in the current directory, its parents, ``PYTHONPATH`` or the environment.
Every failure below is ``dispatcher.runtime_misconfigured`` and none produces
a traceback, including invalid UTF-8 (upstream quirk A23).

Beyond the reference: nested roots (``src`` with ``src/officina``, quirk
A14) are refused, since one file would then have two module IDs; roots are
also compared by inode, not only by spelling. Messages never quote the
file's content (unknown keys are counted, not listed).
"""

from __future__ import annotations

import os
from pathlib import Path, PosixPath

from boring_dispatch._quote import shown_path
from boring_dispatch.errors import RuntimeMisconfigured
from boring_dispatch.records import RepositoryConfig
from boring_dispatch.repository.load._toml_fast import parse_small_toml
from boring_dispatch.repository.load.files import (
    MAX_CONFIG_BYTES,
    DirectoryTree,
    FsRefused,
    directory_identity,
    read_regular,
    relative_parts,
)

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = ["CONFIG_NAME", "load_config"]

#: The only accepted file name.
CONFIG_NAME: Final = "officina.toml"

_TOP_KEYS: Final = frozenset({"schema_version", "modules", "feedback"})
_FEEDBACK_KEYS: Final = frozenset({"email", "github_repo"})
# A dot-atom local part and a hostname of at least two labels (1-63 letters,
# digits and inner hyphens). Every such address is also a valid RFC 5322
# addr-spec that round-trips unchanged (tested), so no parser is imported.
# Checked with string methods, not regular expressions: compiling them cost a
# fresh CLI start more than the checks (``docs/performance.md``).
#: The address :func:`_is_email` accepts, as the regular expression it replaced
#: (the tests generate addresses from it and hold the check to it).
_EMAIL: Final = (
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+"
)
_ALNUM: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_ATEXT: Final = frozenset(_ALNUM + "!#$%&'*+/=?^_`{|}~-")
_REPO_CHARS: Final = frozenset(_ALNUM + "._-")
_FS_REASONS: Final = {
    "missing": "does not exist",
    "symlink": "has a symlink component",
    "not_directory": "has a component that is not a directory",
    "not_regular": "is not a regular file",
    "unsafe_mode": "is world-writable",
    "unsafe_directory": "has a world-writable directory on the way (no sticky bit)",
    "unsafe_owner": "belongs, or a directory on the way belongs, to an untrusted user",
    "too_large": f"is larger than {MAX_CONFIG_BYTES} bytes",
    "io": "cannot be opened",
    "unreadable": "cannot be read",
    "invalid_path": "is not a clean absolute path",
}


def load_config(
    path: str | os.PathLike[str], tree: DirectoryTree | None = None
) -> RepositoryConfig:
    """Read and validate the repository configuration at exactly ``path``.

    Args:
        path: The absolute path of ``officina.toml``.
        tree: This request's descriptors; used when its base is the repository
            root (the directory of ``path``), else every file is walked from ``/``.

    Returns:
        The validated configuration; roots are lexical absolute paths.

    Raises:
        RuntimeMisconfigured: a relative path, another file name, ``..``, a
            symlink anywhere from ``/``, a missing, non-regular, world-writable
            or oversized file, bad UTF-8 or TOML, unknown keys,
            ``schema_version`` other than the integer 1, a missing or empty
            ``modules.roots``, a root that is not a clean relative path to an
            existing symlink-free directory, duplicate or nested roots, or an
            invalid ``feedback`` table.
    """
    config_path = _config_path(path)
    repository_root = config_path.parent
    files = tree if tree is not None and tree.base == repository_root else _FULL_WALK
    table = _parse(config_path, files)
    unknown = set(table) - _TOP_KEYS
    if unknown:
        raise _misconfigured(config_path, f"{len(unknown)} unknown top-level key(s)")
    version = table.get("schema_version")
    if type(version) is not int or version != 1:
        raise _misconfigured(config_path, "schema_version must be the integer 1")
    roots = _roots(config_path, repository_root, table.get("modules"), files)
    email, github_repo = _feedback(config_path, table.get("feedback", {}))
    return RepositoryConfig(
        config_path=config_path,
        repository_root=repository_root,
        module_roots=roots,
        feedback_email=email,
        feedback_github_repo=github_repo,
    )


def _config_path(path: object) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise RuntimeMisconfigured("dispatcher requires the exact repository configuration path")
    text = os.fspath(path)
    if not isinstance(text, str) or not text.startswith("/") or "\x00" in text:
        raise RuntimeMisconfigured("the repository configuration path must be absolute")
    segments = [segment for segment in text.split("/") if segment not in ("", ".")]
    if ".." in segments:
        raise RuntimeMisconfigured("the repository configuration path must not contain '..'")
    if not segments or segments[-1] != CONFIG_NAME:
        raise RuntimeMisconfigured(f"the repository configuration file must be named {CONFIG_NAME}")
    clean = "/" + "/".join(segments)
    # Already this clean path (every request of a Repository): no new object. Not a
    # subclass, whose str() could differ from the fspath checked here.
    return path if type(path) is PosixPath and text == clean else Path(clean)


class _FullWalk:
    """Every path walked from ``/`` (the functions of :mod:`.files`), when no tree is given."""

    __slots__ = ()

    def read(self, path: Path, cap: int) -> bytes:
        return read_regular(path, cap)

    def identity(self, path: Path) -> tuple[int, int]:
        return directory_identity(path)


_FULL_WALK: Final = _FullWalk()


def _parse(config_path: Path, files: DirectoryTree | _FullWalk) -> dict[str, object]:
    try:
        data = files.read(config_path, MAX_CONFIG_BYTES)
    except FsRefused as refusal:
        raise _misconfigured(config_path, _FS_REASONS[refusal.reason]) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _misconfigured(config_path, "is not valid UTF-8") from None
    small = parse_small_toml(text)
    if small is not None:
        return small
    import tomllib  # only for what the small reader declines: its import costs a start

    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        raise _misconfigured(config_path, "is not valid TOML") from None


def _roots(
    config_path: Path, repository_root: Path, modules: object, files: DirectoryTree | _FullWalk
) -> tuple[Path, ...]:
    if not isinstance(modules, dict) or set(modules) != {"roots"}:
        raise _misconfigured(config_path, "[modules] must be a table with only 'roots'")
    entries = modules["roots"]
    if not isinstance(entries, list) or not entries:
        raise _misconfigured(config_path, "modules.roots must be a non-empty array")
    roots: list[Path] = []
    spellings: list[tuple[str, ...]] = []
    identities: set[tuple[int, int]] = set()
    for index, entry in enumerate(entries):
        parts = relative_parts(entry)
        if parts is None:
            raise _misconfigured(
                config_path, f"modules.roots[{index}] is not a clean relative path"
            )
        root = repository_root.joinpath(*parts)
        try:
            identity = files.identity(root)
        except FsRefused as refusal:
            reason = _FS_REASONS[refusal.reason]
            raise _misconfigured(config_path, f"modules.roots[{index}] {reason}") from None
        if parts in spellings or identity in identities:
            raise _misconfigured(config_path, f"modules.roots[{index}] repeats another root")
        # Clean relative paths below one directory: nested when one spelling prefixes the other.
        if any(other == parts[: len(other)] or parts == other[: len(parts)] for other in spellings):
            raise _misconfigured(config_path, f"modules.roots[{index}] is nested in another root")
        roots.append(root)
        spellings.append(parts)
        identities.add(identity)
    return tuple(roots)


def _feedback(config_path: Path, feedback: object) -> tuple[str | None, str | None]:
    if not isinstance(feedback, dict) or not set(feedback) <= _FEEDBACK_KEYS:
        raise _misconfigured(config_path, "[feedback] may hold only 'email' and 'github_repo'")
    email = feedback.get("email")
    if email is not None and (not isinstance(email, str) or not _is_email(email)):
        raise _misconfigured(config_path, "feedback.email is not a single bare address")
    repo = feedback.get("github_repo")
    if repo is not None and (not isinstance(repo, str) or not _is_github_repo(repo)):
        raise _misconfigured(config_path, "feedback.github_repo must be owner/name")
    return email, repo


def _misconfigured(config_path: Path, reason: str) -> RuntimeMisconfigured:
    return RuntimeMisconfigured(f"repository configuration {shown_path(config_path)}: {reason}")


def _is_email(text: str) -> bool:
    """:data:`_EMAIL`: a dot-atom, one ``@``, then two labels or more."""
    local, at, domain = text.partition("@")
    if not at:
        return False
    labels = domain.split(".")
    return (
        all(part and set(part) <= _ATEXT for part in local.split("."))
        and len(labels) >= 2
        and all(_is_label(label) for label in labels)
    )


def _is_label(text: str) -> bool:
    """``[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?``: 1-63 characters, inner hyphens only."""
    return (
        0 < len(text) <= 63
        and text.isascii()
        and text.replace("-", "").isalnum()
        and text[0] != "-"
        and text[-1] != "-"
    )


def _is_github_repo(text: str) -> bool:
    """``[A-Za-z0-9._-]+/[A-Za-z0-9._-]+``: an owner and a name of those characters."""
    owner, slash, name = text.partition("/")
    return bool(slash and owner and name) and set(owner) | set(name) <= _REPO_CHARS
