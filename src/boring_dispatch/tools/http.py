"""A ready-made, safe HTTP GET tool for the Python table.

::

    from boring_dispatch import Registry
    from boring_dispatch.tools.http import HostAllowlist, HttpPolicy, http_get_tool

    POLICY = HttpPolicy(allow=HostAllowlist(["api.example.com", "*.docs.example.org"]))
    SUPPORT = Registry({"http_get": http_get_tool(POLICY)})

The host allowlist is checked before any connection and again for every
redirect (each hop is parsed, allowlisted, resolved and address-checked from
scratch). Only https is allowed unless an entry names http. Resolved addresses
must be public unless an exact entry allows private ones, and the connection
goes to the address that was checked (no second DNS lookup). Bodies are capped
(the excess is cut and ``truncated`` is set), as are headers, redirects, each
network wait and the whole fetch. The tool also cuts the body text to what
fits the observation cap once JSON-escaped (``max_body_json_bytes``). No
proxies from the environment, no cookies, no compression, GET only. Refusals
raise :class:`FetchError` (a ``ToolError``) with a fixed message per reason
that never contains the URL.

Not protected against: what an allowlisted server chooses to return, and
servers on an allowlisted host that are themselves open proxies.
"""

from __future__ import annotations

import json
import math
import ssl
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, final

from boring_dispatch.tools._allowlist import AllowEntry, HostAllowlist
from boring_dispatch.tools._transport import (
    Deadline,
    Resolver,
    TransportConfig,
    exchange,
    resolve_checked,
    system_resolver,
)
from boring_dispatch.tools._urls import FetchError, Reason, parse_url, redirect_target

if TYPE_CHECKING:
    from boring_dispatch.registry.registry import Tool

__all__ = [
    "AllowEntry",
    "FetchError",
    "HostAllowlist",
    "HttpPolicy",
    "HttpResponse",
    "Reason",
    "Resolver",
    "fetch",
    "http_get_tool",
    "system_resolver",
]

# Server-named charsets are looked up in this table, never passed to codecs by name.
_CHARSETS: Final = {
    "utf-8": "utf-8",
    "utf8": "utf-8",
    "us-ascii": "ascii",
    "ascii": "ascii",
    "iso-8859-1": "latin-1",
    "latin1": "latin-1",
    "latin-1": "latin-1",
    "windows-1252": "cp1252",
    "cp1252": "cp1252",
    "utf-16": "utf-16",
}


@final
@dataclass(frozen=True, slots=True)
class HttpPolicy:
    """What the HTTP tool may fetch and how much of it.

    Raises:
        TypeError: When ``allow`` is not a :class:`HostAllowlist`.
        ValueError: When a limit is not positive and finite, or out of range.
    """

    #: The only hosts that may be contacted.
    allow: HostAllowlist
    #: Body bytes kept; the rest is cut and ``truncated`` set.
    max_body_bytes: int = 32_768
    #: Total bytes of response header names and values.
    max_header_bytes: int = 32_768
    #: Redirects followed (0 refuses every redirect).
    max_redirects: int = 5
    #: Longest URL accepted, for the request and for each redirect target.
    max_url_length: int = 2048
    #: Longest wait for one network step: resolve, connect, TLS handshake, each read.
    timeout_s: float = 10.0
    #: The whole fetch, redirects included.
    deadline_s: float = 30.0
    #: Sent as the User-Agent header.
    user_agent: str = "boring-dispatch"
    #: A PEM file of CA certificates to trust *instead of* the system store (private CAs).
    ca_file: str | None = None
    #: Turns a host name into addresses (checked afterwards); replace to use another resolver.
    resolver: Resolver = field(default=system_resolver)
    #: The tool's body text, measured as the table measures an observation (compact
    #: ASCII-escaped JSON, quotes included), is cut to this and ``truncated`` set. A
    #: decoded byte can take up to 6 bytes of JSON (``\u0001``, ``\ufffd``), so this,
    #: not ``max_body_bytes``, bounds the observation: the default plus the headers and
    #: keys (under 4 KiB) fits the table's default 64 KiB cap for any body. Keep it at
    #: least 4 KiB under ``TableLimits.max_observation_bytes``.
    max_body_json_bytes: int = 56 << 10

    def __post_init__(self) -> None:
        if not isinstance(self.allow, HostAllowlist):
            raise TypeError("HttpPolicy.allow must be a HostAllowlist")
        sizes = (
            self.max_body_bytes,
            self.max_header_bytes,
            self.max_url_length,
            self.max_body_json_bytes,
        )
        if not all(isinstance(n, int) and n > 0 for n in sizes):
            raise ValueError("HttpPolicy sizes must be positive integers")
        if not (isinstance(self.max_redirects, int) and 0 <= self.max_redirects <= 20):
            raise ValueError("HttpPolicy.max_redirects must be from 0 to 20")
        times = (self.timeout_s, self.deadline_s)
        if not all(isinstance(t, int | float) and t > 0 and math.isfinite(t) for t in times):
            raise ValueError("HttpPolicy times must be positive and finite")
        if not (self.user_agent.isascii() and self.user_agent.isprintable()):
            raise ValueError("HttpPolicy.user_agent must be printable ASCII")
        if self.ca_file is not None:
            try:
                ssl.create_default_context(cafile=self.ca_file)
            except (OSError, ValueError) as exc:
                raise ValueError("HttpPolicy.ca_file is not a readable PEM file") from exc


