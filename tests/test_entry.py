"""The ``dispatcher`` process's entry point: the garbage collector waits while the command imports.

``boring_dispatch._entry`` turns the collector off before its first import of
ours; the CLI turns it back on, with everything imported so far frozen
(``gc.freeze``), once the command's own imports are done and before it
resolves, launches or serves anything. A library caller of the CLI's ``main``
keeps its own collector settings. Each test runs a real ``python -I`` process
with an audit hook that records the collector's state at the events named
(imports, the gateway's launch, the files a subcommand opens); isolation
itself is tested in ``tests/security/test_hardening_process_entry.py``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from kits.plain_env import isolated_json
from kits.setup_repo import write_setup_repository

CORPUS = Path(__file__).resolve().parent / "corpus" / "famulus" / "officina.toml"
R1 = ["--caller-skill", "get-weather", "--dry-run", "get-weather._rtx.interface.scripts-weather"]

# Records gc.isenabled() at every audit event named in EVENTS (by prefix), then runs
# ENTRY and prints what it saw beside the collector's final state.
_PROBE = """
import contextlib, gc, io, json, sys
seen = []
def hook(event, args):
    if event.startswith(EVENTS):
        name = args[0] if event == "import" else None
        if event != "import" or str(name).startswith("boring_dispatch"):
            seen.append([event, str(name), gc.isenabled()])
sys.addaudithook(hook)
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        rc = ENTRY
    except SystemExit as exit_:
        rc = exit_.code
print(json.dumps({"rc": rc, "seen": seen, "enabled": gc.isenabled(),
                  "frozen": gc.get_freeze_count(), "out": out.getvalue()}))
"""


def _run(entry: str, argv: list[str], events: tuple[str, ...], before: str = "") -> dict[str, Any]:
    code = (
        "import sys\n"
        f"sys.argv[1:] = {argv!r}\n"
        f"EVENTS = {events!r}\n" + before + textwrap.dedent(_PROBE).replace("ENTRY", entry)
    )
    result: dict[str, Any] = isolated_json(code, timeout=120)
    return result


_ENTRY = "__import__('boring_dispatch._entry')._entry.main()"
_LIBRARY = "__import__('boring_dispatch.surfaces.cli.main').surfaces.cli.main.main()"


@pytest.mark.skipif(not CORPUS.is_file(), reason="famulus corpus not found")
def test_a_dry_run_imports_with_the_collector_off_and_resolves_with_it_on() -> None:
    seen = _run(_ENTRY, ["--config", str(CORPUS), *R1], ("import",))
    assert seen["rc"] == 0
    paused = {name for _, name, enabled in seen["seen"] if not enabled}
    # The CLI and the modules the invocation imports, then resolution's first-use imports.
    assert {"boring_dispatch.surfaces.cli.main", "boring_dispatch.repository.repository"} <= paused
    resumed = {name for _, name, enabled in seen["seen"] if enabled}
    assert "boring_dispatch.repository._regex_budget" in resumed
    assert seen["enabled"]
    assert seen["frozen"] > 0
    # The same bytes as the CLI called as a library, which leaves the collector alone.
    library = _run(_LIBRARY, ["--config", str(CORPUS), *R1], ("import",))
    assert library["out"] == seen["out"]
    assert all(enabled for _, _, enabled in library["seen"])
    assert (library["enabled"], library["frozen"]) == (True, 0)


@pytest.mark.parametrize("already_off", [False, True])
@pytest.mark.skipif(not CORPUS.is_file(), reason="famulus corpus not found")
def test_the_cli_as_a_library_keeps_its_callers_collector_settings(already_off: bool) -> None:
    before = "import gc\ngc.disable()\n" if already_off else ""
    seen = _run(_LIBRARY, ["--config", str(CORPUS), *R1], ("import",), before)
    assert seen["rc"] == 0
    assert seen["enabled"] is not already_off
    assert seen["frozen"] == 0


def test_a_live_call_launches_its_gateway_with_the_collector_on(tmp_path: Path) -> None:
    config = write_setup_repository(tmp_path / "repo")
    argv = ["--config", str(config), "--caller-skill", "host", "plain.interface.echo"]
    seen = _run(_ENTRY, argv, ("subprocess.Popen", "os.posix_spawn", "os.fork", "os.exec"))
    assert seen["rc"] == 0
    launches = seen["seen"]
    assert launches  # the gateway was started
    assert all(enabled for _, _, enabled in launches)


@pytest.mark.parametrize(
    ("argv", "module"),
    [
        (["timeline", "--help"], "boring_dispatch.surfaces.cli._timeline"),
        (["names", "--help"], "boring_dispatch.surfaces.cli._commands"),
        (["setup", "--help"], "boring_dispatch.surfaces.cli._setup"),
    ],
)
def test_a_subcommand_is_imported_and_run_with_the_collector_on(
    argv: list[str], module: str
) -> None:
    seen = _run(_ENTRY, argv, ("import",))
    assert seen["rc"] == 0
    assert [enabled for _, name, enabled in seen["seen"] if name == module] == [True]
    assert seen["enabled"]
