"""The child's environment, built from an allowlist (never a copy of ours).

The dispatcher's own environment may hold credentials, tokens and hijack
variables (``LD_PRELOAD``, ``PYTHONPATH``, ``BASH_ENV``, exported bash
functions). A gateway gets only:

- a few identity and terminal variables copied when present and plain:
  ``HOME``, ``LOGNAME``, ``USER``, ``TERM``;
- locale and time-zone variables (``LANG``, ``LC_*`` listed below, ``TZ``)
  when their value is a plain name (no path, no ``..``);
- fixed values: ``PATH=/usr/bin:/bin``, ``LANG=C.UTF-8`` when no plain
  ``LANG`` was copied, ``PYTHONIOENCODING=utf-8:strict``,
  ``PYTHONDONTWRITEBYTECODE=1`` (these two matter only to Python processes a
  gateway starts without ``-I``: the runner itself runs isolated);
- our own variables: ``BORING_DISPATCH_TRACE_ID`` (when a trace id is given),
  ``ASSISTANT_LOGS`` (when absolute) and ``BORING_DISPATCH_OTEL`` (only ``1``),
  so that the runner can write its span.

A value that starts with ``()`` (an exported bash function) is never copied.
Credentials reach a gateway only through declared arguments or stdin.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Final

from boring_dispatch.observe.trace import TRACE_ID_ENV, valid_trace_id

__all__ = ["FIXED", "child_environment"]

#: Values every child gets, whatever the parent has.
FIXED: Final[Mapping[str, str]] = {
    "PATH": "/usr/bin:/bin",
    "PYTHONIOENCODING": "utf-8:strict",
    "PYTHONDONTWRITEBYTECODE": "1",
}
_DEFAULT_LANG: Final = "C.UTF-8"
_PLAIN: Final = frozenset({"HOME", "LOGNAME", "USER", "TERM"})
_LOCALE: Final = frozenset(
    {
        "LANG",
        "LC_ALL",
        "LC_COLLATE",
        "LC_CTYPE",
        "LC_MESSAGES",
        "LC_MONETARY",
        "LC_NUMERIC",
        "LC_TIME",
    }
)
# A locale name or a time-zone name: letters, digits and a few separators, no path.
_LOCALE_VALUE: Final = re.compile(r"[A-Za-z0-9_.@+-]{1,64}")
_TZ_VALUE: Final = re.compile(r":?[A-Za-z0-9_+-]{1,32}(/[A-Za-z0-9_+-]{1,32}){0,3}")
_MAX_VALUE: Final = 4096


def child_environment(
    source: Mapping[str, str] | None = None,
    *,
    trace_id: str | None = None,
) -> dict[str, str]:
    """Build the environment of a gateway process from ``source`` (default: ``os.environ``).

    Args:
        source: The dispatcher's environment; only allowlisted names are read.
        trace_id: The call's trace id; passed as ``BORING_DISPATCH_TRACE_ID``
            when it has the exact trace-id shape, dropped otherwise.

    Returns:
        A new mapping. Everything not listed in the module docstring is
        refused, including every ``PYTHON*``, ``LD_*``, ``BASH_ENV``, ``ENV``,
        ``IFS``, ``NODE_OPTIONS``, ``GIT_CONFIG_*``, ``SHELL`` and any
        credential or token variable.
    """
    parent = os.environ if source is None else source
    env: dict[str, str] = {}
    for name in sorted(_PLAIN):
        value = parent.get(name)
        if value is not None and _plain(value):
            env[name] = value
    for name in sorted(_LOCALE):
        value = parent.get(name)
        if value is not None and _LOCALE_VALUE.fullmatch(value):
            env[name] = value
    tz = parent.get("TZ")
    if tz is not None and _TZ_VALUE.fullmatch(tz) and ".." not in tz:
        env["TZ"] = tz
    env.setdefault("LANG", _DEFAULT_LANG)
    env.update(FIXED)
    logs = parent.get("ASSISTANT_LOGS")
    if logs is not None and _plain(logs) and os.path.isabs(logs):  # noqa: PTH117 - a string check
        env["ASSISTANT_LOGS"] = logs
    if parent.get("BORING_DISPATCH_OTEL") == "1":
        env["BORING_DISPATCH_OTEL"] = "1"
    if trace_id is not None and valid_trace_id(trace_id):
        env[TRACE_ID_ENV] = trace_id
    return env


def _plain(value: str) -> bool:
    """Not a bash function, no control characters, bounded."""
    return (
        not value.startswith("()")
        and len(value) <= _MAX_VALUE
        and not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value)
    )