@final
@dataclass(frozen=True, slots=True)
class HttpResponse:
    """The final (non-redirect) response of a fetch."""

    #: HTTP status code (any status that is not a followed redirect is returned).
    status: int
    #: A fixed safe subset of headers, lowercase names, values cleaned and capped.
    headers: tuple[tuple[str, str], ...]
    #: At most ``max_body_bytes`` of the body.
    body: bytes
    #: Whether the body was longer than ``max_body_bytes`` and was cut.
    truncated: bool
    #: How many redirects were followed to get here.
    redirects: int
    #: The charset the server declared, when it is one we know; else ``None``.
    charset: str | None

    def text(self) -> str:
        """The body decoded with the declared charset (UTF-8 when none), errors replaced."""
        return self.body.decode(self.charset or "utf-8", errors="replace")


def fetch(url: str, policy: HttpPolicy) -> HttpResponse:
    """GET ``url`` under ``policy``, following allowlisted redirects.

    Refused before any connection: URLs that are too long, not printable ASCII,
    or contain a backslash, a fragment, userinfo, a scheme other than http(s), an
    invalid host or port; hosts, schemes and ports not in the allowlist; hosts
    that resolve to any non-public address unless their exact entry allows it.
    Every redirect target is checked the same way before it is contacted.

    Args:
        url: An absolute ``http://`` or ``https://`` URL.
        policy: The allowlist and limits.

    Returns:
        The final response, its body capped at ``policy.max_body_bytes``.

    Raises:
        FetchError: For every refusal and every network or protocol failure; its
            ``reason`` names which, and its message never contains the URL.
    """
    deadline = Deadline(policy.deadline_s)
    config = TransportConfig(
        resolver=policy.resolver,
        timeout_s=policy.timeout_s,
        max_body_bytes=policy.max_body_bytes,
        max_header_bytes=policy.max_header_bytes,
        user_agent=policy.user_agent,
        ca_file=policy.ca_file,
    )
    target = parse_url(url, max_length=policy.max_url_length)
    hop = 0
    while True:
        entry = policy.allow.check(target, hop=hop)
        addresses = resolve_checked(
            target, config, deadline, allow_private=entry.allow_private, hop=hop
        )
        result = exchange(target, addresses, config, deadline, hop)
        if result.location is None:
            return HttpResponse(
                status=result.status,
                headers=result.headers,
                body=result.body,
                truncated=result.truncated,
                redirects=hop,
                charset=_CHARSETS.get(result.charset or ""),
            )
        if hop == policy.max_redirects:
            raise FetchError("too_many_redirects", hop=hop)
        hop += 1
        target = redirect_target(target, result.location, max_length=policy.max_url_length, hop=hop)


def http_get_tool(policy: HttpPolicy, *, description: str | None = None) -> Tool:
    """A table row that fetches allowlisted URLs: ``http_get(url: str) -> dict``.

    The handler returns ``{"status", "headers", "body", "truncated", "redirects"}``
    (``headers`` a dict of the safe subset, ``body`` decoded text) and raises
    :class:`FetchError` (code ``tool_error``) for every refusal or failure. The
    body text is cut (at a character) to ``max_body_json_bytes`` of escaped JSON
    and ``truncated`` set, so with the default policy and table limits every
    response fits the observation cap, whatever its script (Cyrillic, CJK, emoji,
    control characters or undecodable bytes).

    Args:
        policy: The allowlist and limits; shared by every call of the tool.
        description: Replaces the default description, which lists the allowed hosts.

    Returns:
        A :class:`boring_dispatch.Tool` to put in a :class:`boring_dispatch.Registry`.
    """
    from boring_dispatch.registry.registry import Tool  # lazy: the table imports pydantic

    def http_get(url: str) -> dict[str, object]:
        response = fetch(url, policy)
        body, cut = _fit_json(response.text(), policy.max_body_json_bytes)
        return {
            "status": response.status,
            "headers": dict(response.headers),
            "body": body,
            "truncated": response.truncated or cut,
            "redirects": response.redirects,
        }

    default = (
        "Fetch a web resource with HTTP GET and return its status, a few headers and "
        f"its text (at most {policy.max_body_bytes} bytes, cut further when it is long "
        f"once escaped). Only these hosts are allowed: {policy.allow.describe()}."
    )
    return Tool(http_get, description=description or default)


_JSON: Final = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _fit_json(text: str, budget: int) -> tuple[str, bool]:
    """The longest prefix of ``text`` whose JSON string is at most ``budget`` bytes; cut or not.

    Measured as the table measures observations (compact ASCII JSON), so the
    size of the escapes counts: 6 bytes for ``\\u0430``, 12 for an emoji.
    """
    if len(_JSON.encode(text)) <= budget:
        return text, False
    fits, too_long = 0, len(text)  # text[:fits] fits; text[:too_long] does not
    while too_long - fits > 1:
        middle = (fits + too_long) // 2
        if len(_JSON.encode(text[:middle])) <= budget:
            fits = middle
        else:
            too_long = middle
    return text[:fits], True
