"""`make demo`, part 2: live calls on the example repository (examples/repository).

Each step runs the real ``dispatcher`` CLI as a subprocess
(``python -m boring_dispatch --config <abs>/officina.toml ...``) and prints
what came back, then one or two lines on what happened. The timeout step uses
the Python API, because the CLI's own time limit is deliberately long.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent / "repository"
CONFIG = REPOSITORY / "officina.toml"
#: Bound on every subprocess of the demo.
_WAIT_S = 60


def _dispatcher(*args: str) -> subprocess.CompletedProcess[str]:
    shown = " ".join(shlex.quote(a) for a in args)
    print(f"$ dispatcher --config .../repository/officina.toml {shown}")
    return subprocess.run(
        [sys.executable, "-m", "boring_dispatch", "--config", str(CONFIG), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=_WAIT_S,
        check=False,
    )


def _quote(text: str) -> None:
    for line in text.splitlines():
        # The advisory certification warning appears on every live call; skip it here.
        if not line.startswith("warning: certification-status-unavailable"):
            print(f"  | {line}")


def _say(*lines: str) -> None:
    for line in lines:
        print(f"  -> {line}")


def _success() -> bool:
    done = _dispatcher("--caller-skill", "notes", "notes._rtx.interface.list-notes")
    _quote(done.stdout)
    _say(
        f"exit {done.returncode}. A level-0 tool: it reads files inside its own module",
        "and prints machine-readable names, one per line.",
    )
    return done.returncode == 0


def _dry_run() -> bool:
    done = _dispatcher(
        "--caller-skill",
        "journal",
        "--dry-run",
        "journal._rtx.interface.add-entry",
        "garden",
        "water the roses",
    )
    if done.returncode != 0:
        _quote(done.stderr)
        return False
    payload = json.loads(done.stdout)
    cwd = Path(payload["cwd"]).relative_to(REPOSITORY)
    _quote(
        f"command: {payload['command']}\n"
        f"cwd: <repository>/{cwd}\n"
        f"security_level: {payload['security_level']}\n"
        f"output_audiences: {payload['output_audiences']}\n"
        f"stdin: {payload['stdin']}"
    )
    _say(
        "nothing ran: the route was authorized and compiled only. Level 1 because the",
        "one file it writes (data/<topic>.txt) is inside journal._rtx's owns_filesystem.",
    )
    return bool(payload["security_level"] == 1)


def _denial() -> bool:
    done = _dispatcher(
        "--caller-skill",
        "journal",
        "--error-format",
        "json",
        "notes._rtx.interface.read-note",
        "today",
    )
    _quote(done.stderr)
    _say(
        f"exit {done.returncode}. The notes skill's route names only `planner` for read-note,",
        "so `journal` is refused before any gateway code starts.",
    )
    return done.returncode == 2 and "dispatcher.unauthorized_caller" in done.stderr


def _nested() -> bool:
    done = _dispatcher("--caller-skill", "planner", "planner._rtx.interface.morning-brief")
    _quote(done.stdout)
    _quote(done.stderr)
    _say(
        f"exit {done.returncode}. planner._rtx called notes read-note and textkit word-count",
        "itself: each nested call was authorized with planner._rtx as the caller.",
    )
    return done.returncode == 0


def _timeout() -> bool:
    from boring_dispatch import ExecLimits, Repository, RouteRequest

    print(">>> Repository.open(CONFIG).invoke(wait 10, limits=ExecLimits(timeout_s=1.0))")
    request = RouteRequest(caller="timer", target="timer._rtx.interface.wait", argv=("10",))
    started = time.monotonic()
    result = Repository.open(CONFIG).invoke(request, limits=ExecLimits(timeout_s=1.0))
    elapsed = time.monotonic() - started
    _quote(f"timed_out={result.timed_out} exit_code={result.exit_code} stdout={result.stdout!r}")
    _say(
        f"the gateway asked for 10 s; after {elapsed:.1f} s its whole process group was",
        "killed and the result says so explicitly.",
    )
    return result.timed_out


def main() -> int:
    """Run the five steps; return 0 when each behaved as described, else 1."""
    steps: tuple[tuple[str, Callable[[], bool]], ...] = (
        ("A successful call", _success),
        ("A dry run", _dry_run),
        ("A denial", _denial),
        ("A nested call", _nested),
        ("A timeout", _timeout),
    )
    failed = 0
    for title, step in steps:
        print(f"\n--- {title}")
        if not step():
            print("  !! this step did not behave as described")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
