"""A pytest plugin that runs a test session's captured launches through the fork server.

``PYTHONPATH=tests pytest -p kits.forkmode tests/security/test_child_isolation.py``
runs the unchanged isolation and hostile tests against forked gateways (the
MCP server uses the fork server by default; the launcher's own tests spawn).
"""

from __future__ import annotations

from boring_dispatch.process import _fork

_fork.enable()
