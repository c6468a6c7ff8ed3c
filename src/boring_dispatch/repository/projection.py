"""The structured call form (the "projection") and how it compiles to a gateway argv.

MCP tools, replay files and nested calls from gateways describe arguments as
data instead of an argv::

    {"caller": "daily-plan", "interface": "list-manager._rtx.interface.read-list",
     "version": 1, "arguments": {"positionals": [], "options": {}, "stdin": null},
     "dry_run": false}

The compile rule, one for every client:

- An option key is a flag name: ``"--date"`` or ``"-D"`` as written, or a bare
  name (``"date"``) which gets ``--`` in front. Two keys naming the same flag
  are refused.
- A string or integer value emits the flag and the value as two tokens
  (``--date 2026-01-02``); ``true`` emits the flag alone (a switch); ``false``
  and ``null`` emit nothing; a list emits the flag once followed by each value
  (a multi-value option, as argument-mode bindings expect). Floats are refused
  (``1.0`` must never become ``"1.0"``), and so are booleans inside lists.
- An option value (or list item) that begins with ``-`` is refused: the
  binding would read it as a flag (``{"client-id": ["a", "--port", "80"]}``
  must never smuggle in ``--port``). Negative integers are refused alike.
- There is no repeated-flag form (``--tag a --tag b``): both version-6
  grammars refuse a flag given twice, so a list is the only multi-value form.
- Options come after the positionals, in the order given. If any positional
  begins with ``-`` (other than a lone ``-``), the options come first, then
  ``--``, then the positionals, so that no positional can be read as a flag.

Nothing here decides whether the argv is acceptable: the binding does that,
exactly as for an argv typed on the command line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from boring_dispatch._limits import MAX_ARGV_TOKENS
from boring_dispatch.errors import InvalidRouteRequest
from boring_dispatch.records import RouteRequest

__all__ = ["Projection", "parse_argv_form", "parse_projection", "projection_argv"]

_FLAG: Final = re.compile(r"--?[A-Za-z0-9][A-Za-z0-9-]*", re.ASCII)
_BARE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*", re.ASCII)
_PROJECTION_KEYS: Final = frozenset(
    {"caller", "interface", "version", "arguments", "dry_run", "setup_flow_id"}
)
#: The longest setup flow ID accepted (the ledger's are 32 characters).
_MAX_FLOW_ID: Final = 64
_REQUIRED_KEYS: Final = frozenset({"caller", "interface"})
_ARGUMENT_KEYS: Final = frozenset({"positionals", "options", "stdin"})
_ARGV_FORM_KEYS: Final = frozenset({"caller", "interface", "version", "argv", "stdin"})
_ARGV_FORM_REQUIRED: Final = frozenset({"caller", "interface", "argv"})


@dataclass(frozen=True, slots=True)
class Projection:
    """A validated projection: the request, the stdin text and the dry-run flag."""

    request: RouteRequest
    stdin_text: str | None
    dry_run: bool


def projection_argv(positionals: Sequence[str], options: Mapping[str, object]) -> tuple[str, ...]:
    """Compile positionals and options to a gateway argv (see the module docstring).

    Raises:
        InvalidRouteRequest: a positional is not a string, a key is not a flag
            name, two keys name one flag, or a value has a refused type.
    """
    if isinstance(positionals, str) or not all(isinstance(p, str) for p in positionals):
        raise InvalidRouteRequest("positionals must be a list of strings")
    named: list[str] = []
    seen: set[str] = set()
    for key, value in options.items():
        flag = _flag_name(key)
        if flag in seen:
            raise InvalidRouteRequest(f"option {flag} is given twice")
        seen.add(flag)
        named.extend(_option_tokens(flag, value))
    tokens = list(positionals)
    if any(p.startswith("-") and p != "-" for p in positionals):
        argv = (*named, "--", *tokens)
    else:
        argv = (*tokens, *named)
    if len(argv) > MAX_ARGV_TOKENS:  # a backstop: the binding stage checks the same cap
        raise InvalidRouteRequest(f"the argv has more than {MAX_ARGV_TOKENS} tokens")
    return argv


def parse_projection(value: object, *, host: bool = True, tier: int | None = None) -> Projection:
    """Validate a projection object strictly and turn it into a request.

    Unknown keys, missing keys and wrong types are refused; nothing is coerced.
    A missing ``arguments`` (or a member of it) means none: no positionals,
    no options, no stdin.

    Raises:
        InvalidRouteRequest: the object does not have the projection's shape.
    """
    fields = _fields(value, allowed=_PROJECTION_KEYS, required=_REQUIRED_KEYS)
    caller, interface, version = _call_identity(fields)
    dry_run = fields.get("dry_run", False)
    if type(dry_run) is not bool:
        raise InvalidRouteRequest("dry_run must be a boolean")
    arguments = fields.get("arguments", {})
    if not isinstance(arguments, Mapping) or not set(arguments) <= _ARGUMENT_KEYS:
        raise InvalidRouteRequest("arguments must be an object of positionals, options, stdin")
    positionals = arguments.get("positionals", [])
    options = arguments.get("options", {})
    if not isinstance(positionals, list):
        raise InvalidRouteRequest("positionals must be a list of strings")
    if not isinstance(options, Mapping):
        raise InvalidRouteRequest("options must be an object")
    argv = projection_argv(positionals, options)
    stdin = _stdin_text(arguments.get("stdin"))
    flow_id = fields.get("setup_flow_id")
    if flow_id is not None and (
        type(flow_id) is not str
        or not 0 < len(flow_id) <= _MAX_FLOW_ID
        or not flow_id.isascii()
        or not flow_id.isalnum()
    ):
        raise InvalidRouteRequest("setup_flow_id must be a setup flow ID")
    request = RouteRequest(
        caller,
        interface,
        version,
        argv,
        stdin is not None,
        host,
        tier,
        setup_flow_id=flow_id,
    )
    return Projection(request=request, stdin_text=stdin, dry_run=dry_run)


def parse_argv_form(value: object, *, host: bool = True) -> Projection:
    """Validate ``{"caller", "interface", "version"?, "argv", "stdin"?}`` (replay's argv form).

    Raises:
        InvalidRouteRequest: the object does not have that shape.
    """
    fields = _fields(value, allowed=_ARGV_FORM_KEYS, required=_ARGV_FORM_REQUIRED)
    caller, interface, version = _call_identity(fields)
    argv = fields["argv"]
    if not isinstance(argv, list) or not all(isinstance(t, str) for t in argv):
        raise InvalidRouteRequest("argv must be a list of strings")
    stdin = _stdin_text(fields.get("stdin"))
    request = RouteRequest(caller, interface, version, tuple(argv), stdin is not None, host)
    return Projection(request=request, stdin_text=stdin, dry_run=False)


def _fields(
    value: object, *, allowed: frozenset[str], required: frozenset[str]
) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise InvalidRouteRequest("a call must be a JSON object")
    keys = set(value)
    if not keys <= allowed:
        extra = ", ".join(sorted(str(k) for k in keys - allowed))
        raise InvalidRouteRequest(f"unknown fields: {extra}")
    if not keys >= required:
        missing = ", ".join(sorted(required - keys))
        raise InvalidRouteRequest(f"missing fields: {missing}")
    return value


def _call_identity(fields: Mapping[str, object]) -> tuple[str, str, int | None]:
    caller, interface = fields["caller"], fields["interface"]
    if not isinstance(caller, str) or not isinstance(interface, str):
        raise InvalidRouteRequest("caller and interface must be strings")
    version = fields.get("version")
    if version is not None and (type(version) is not int or version < 1):
        raise InvalidRouteRequest("version must be an integer >= 1 or null")
    return caller, interface, version


def _stdin_text(stdin: object) -> str | None:
    if stdin is not None and not isinstance(stdin, str):
        raise InvalidRouteRequest("stdin must be a string or null")
    if stdin is not None and not _is_text(stdin):
        raise InvalidRouteRequest("stdin must be valid text (no lone surrogates)")
    return stdin


def _is_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _flag_name(key: object) -> str:
    if not isinstance(key, str):
        raise InvalidRouteRequest("option names must be strings")
    if _FLAG.fullmatch(key):
        return key
    if _BARE.fullmatch(key):
        return "--" + key
    raise InvalidRouteRequest("option names must be flag names such as --date or date")


def _option_tokens(flag: str, value: object) -> tuple[str, ...]:
    if value is None or value is False:
        return ()
    if value is True:
        return (flag,)
    if isinstance(value, str | int) and not isinstance(value, bool):
        return (flag, _scalar(flag, value))
    if isinstance(value, list):
        items = [_scalar(flag, item) for item in value]
        return (flag, *items)
    raise InvalidRouteRequest(f"option {flag} has a value of a refused type")


def _scalar(flag: str, item: object) -> str:
    if isinstance(item, str):
        text = item
    elif type(item) is int:
        text = str(item)
    else:
        raise InvalidRouteRequest(f"option {flag} has a value of a refused type")
    if text.startswith("-"):
        raise InvalidRouteRequest(f"a value of option {flag} begins with '-'")
    return text
