"""Strict URL and host parsing for the HTTP tool, and its one error type.

The parser accepts a deliberately small language: ``http`` or ``https``, an
ASCII host name or IP literal, an optional port, and an RFC 3986 path and
query. Everything a lenient parser would repair or reinterpret is refused
instead: userinfo, fragments, backslashes, whitespace and control characters,
non-ASCII text, malformed percent escapes, zone identifiers, and numeric hosts
that are not a canonical dotted quad (``2130706433``, ``0x7f.1``, ``127.1``).

An internationalised host is given in its ASCII form: every ``xn--`` label
must be the canonical Punycode of a label that IDNA 2008 accepts (checked with
the ``idna`` package, the same rules the allowlist uses), so a host the
allowlist could never have named is refused as ``bad_host``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address
from typing import Final, Literal
from urllib.parse import urljoin

from boring_dispatch.errors import ToolError

__all__ = [
    "DEFAULT_PORTS",
    "FetchError",
    "Reason",
    "Target",
    "canonical_host",
    "parse_url",
    "redirect_target",
]

Reason = Literal[
    "url_too_long",
    "url_characters",
    "url_fragment",
    "url_malformed",
    "scheme_not_supported",
    "userinfo",
    "bad_host",
    "bad_port",
    "bad_path",
    "host_not_allowed",
    "scheme_not_allowed",
    "port_not_allowed",
    "address_not_allowed",
    "resolve_failed",
    "connect_failed",
    "tls_failed",
    "timeout",
    "deadline",
    "too_many_redirects",
    "redirect_without_location",
    "headers_too_large",
    "bad_response",
    "connection_lost",
]

# One fixed message per reason: messages never contain the URL, host or query.
_MESSAGES: Final[dict[Reason, str]] = {
    "url_too_long": "URL is longer than the limit",
    "url_characters": "URL contains a character outside printable ASCII or a backslash",
    "url_fragment": "URL fragments are not supported",
    "url_malformed": "URL is not of the form scheme://host[:port]/path",
    "scheme_not_supported": "only http and https URLs are supported",
    "userinfo": "URL must not contain credentials (user@host)",
    "bad_host": "URL host is not a valid host name or IP address",
    "bad_port": "URL port is not a number from 1 to 65535",
    "bad_path": "URL path or query contains a character that must be percent-encoded",
    "host_not_allowed": "host not in allowlist",
    "scheme_not_allowed": "scheme not allowed for this host (https only unless allowlisted)",
    "port_not_allowed": "port not allowed for this host",
    "address_not_allowed": "host resolves to a non-public address",
    "resolve_failed": "host name could not be resolved",
    "connect_failed": "could not connect to the host",
    "tls_failed": "TLS handshake or certificate verification failed",
    "timeout": "the server did not answer in time",
    "deadline": "the request exceeded its overall time limit",
    "too_many_redirects": "too many redirects",
    "redirect_without_location": "redirect response without a usable Location header",
    "headers_too_large": "response headers exceed the limit",
    "bad_response": "the server sent a malformed HTTP response",
    "connection_lost": "the connection closed before the response was complete",
}

DEFAULT_PORTS: Final[dict[str, int]] = {"http": 80, "https": 443}

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
_IPV6_TEXT = re.compile(r"[0-9a-f:.]+")
_PORT = re.compile(r"[0-9]{1,5}")
_PATH = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


class FetchError(ToolError):
    """The HTTP tool refused a URL or the fetch failed in an expected way.

    ``code`` stays ``tool_error``; ``reason`` is a stable slug for programs and
    tests, and the message is a fixed sentence per reason that never contains
    the URL, its host or its query.
    """

    def __init__(self, reason: Reason, *, hop: int = 0) -> None:
        message = _MESSAGES[reason]
        super().__init__(f"redirect {hop}: {message}" if hop else message)
        #: Stable identity of the refusal (a key of the reason table).
        self.reason: Final = reason
        #: 0 for the URL as given, n for the n-th redirect target.
        self.hop: Final = hop


@dataclass(frozen=True, slots=True)
class Target:
    """One validated request target."""

    #: ``"http"`` or ``"https"``.
    scheme: str
    #: Lowercase ASCII host name without a trailing dot, or a canonical IP literal.
    host: str
    #: Explicit port, or the scheme's default.
    port: int
    #: Origin-form request target: ``/path?query``.
    path: str
    #: The address when ``host`` is an IP literal.
    literal: IPv4Address | IPv6Address | None

    def url(self) -> str:
        """The canonical URL (for joining redirects; never put in messages or logs)."""
        host = f"[{self.host}]" if isinstance(self.literal, IPv6Address) else self.host
        return f"{self.scheme}://{host}:{self.port}{self.path}"


def canonical_host(text: str) -> tuple[str, IPv4Address | IPv6Address | None] | None:
    """Canonicalise an ASCII host (IPv6 without brackets); ``None`` when it is invalid."""
    lowered = text.lower()
    if ":" in lowered:
        return _ipv6_host(lowered)
    lowered = lowered.removesuffix(".")
    labels = lowered.split(".")
    if len(lowered) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return None
    if any(label.startswith("xn--") and not _idna2008_a_label(label) for label in labels):
        return None
    if not _NUMERIC_LABEL.fullmatch(labels[-1]):
        return lowered, None
    # A host ending in a number is an IPv4 address to every resolver: only the
    # canonical dotted quad is accepted, never 127.1, 0x7f.0.0.1 or 2130706433.
    try:
        v4 = IPv4Address(lowered)
    except ValueError:
        return None
    return (str(v4), v4) if str(v4) == lowered else None


def _idna2008_a_label(label: str) -> bool:
    """Whether a lowercase ``xn--`` label is the canonical A-label of a valid IDNA 2008 label."""
    import idna  # lazy: only hosts with an xn-- label need it

    try:
        idna.ulabel(label)
    except UnicodeError:  # idna.IDNAError and its subclasses
        return False
    return True


def _ipv6_host(text: str) -> tuple[str, IPv6Address] | None:
    if not _IPV6_TEXT.fullmatch(text):
        return None  # zone identifiers ("%eth0") and anything else odd
    try:
        v6 = IPv6Address(text)
    except ValueError:
        return None
    return v6.compressed, v6


def parse_url(text: str, *, max_length: int, hop: int = 0) -> Target:
    """Parse and canonicalise an absolute http(s) URL.

    Raises:
        FetchError: For every URL outside the small accepted language (see the module doc).
    """
    if len(text) > max_length:
        raise FetchError("url_too_long", hop=hop)
    if not all(0x21 <= ord(char) <= 0x7E for char in text) or "\\" in text:
        raise FetchError("url_characters", hop=hop)
    if "#" in text:
        raise FetchError("url_fragment", hop=hop)
    scheme_match = _SCHEME.match(text)
    if scheme_match is None:
        raise FetchError("url_malformed", hop=hop)
    scheme = scheme_match.group(1).lower()
    if scheme not in DEFAULT_PORTS:
        raise FetchError("scheme_not_supported", hop=hop)
    rest = text[scheme_match.end() :]
    split_at = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, path = rest[:split_at], rest[split_at:]
    if "@" in authority:
        raise FetchError("userinfo", hop=hop)
    host_text, port_text = _split_authority(authority, hop)
    host = canonical_host(host_text)
    if host is None:
        raise FetchError("bad_host", hop=hop)
    port = DEFAULT_PORTS[scheme] if port_text is None else _port(port_text, hop)
    if path[:1] != "/":
        path = "/" + path
    if not _PATH.fullmatch(path) or _BAD_PERCENT.search(path):
        raise FetchError("bad_path", hop=hop)
    return Target(scheme=scheme, host=host[0], port=port, path=path, literal=host[1])


def redirect_target(base: Target, location: str, *, max_length: int, hop: int) -> Target:
    """Resolve a ``Location`` header against ``base`` and validate the result in full.

    Raises:
        FetchError: When the location is unusable or the result fails :func:`parse_url`.
    """
    if not location or len(location) > max_length:
        raise FetchError("redirect_without_location", hop=hop)
    if not all(0x21 <= ord(char) <= 0x7E for char in location) or "\\" in location:
        # Checked before joining: urljoin would silently drop or repair such characters.
        raise FetchError("url_characters", hop=hop)
    location = location.partition("#")[0]  # a fragment is never sent; the server chose it
    return parse_url(urljoin(base.url(), location), max_length=max_length, hop=hop)


def _split_authority(authority: str, hop: int) -> tuple[str, str | None]:
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            raise FetchError("bad_host", hop=hop)
        inner, after = authority[1:close], authority[close + 1 :]
        if ":" not in inner:
            raise FetchError("bad_host", hop=hop)  # brackets are for IPv6 only
        if not after:
            return inner, None
        if not after.startswith(":"):
            raise FetchError("url_malformed", hop=hop)
        return inner, after[1:]
    host_text, colon, port_text = authority.partition(":")
    if not host_text:
        raise FetchError("bad_host", hop=hop)
    return host_text, port_text if colon else None


def _port(text: str, hop: int) -> int:
    if not _PORT.fullmatch(text) or not 1 <= int(text) <= 65535:
        raise FetchError("bad_port", hop=hop)
    return int(text)
