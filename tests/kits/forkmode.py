"""A pytest plugin that runs a test session's captured launches through the fork server.

``PYTHONPATH=tests pytest -p kits.forkmode tests/security/test_child_isolation.py``
runs the unchanged isolation and hostile tests against forked gateways (the
MCP server uses the fork server by default; the launcher's own tests spawn).
Every captured launch of the session gets ``ExecLimits.fork_server`` set (the
launcher still spawns ``run_as``, nested and streamed launches); there is no
process-wide switch to flip.
"""

from __future__ import annotations

import functools

from boring_dispatch._value import replace
from boring_dispatch.process import launch

_captured = launch.run_captured


@functools.wraps(_captured)
def _forked(*args: object, **kwargs: object) -> object:
    limits = kwargs.get("limits")
    if limits is not None:
        kwargs["limits"] = replace(limits, fork_server=True)
    return _captured(*args, **kwargs)  # type: ignore[arg-type]


launch.run_captured = _forked  # type: ignore[assignment]
