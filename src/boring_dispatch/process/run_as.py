"""``--run-as USER[:GROUP]``: the user and group every gateway of a command runs as.

The dispatcher itself keeps its identity; each gateway process switches to
the configured uid and gid (and no supplementary groups) in the forked child
before ``exec`` (see :mod:`~boring_dispatch.process.launch`). That takes the
privilege to switch users, so in practice the dispatcher runs as root and the
gateways as a dedicated account. A gateway of another uid cannot signal the
dispatcher, read its ``/proc`` entries or open its descriptors, and cannot
write files that only the operator may write. The module files must be
readable, and their directories searchable, by that user; the interpreter too.
"""

from __future__ import annotations

from boring_dispatch._value import replace
from boring_dispatch.errors import RuntimeMisconfigured
from boring_dispatch.records import ExecLimits

__all__ = ["resolve_run_as", "with_run_as"]

_MAX_ID = (1 << 32) - 2


def resolve_run_as(text: str) -> tuple[int, int]:
    """``USER`` or ``USER:GROUP`` (names or numbers) as ``(uid, gid)``.

    A user given alone runs with its primary group from the password database.

    Raises:
        RuntimeMisconfigured: the text is malformed, or names a user or group
            this system does not know (a bare number for a user needs a group).
    """
    user, separator, group = text.partition(":")
    if not user or (separator and not group):
        raise RuntimeMisconfigured("--run-as expects USER or USER:GROUP")
    uid, primary = _user(user)
    gid = _group(group) if separator else primary
    if gid is None:
        raise RuntimeMisconfigured("--run-as needs USER:GROUP for a uid without an account")
    return uid, gid


def with_run_as(limits: ExecLimits, run_as: str | None) -> ExecLimits:
    """``limits`` with the user and group of ``run_as`` (unchanged when it is ``None``)."""
    if run_as is None:
        return limits
    uid, gid = resolve_run_as(run_as)
    return replace(limits, run_as_uid=uid, run_as_gid=gid)


def _user(text: str) -> tuple[int, int | None]:
    import pwd

    try:
        entry = pwd.getpwuid(_number(text)) if _is_number(text) else pwd.getpwnam(text)
    except KeyError:
        if _is_number(text):
            return _number(text), None
        raise RuntimeMisconfigured("--run-as names no user of this system") from None
    return entry.pw_uid, entry.pw_gid


def _group(text: str) -> int:
    import grp

    if _is_number(text):
        return _number(text)
    try:
        return grp.getgrnam(text).gr_gid
    except KeyError:
        raise RuntimeMisconfigured("--run-as names no group of this system") from None


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 10


def _number(text: str) -> int:
    number = int(text)
    if number > _MAX_ID:
        raise RuntimeMisconfigured("--run-as id is out of range")
    return number
