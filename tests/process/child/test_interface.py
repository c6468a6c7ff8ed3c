"""The gateway API's side of a nested call (``process/child/interface.py``).

A refusal of a nested call comes back from the dispatcher as its JSON error
line; the gateway sees it again as the ``RouteError`` subclass of its code,
for every code of the tree, checked in a fresh interpreter (the gateway's view).
"""

from __future__ import annotations

from boring_dispatch import errors
from kits.plain_env import isolated_json

_PROBE = """
import json
from boring_dispatch.process.child.interface import _route_error
from boring_dispatch import errors
seen = {}
for name in sorted(errors.__all__):
    cls = getattr(errors, name)
    if issubclass(cls, errors.RouteError):
        error = _route_error({"code": cls.code, "message": "m", "interface_id": "a.interface.b"})
        seen[name] = [type(error).__name__, error.interface_id, error.message]
error = _route_error({"code": "dispatcher.not_a_code"})
seen["unknown"] = [type(error).__name__, error.interface_id, error.message]
print(json.dumps(seen))
"""


def test_every_route_error_code_comes_back_as_its_class_in_a_fresh_interpreter() -> None:
    # The first refusal is rebuilt before the probe imports the errors package itself.
    probe = _PROBE.replace(
        "from boring_dispatch import errors\nseen = {}",
        "seen = {}\nfirst = _route_error({'code': 'dispatcher.setup_busy'})\n"
        "assert type(first).__name__ == 'SetupBusy', first\n"
        "from boring_dispatch import errors",
    )
    seen = isolated_json(probe)
    unknown = seen.pop("unknown")
    assert unknown == ["InternalFailure", None, ""]
    expected = {n for n in errors.__all__ if issubclass(getattr(errors, n), errors.RouteError)}
    assert set(seen) == expected
    assert {"SetupBusy", "SetupRefusal", "InternalFailure", "RouteError"} <= expected
    # RouteError and SetupRefusal share the generic code ``dispatcher.error``: either class.
    generic = {"RouteError", "SetupRefusal"}
    assert {seen[name][0] for name in generic} <= generic
    assert all(
        shown == [name, "a.interface.b", "m"] for name, shown in seen.items() if name not in generic
    )
