"""The derived security level of a source interface (ARCHITECTURE 3.3).

The level is computed at request time from the implementing source
interface's ``contract`` and the terminal module's ``authority``; it is never
stored. The MCP tier gate compares it with the tool's tier.

Derivation table (first row that applies wins):

====== ==================================================================
Level  Condition
====== ==================================================================
n/a    ``contract``, ``contract.execution`` or ``contract.direct_io`` is
       missing or malformed: ``state_effect`` not ``read-only``/``mutating``;
       ``reads``/``writes``/``network`` not all lists of mappings; an entry
       without a known ``medium``; ``path`` not a string; ``path_match`` not
       ``exact``/``glob``/``regex``; or the terminal module's
       ``authority.owns_filesystem`` present but malformed (an entry without
       a string ``path``, ``match`` not ``exact``/``regex``, or a regex the
       dispatcher refuses to compile) -> SecurityLevelUnavailable.
0      ``state_effect`` is ``read-only``, ``direct_io.network`` is empty, and
       every ``writes`` entry has medium ``stdout`` or ``stderr``. Reads are
       not restricted.
2      ``direct_io.network`` is not empty.
2      A ``reads``/``writes`` entry has an external medium:
       ``remote-filesystem``, ``network-request``, ``network``, ``email``,
       ``calendar``, ``subprocess``, ``local-system`` or ``event-stream``.
2      A filesystem entry (``local-filesystem``, ``home-filesystem``,
       ``repository-filesystem``, ``temporary-filesystem``) cannot be proven
       to lie inside ``owns_filesystem`` (rules below).
1      Otherwise: only process channels (``stdin``, ``stdout``, ``stderr``,
       ``prompt``) and owned filesystem paths.
====== ==================================================================

"Inside ``owns_filesystem``" is lexical and conservative. An entry with no
``path``, or whose path has a ``.`` or ``..`` segment, is never inside.
Otherwise, with ``path_match`` defaulting to ``exact``:

* ``exact``: equal to an owned ``exact`` path, or fully matched by an owned
  ``regex`` (paths over 4096 characters never match);
* ``regex``: textually identical to an owned ``regex``; otherwise judged by
  what it can match, like a glob;
* ``regex`` and ``glob``: inside when the pattern matches one literal path that
  is inside by the ``exact`` rule, or when every path it can match starts with
  an owned subtree and has no ``.`` or ``..`` segment. A construct the analysis
  does not model (groups, alternation, numeric escapes, flags, braces...) is
  outside; see :mod:`~boring_dispatch.repository.facts._path_scope`.

An owned subtree is an owned ``regex`` of the exact form ``^<literal>/.*$``
(``<literal>`` made of plain or backslash-escaped characters); a path lies
under it when it starts with ``<literal>/``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from boring_dispatch._value import value
from boring_dispatch.errors import SecurityLevelUnavailable
from boring_dispatch.records import ModuleRecord
from boring_dispatch.repository._regex import (
    MAX_SUBJECT_LENGTH,
    BoundedPattern,
    PatternRefused,
    compile_pattern,
)
from boring_dispatch.repository._shapes import one_of
from boring_dispatch.repository.facts._path_scope import (
    glob_items,
    literal_text,
    regex_items,
    stays_under,
)

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = ["EXTERNAL_MEDIA", "FILESYSTEM_MEDIA", "PROCESS_MEDIA", "derive_level"]

#: Media that reach beyond the module's own area: any of them makes level 2.
EXTERNAL_MEDIA: Final = frozenset(
    {
        "remote-filesystem",
        "network-request",
        "network",
        "email",
        "calendar",
        "subprocess",
        "local-system",
        "event-stream",
    }
)
#: Media whose paths must lie inside ``authority.owns_filesystem`` for level 1.
FILESYSTEM_MEDIA: Final = frozenset(
    {"local-filesystem", "home-filesystem", "repository-filesystem", "temporary-filesystem"}
)
#: The process's own channels: allowed at level 1 (only stdout/stderr writes at level 0).
PROCESS_MEDIA: Final = frozenset({"stdin", "stdout", "stderr", "prompt"})
_MEDIA: Final = EXTERNAL_MEDIA | FILESYSTEM_MEDIA | PROCESS_MEDIA
_PATH_MATCHES: Final = frozenset({"exact", "glob", "regex"})
# Compiled (and cached by ``re``) on first use, not at import: a CLI start rarely needs it.
_SUBTREE: Final = r"\^((?:\\[^A-Za-z0-9]|[^.^$*+?{}\[\]\\|()])+)/\.\*\$"
_UNESCAPE: Final = r"\\(.)"


@value
class _Entry:
    medium: str
    path: str | None
    path_match: str


@value
class _Owned:
    exact: frozenset[str]
    regexes: tuple[BoundedPattern, ...]
    regex_texts: frozenset[str]
    subtrees: tuple[str, ...]


def derive_level(interface: Mapping[str, object], terminal: ModuleRecord) -> int:
    """The security level (0, 1 or 2) of a source interface in its terminal module.

    Args:
        interface: the implementing source interface mapping.
        terminal: the module that exports it (its ``authority`` is consulted).

    Returns:
        0, 1 or 2 following the table in this module's docstring.

    Raises:
        SecurityLevelUnavailable: the contract, ``execution`` or ``direct_io``
            is missing or malformed, or ``owns_filesystem`` is malformed.
    """
    reads, writes, network, read_only = _contract(interface, terminal.module_id)
    owned = _owned(terminal)
    if read_only and not network and all(w.medium in {"stdout", "stderr"} for w in writes):
        return 0
    if network:
        return 2
    for entry in (*reads, *writes):
        if entry.medium in EXTERNAL_MEDIA:
            return 2
        if entry.medium in FILESYSTEM_MEDIA and not _inside(entry, owned):
            return 2
    return 1


def _unavailable(module_id: str, reason: str) -> SecurityLevelUnavailable:
    return SecurityLevelUnavailable(
        f"security level unavailable: {reason}", target_module_id=module_id
    )


def _contract(
    interface: object, module_id: str
) -> tuple[tuple[_Entry, ...], tuple[_Entry, ...], tuple[_Entry, ...], bool]:
    contract = interface.get("contract") if isinstance(interface, Mapping) else None
    if not isinstance(contract, Mapping):
        raise _unavailable(module_id, "the interface has no contract")
    execution = contract.get("execution")
    state = execution.get("state_effect") if isinstance(execution, Mapping) else None
    if not one_of(state, {"read-only", "mutating"}):
        raise _unavailable(module_id, "contract.execution.state_effect is missing or invalid")
    direct_io = contract.get("direct_io")
    if not isinstance(direct_io, Mapping):
        raise _unavailable(module_id, "contract.direct_io is missing or malformed")
    sections = [_entries(direct_io.get(key), key, module_id) for key in ("reads", "writes")]
    network = _entries(direct_io.get("network"), "network", module_id)
    return sections[0], sections[1], network, state == "read-only"


def _entries(raw: object, key: str, module_id: str) -> tuple[_Entry, ...]:
    if not isinstance(raw, list):
        raise _unavailable(module_id, f"contract.direct_io.{key} must be a list")
    out: list[_Entry] = []
    for item in raw:
        if not isinstance(item, Mapping) or not one_of(item.get("medium"), _MEDIA):
            raise _unavailable(module_id, f"a direct_io.{key} entry has no known medium")
        medium = str(item["medium"])
        path, path_match = item.get("path"), item.get("path_match", "exact")
        if (path is not None and not isinstance(path, str)) or not one_of(
            path_match, _PATH_MATCHES
        ):
            raise _unavailable(module_id, f"a direct_io.{key} entry has a malformed path")
        out.append(_Entry(medium=medium, path=path, path_match=str(path_match)))
    return tuple(out)


def _owned(terminal: ModuleRecord) -> _Owned:
    authority = terminal.data.get("authority", {})
    owns = authority.get("owns_filesystem", []) if isinstance(authority, Mapping) else None
    if not isinstance(owns, list):
        raise _unavailable(terminal.module_id, "authority.owns_filesystem is malformed")
    exact: set[str] = set()
    regexes: list[BoundedPattern] = []
    texts: set[str] = set()
    subtrees: list[str] = []
    for item in owns:
        path = item.get("path") if isinstance(item, Mapping) else None
        match = item.get("match") if isinstance(item, Mapping) else None
        if not isinstance(path, str) or not path or not one_of(match, {"exact", "regex"}):
            raise _unavailable(terminal.module_id, "an owns_filesystem entry is malformed")
        if match == "exact":
            exact.add(path)
            continue
        try:
            regexes.append(compile_pattern(path))
        except PatternRefused:
            raise _unavailable(terminal.module_id, "an owns_filesystem regex is refused") from None
        texts.add(path)
        subtree = re.fullmatch(_SUBTREE, path, re.DOTALL)
        if subtree is not None:
            subtrees.append(re.sub(_UNESCAPE, r"\1", subtree.group(1), flags=re.DOTALL) + "/")
    return _Owned(frozenset(exact), tuple(regexes), frozenset(texts), tuple(subtrees))


def _inside(entry: _Entry, owned: _Owned) -> bool:
    path = entry.path
    if path is None or _has_dot_segment(path):
        return False
    if entry.path_match == "exact":
        return _owned_path(path, owned)
    if entry.path_match == "regex" and path in owned.regex_texts:
        return True
    # What the pattern can match decides, not its text (see _path_scope).
    items = regex_items(path) if entry.path_match == "regex" else glob_items(path)
    if items is None:
        return False
    literal = literal_text(items)
    if literal is not None and not _has_dot_segment(literal) and _owned_path(literal, owned):
        return True
    return stays_under(items, owned.subtrees)


def _owned_path(path: str, owned: _Owned) -> bool:
    return path in owned.exact or _fully_matched(path, owned.regexes)


def _has_dot_segment(path: str) -> bool:
    return any(part in {".", ".."} for part in path.split("/"))


def _fully_matched(path: str, regexes: Sequence[BoundedPattern]) -> bool:
    if len(path) > MAX_SUBJECT_LENGTH:
        return False
    return any(regex.fullmatch(path) is not None for regex in regexes)
