"""``dispatcher serve``: the allowlist as JSON and HTML over loopback HTTP, behind a token.

::

    dispatcher serve --registry pkg.module:NAME [--database URL --surface S]
    dispatcher serve --config /abs/officina.toml
        [--host 127.0.0.1] [--port 8787] [--token-file FILE] [--allow-remote]

The token is read from ``--token-file`` (its first line) or generated and
printed on stderr at start, with the URL (``--port 0`` picks a free port).
A host that is not a loopback address is refused unless ``--allow-remote``.
With ``--database`` and ``--surface``, the served table is the deployed one.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from collections.abc import Sequence
from pathlib import Path

from boring_dispatch._quote import shown
from boring_dispatch.errors import DispatchError, RegistryInvalid
from boring_dispatch.surfaces.cli._common import argument_parser, report_error, report_file_error

__all__ = ["run"]

_MAX_TOKEN_FILE = 4096
#: The Host names a loopback server answers (any port).
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def parser() -> argparse.ArgumentParser:
    """The options of ``dispatcher serve``."""
    parser = argument_parser(
        prog="dispatcher serve",
        description="Serve the allowlist (JSON at /allowlist.json, HTML at /), read-only.",
    )
    table = parser.add_mutually_exclusive_group(required=True)
    table.add_argument("--registry", metavar="pkg.module:NAME")
    table.add_argument("--config", "--repository-config", dest="config", metavar="PATH")
    parser.add_argument("--database", metavar="URL", help="with --surface: the deployed table")
    parser.add_argument("--surface", metavar="NAME")
    parser.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (loopback)")
    parser.add_argument("--port", type=int, default=8787, help="0: any free port")
    parser.add_argument("--token-file", metavar="FILE", help="default: generate and print one")
    parser.add_argument("--allow-remote", action="store_true", help="allow a non-loopback host")
    parser.add_argument("--error-format", choices=("text", "json"), default="text")
    return parser


def run(argv: Sequence[str]) -> int:
    """Serve until interrupted; the exit status."""
    options = parser().parse_args(list(argv))
    try:
        return _serve(options)
    except DispatchError as error:
        report_error(error, options.error_format, sys.stderr)
        return error.exit_code


def _serve(options: argparse.Namespace) -> int:
    if not options.allow_remote and not _loopback(options.host):
        sys.stderr.write(
            f"error: {shown(options.host)} is not a loopback address;"
            " pass --allow-remote to serve it\n"
        )
        return 2
    if not 0 <= options.port <= 65535:
        sys.stderr.write("error: --port must be 0 to 65535\n")
        return 2
    token = _token(options.token_file, options.error_format)
    if token is None:
        return 2
    document = _document(options)
    from boring_dispatch.surfaces.http.app import build_app

    own = f"[{options.host}]" if ":" in options.host else options.host
    hosts = None if options.allow_remote else (*_LOOPBACK_NAMES, own.lower())
    app = build_app(document, token, hosts=hosts)
    return _listen(
        app, options.host, options.port, generated=options.token_file is None, token=token
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _token(path: str | None, error_format: str) -> str | None:
    if path is None:
        import secrets

        return secrets.token_urlsafe(32)
    from boring_dispatch._files import FileRefused, read_capped
    from boring_dispatch.surfaces.http.app import MIN_TOKEN_CHARS

    try:
        data = read_capped(Path(path), _MAX_TOKEN_FILE)
    except (OSError, FileRefused) as error:
        report_file_error("token", error, error_format)
        return None
    lines = data.decode("ascii", errors="replace").splitlines()
    token = lines[0].strip() if lines else ""
    if len(token) < MIN_TOKEN_CHARS or not token.isascii() or not token.isprintable():
        sys.stderr.write(
            f"error: the token file's first line must be at least {MIN_TOKEN_CHARS} "
            "printable ASCII characters\n"
        )
        return None
    return token


def _document(options: argparse.Namespace) -> dict[str, object]:
    if options.config:
        if options.database or options.surface:
            raise RegistryInvalid("--database and --surface need --registry")
        from boring_dispatch.repository.offline.allowlist import repository_allowlist
        from boring_dispatch.repository.repository import Repository

        return repository_allowlist(Repository.open(options.config))
    from boring_dispatch.registry.spec import load_registry
    from boring_dispatch.surfaces.http.app import table_allowlist

    registry = load_registry(options.registry)
    if (options.database is None) != (options.surface is None):
        raise RegistryInvalid("--database and --surface go together")
    if options.database is not None:
        from boring_dispatch.registry.deployed import load_deployed

        registry = load_deployed(registry, surface=options.surface, database=options.database)
        return table_allowlist(registry, deployed_from=options.surface)
    return table_allowlist(registry)


def _listen(app: object, host: str, port: int, *, generated: bool, token: str) -> int:
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except (OSError, UnicodeError, TypeError, ValueError) as error:
        # TypeError/UnicodeError: a host name that cannot be encoded (a bidi override...).
        listener.close()
        reason = error.strerror if isinstance(error, OSError) else None
        sys.stderr.write(
            f"error: cannot listen on {shown(host)} port {port}: {reason or 'not a host name'}\n"
        )
        return 2
    listener.listen(64)
    bound = listener.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    if generated:
        sys.stderr.write(f"token: {token}\n")
    sys.stderr.write(f"serving http://{shown_host}:{bound}/ (allowlist.json, read-only)\n")
    sys.stderr.flush()
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")  # type: ignore[arg-type]
    uvicorn.Server(config).run(sockets=[listener])
    return 0
