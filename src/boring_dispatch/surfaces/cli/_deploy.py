"""``dispatcher deploy``: write a reviewed golden file's names as a surface's rows.

::

    dispatcher deploy --registry pkg.module:NAME --golden support.golden \\
        --surface support --database sqlite:////srv/dispatch/tables.db [--deployed-by WHO]

Every name must be an enabled tool of the code's table; the rows of the
surface are replaced in one transaction (see :mod:`boring_dispatch.registry.deployed`).
Exit 0 and one line on stdout; 2 with ``error: ...`` on any refusal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from boring_dispatch.errors import DispatchError
from boring_dispatch.surfaces.cli._common import argument_parser, report_error, report_file_error

__all__ = ["run"]


def parser() -> argparse.ArgumentParser:
    """The options of ``dispatcher deploy``."""
    parser = argument_parser(
        prog="dispatcher deploy",
        description="Make a golden file's names the enabled set of a surface, in a database.",
    )
    parser.add_argument("--registry", required=True, metavar="pkg.module:NAME")
    parser.add_argument("--golden", required=True, metavar="FILE")
    parser.add_argument("--surface", required=True, metavar="NAME")
    parser.add_argument(
        "--database", required=True, metavar="URL", help="sqlite:///... or postgresql://..."
    )
    parser.add_argument("--deployed-by", metavar="WHO", help="default: the login name")
    parser.add_argument("--error-format", choices=("text", "json"), default="text")
    return parser


def run(argv: Sequence[str]) -> int:
    """Deploy; the exit status (a refusal is one error line, text or JSON, and status 2)."""
    options = parser().parse_args(list(argv))
    try:
        return _deploy(options)
    except DispatchError as error:
        report_error(error, options.error_format, sys.stderr)
        return error.exit_code


def _deploy(options: argparse.Namespace) -> int:
    from boring_dispatch.golden import FileRefused, read_golden
    from boring_dispatch.registry.deployed import deploy
    from boring_dispatch.registry.spec import load_registry

    code = load_registry(options.registry)
    try:
        names = read_golden(Path(options.golden))
    except (OSError, FileRefused) as error:
        report_file_error("golden", error, options.error_format)
        return 2
    who = options.deployed_by or _login()
    count = deploy(code, names, surface=options.surface, database=options.database, deployed_by=who)
    sys.stdout.write(f"deployed {count} tools to surface {options.surface} by {who}\n")
    return 0


def _login() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
