"""``--fixtures`` and ``--require-fixtures``: replay in a fixture world, tools without one.

``dispatcher replay --registry M:N --fixtures FILE TRACE`` pushes every line of
the trace through the table's fixture world (the file's fixtures over the
tools' own): one observation per line on stdout, one JSON line per difference
and per unused fixture on stderr, exit 1 on any difference.

``dispatcher names --registry M:N [--golden FILE] --require-fixtures
[--fixtures FILE]`` exits 1 and names every tool with no fixture.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from boring_dispatch._files import FileRefused
    from boring_dispatch.registry.fixtures import Fixture
    from boring_dispatch.registry.registry import Registry

__all__ = ["missing_fixtures", "read_file_fixtures", "replay_world"]

#: ``(kind, error)`` -> None: how the caller reports a file it could not read.
FileError = Callable[[str, "OSError | FileRefused"], None]


def read_file_fixtures(
    registry: Registry, path: str | None, file_error: FileError
) -> Mapping[str, Fixture] | None:
    """The fixtures of the file at ``path`` for ``registry`` (``{}`` without a path); ``None``
    when the file could not be read (already reported)."""
    if path is None:
        return {}
    from boring_dispatch._files import FileRefused
    from boring_dispatch.registry.fixture_files import read_fixtures

    try:
        return read_fixtures(Path(path), registry.names())
    except (OSError, FileRefused) as error:
        file_error("fixtures", error)
        return None


def missing_fixtures(registry: Registry, fixtures: Mapping[str, Fixture]) -> int:
    """Exit status of ``--require-fixtures``: 1, with the names on stderr, if a tool has none."""
    missing = [
        name
        for name, tool in registry.tools.items()
        if tool.fixture is None and name not in fixtures
    ]
    for name in sorted(missing):
        sys.stderr.write(f"no fixture: {name}\n")
    return 1 if missing else 0


def replay_world(
    registry: Registry,
    fixtures: Mapping[str, Fixture],
    lines: Sequence[str],
    *,
    allow_missing: bool,
) -> int:
    """Replay ``lines`` against the fixture world; exit status 1 on any difference.

    Raises:
        RegistryInvalid: the world cannot be built (see ``Registry.fixture_world``).
    """
    from boring_dispatch.registry.fixtures import unused_fixtures
    from boring_dispatch.registry.replay import comparable, replay_lines

    world = registry.fixture_world(fixtures, allow_missing=allow_missing)
    differs = False
    for entry in replay_lines(world, lines):
        sys.stdout.write(json.dumps(entry.observation, sort_keys=True) + "\n")
        if entry.differs:
            differs = True
            recorded = None if entry.recorded is None else comparable(entry.recorded)
            difference = {
                "difference": "observation",
                "line": entry.line_number,
                "tool": entry.name,
                "recorded": recorded,
                "now": comparable(entry.observation),
            }
            sys.stderr.write(json.dumps(difference, sort_keys=True) + "\n")
    for unused in unused_fixtures(world.tools):
        line = {"unused_fixture": unused.tool, "args": json.loads(unused.args)}
        sys.stderr.write(json.dumps(line, sort_keys=True) + "\n")
    return 1 if differs else 0
