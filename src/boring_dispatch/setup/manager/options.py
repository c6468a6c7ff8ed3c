"""The options of each manager route: exact keys, strings only, checked before anything runs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from boring_dispatch._json import strict_loads
from boring_dispatch._quote import shown
from boring_dispatch.errors import InvalidRouteRequest, RouteError, SetupGraphInvalid
from boring_dispatch.repository import ids

__all__ = [
    "ROUTE_OPTIONS",
    "Resume",
    "check_options",
    "dump_resume",
    "parse_resume",
    "parse_setup_key",
]

#: route -> (required options, optional options).
ROUTE_OPTIONS: Final[Mapping[str, tuple[frozenset[str], frozenset[str]]]] = {
    "status": (frozenset({"interface"}), frozenset({"version"})),
    "authorize": (frozenset({"interface"}), frozenset({"version"})),
    "begin": (frozenset({"setup", "resume"}), frozenset()),
    "run-python": (frozenset({"flow"}), frozenset()),
    "run-markdown": (frozenset({"flow"}), frozenset()),
    "authorize-markdown-call": (frozenset({"flow", "interface"}), frozenset()),
    "settle": (frozenset({"flow", "setup", "outcome"}), frozenset()),
    "recover": (frozenset({"flow"}), frozenset()),
    "recover-busy": (frozenset({"flow"}), frozenset()),
    "teardown": (frozenset({"setup"}), frozenset({"cascade"})),
    "teardown-all": (frozenset(), frozenset()),
    "invalidate": (frozenset({"setup"}), frozenset()),
}
_MAX_OPTION: Final = 4096

Resume = tuple[str, str, "int | None"]


def check_options(route: str, options: Mapping[str, object]) -> dict[str, str]:
    """The route's options as strings (``version`` and ``cascade`` may be int/bool).

    Raises:
        InvalidRouteRequest: an unknown route, a missing or unknown option, a bad value.
    """
    spec = ROUTE_OPTIONS.get(route)
    if spec is None:
        raise InvalidRouteRequest(f"the setup manager has no route {shown(route)}")
    required, optional = spec
    keys = set(options)
    if not required <= keys or not keys <= required | optional:
        raise InvalidRouteRequest(
            f"setup manager route {route} takes options {sorted(required)}"
            + (f" and optionally {sorted(optional)}" if optional else "")
        )
    out: dict[str, str] = {}
    for key, raw in options.items():
        text = _option_text(key, raw)
        if text is not None:
            out[key] = text
    if "version" in out and not out["version"].isdigit():
        raise InvalidRouteRequest("setup manager option version must be an integer >= 1")
    if "outcome" in out and out["outcome"] not in ("ready", "failed"):
        raise InvalidRouteRequest("setup manager option outcome must be ready or failed")
    if "cascade" in out and out["cascade"] not in ("true", "false"):
        raise InvalidRouteRequest("setup manager option cascade must be true or false")
    return out


def _option_text(key: str, raw: object) -> str | None:
    """One option as text (``None``: an omitted version); ``version``/``cascade`` may be typed."""
    if key == "version" and (raw is None or (type(raw) is int and raw >= 1)):
        return None if raw is None else str(raw)
    if key == "cascade" and type(raw) is bool:
        return "true" if raw else "false"
    if type(raw) is not str or not 0 < len(raw) <= _MAX_OPTION:
        raise InvalidRouteRequest(f"setup manager option {key} must be a nonempty string")
    return raw


def parse_setup_key(text: str) -> tuple[str, int | None]:
    """``<module>.interface.setup@<version>`` (or without the pin).

    Raises:
        SetupGraphInvalid: not a setup export ID.
    """
    setup_id, at, pin = text.partition("@")
    try:
        _, name = ids.parse_interface_id(setup_id)
    except RouteError:
        name = ""
    if name != "setup" or (at and not (pin.isdigit() and 0 < len(pin) <= 9 and int(pin) >= 1)):
        raise SetupGraphInvalid(f"not a setup export: {shown(text)}")
    return setup_id, int(pin) if at else None


def parse_resume(text: str) -> Resume:
    """The ``resume`` option: JSON ``{"caller", "interface", "version"}``, nothing else.

    Raises:
        InvalidRouteRequest: anything else.
    """
    try:
        value = strict_loads(text, max_bytes=_MAX_OPTION)
    except ValueError:
        value = None
    if not isinstance(value, dict) or set(value) != {"caller", "interface", "version"}:
        raise InvalidRouteRequest("resume must be the JSON object {caller, interface, version}")
    caller, interface, version = value["caller"], value["interface"], value["version"]
    if (
        type(caller) is not str
        or type(interface) is not str
        or not (version is None or (type(version) is int and version >= 1))
    ):
        raise InvalidRouteRequest("resume must be the JSON object {caller, interface, version}")
    return caller, interface, version


def dump_resume(resume: Resume) -> str:
    caller, interface, version = resume
    return json.dumps(
        {"caller": caller, "interface": interface, "version": version},
        sort_keys=True,
        separators=(",", ":"),
    )
