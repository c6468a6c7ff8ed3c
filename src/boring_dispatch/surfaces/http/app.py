"""The read-only allowlist endpoint: one JSON document and its plain HTML view.

::

    GET /allowlist.json   the allowlist (see :func:`table_allowlist` and
                          :func:`~boring_dispatch.repository.offline.allowlist.repository_allowlist`)
    GET /                 the same data as a plain HTML page

Built on Starlette, which the MCP SDK already brings. The document is made
once, when the app is built; nothing a request sends changes it, and no other
path or method exists (404, 405).

Every request needs the token: ``Authorization: Bearer <token>``, or, for a
browser, HTTP Basic with the token as the password (any user name). The
comparison is constant-time (:func:`hmac.compare_digest`). A refusal is
``401`` with a fixed body and never says which part was wrong.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import html
import json
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from boring_dispatch.registry.registry import Registry

__all__ = ["MIN_TOKEN_CHARS", "build_app", "render_html", "table_allowlist"]

#: The shortest token accepted (a generated one has 43 characters).
MIN_TOKEN_CHARS: Final = 16
_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
_App = Callable[[_Scope, _Receive, _Send], Awaitable[None]]
#: On every answer: nothing cached, nothing sniffed, no script, no framing.
_HEADERS: Final = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
}


def table_allowlist(registry: Registry, *, deployed_from: str | None = None) -> dict[str, object]:
    """``{"kind": "table", "surface", "tools": [{"name", "description", "schema_hash", ...}]}``."""
    from boring_dispatch.registry.deployed import schema_hash

    tools = [
        {
            "name": name,
            "description": tool.description,
            "schema_hash": schema_hash(registry, name),
            "confirm": tool.confirm,
            "audience": tool.audience,
            "fixture": tool.fixture is not None,
        }
        for name, tool in sorted(registry.tools.items())
    ]
    document: dict[str, object] = {"kind": "table", "surface": registry.name, "tools": tools}
    if deployed_from is not None:
        document["deployed_surface"] = deployed_from
    return document


def build_app(
    document: dict[str, object], token: str, *, hosts: Sequence[str] | None = None
) -> Starlette:
    """The ASGI app serving ``document``; every request must carry ``token``.

    ``hosts``: the only ``Host`` header names accepted (without the port), for a
    loopback bind (``127.0.0.1``, ``localhost``, ``[::1]``): a page elsewhere
    that rebinds its own name to 127.0.0.1 is refused before the token is looked at.

    Raises:
        ValueError: the token is shorter than :data:`MIN_TOKEN_CHARS` or not ASCII.
    """
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Route

    if len(token) < MIN_TOKEN_CHARS or not token.isascii() or not token.isprintable():
        raise ValueError(f"the token must be at least {MIN_TOKEN_CHARS} printable ASCII characters")
    body = json.dumps(document, indent=2, sort_keys=True).encode("utf-8")
    page = render_html(document).encode("utf-8")

    async def as_json(_: object) -> Response:
        return Response(body, media_type="application/json", headers=_HEADERS)

    async def as_html(_: object) -> Response:
        return HTMLResponse(page, headers=_HEADERS)

    return Starlette(
        routes=[
            Route("/allowlist.json", as_json, methods=["GET"]),
            Route("/", as_html, methods=["GET"]),
        ],
        middleware=[
            Middleware(_TokenGate, token=token.encode("ascii")),
            Middleware(_HostGate, hosts=None if hosts is None else frozenset(hosts)),
        ],
    )


class _HostGate:
    """Refuse (421) a request whose ``Host`` is not one of ``hosts`` (``None``: any)."""

    def __init__(self, app: _App, hosts: frozenset[str] | None) -> None:
        self._app = app
        self._hosts = hosts

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] == "http" and self._hosts is not None:
            given = [v for n, v in scope.get("headers", ()) if n == b"host"]
            name = _host_name(given[0].decode("latin-1")) if len(given) == 1 else ""
            if name not in self._hosts:
                await _refuse(send, 421, b"this server answers its loopback names only\n", ())
                return
        await self._app(scope, receive, send)


def _host_name(value: str) -> str:
    """``127.0.0.1:8787`` -> ``127.0.0.1``, ``[::1]:8787`` -> ``[::1]``, lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else ""
    return value.rsplit(":", 1)[0] if ":" in value else value


async def _refuse(
    send: _Send, status: int, body: bytes, extra: Sequence[tuple[bytes, bytes]]
) -> None:
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"cache-control", b"no-store"),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _TokenGate:
    """Refuse (401) every HTTP request that does not carry the token."""

    def __init__(self, app: _App, token: bytes) -> None:
        self._app = app
        self._token = token

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] == "http" and not self._admits(scope):
            challenges = (
                (b"www-authenticate", b'Basic realm="dispatcher", charset="UTF-8"'),
                (b"www-authenticate", b"Bearer"),
            )
            await _refuse(send, 401, b"a valid token is required\n", challenges)
            return
        await self._app(scope, receive, send)

    def _admits(self, scope: _Scope) -> bool:
        given = [value for name, value in scope.get("headers", ()) if name == b"authorization"]
        if len(given) != 1:
            return False
        scheme, _, credential = given[0].partition(b" ")
        if scheme.lower() == b"bearer":
            offered = credential.strip()
        elif scheme.lower() == b"basic":
            try:
                decoded = base64.b64decode(credential.strip(), validate=True)
            except (binascii.Error, ValueError):
                return False
            offered = decoded.partition(b":")[2]
        else:
            return False
        return hmac.compare_digest(offered, self._token)


def render_html(document: dict[str, object]) -> str:
    """A plain page: one table of the allowlist, every value escaped, no script."""
    rows: list[list[str]]
    if document.get("kind") == "table":
        title = f"Table {document.get('surface')}"
        header = ["name", "description", "schema hash", "confirm", "audience", "fixture"]
        rows = [
            [
                str(t[k])
                for k in ("name", "description", "schema_hash", "confirm", "audience", "fixture")
            ]
            for t in _items(document.get("tools"))
        ]
    else:
        title = "Repository exports"
        header = ["interface", "version", "level", "audiences", "allowed callers", "description"]
        rows = [_export_row(e) for e in _items(document.get("exports"))]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>"
        f'<table id="allowlist"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        "</body></html>\n"
    )


def _items(value: object) -> list[dict[str, object]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _export_row(export: dict[str, object]) -> list[str]:
    if "error" in export:
        return [str(export.get("interface")), "", "", "", "", f"error: {export['error']}"]
    access = export.get("access")
    callers = _callers_text(access) if isinstance(access, dict) else ""
    audiences = export.get("output_audiences")
    shown = (
        ", ".join(f"{k}={v}" for k, v in sorted(audiences.items()))
        if isinstance(audiences, dict)
        else ""
    )
    level = export.get("security_level")
    return [
        str(export.get("interface")),
        str(export.get("version")),
        "unavailable" if level is None else str(level),
        shown,
        callers,
        str(export.get("description", "")),
    ]


def _callers_text(access: dict[str, object]) -> str:
    if access.get("all_modules") is True:
        return "all modules"
    listed = access.get("allowed_callers")
    return ", ".join(str(c) for c in listed) if isinstance(listed, list) else ""
