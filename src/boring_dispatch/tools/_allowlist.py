"""The host allowlist of the HTTP tool: which scheme, host and port may be fetched.

An entry names one host exactly (case-insensitive, trailing dot ignored; a
Unicode name is mapped by UTS 46 and encoded by IDNA 2008 with the ``idna``
package, so ``faß.de`` is ``xn--fa-hia.de``, never ``fass.de``, and a name
IDNA 2008 refuses, such as one with a stray zero-width joiner, is refused)
or, with a leading ``*.``, every proper subdomain of one domain of at least
two labels. ``*.example.com`` matches ``api.example.com`` and
``a.b.example.com``; it never matches ``example.com``, ``evilexample.com`` or
``example.com.evil.net``. Entries allow https on the default port unless they
say otherwise, and allow private addresses only when they say so by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, final

from boring_dispatch.tools._urls import DEFAULT_PORTS, FetchError, Target, canonical_host

__all__ = ["AllowEntry", "HostAllowlist"]


@final
@dataclass(frozen=True, slots=True)
class AllowEntry:
    """One allowed host (or ``*.domain``), with its schemes, port and address policy.

    Raises:
        ValueError: At construction, for an invalid host, port or scheme, a wildcard
            anywhere but as the whole first label, a wildcard over a single label
            (``*.com``) or an IP address, or a wildcard entry that allows private
            addresses.
    """

    #: Host name (Unicode is IDNA-encoded), IP address, or ``*.`` followed by a domain.
    host: str
    #: Allowed port; ``None`` means the default port of the URL's scheme.
    port: int | None = None
    #: Allowed schemes, a non-empty subset of ``{"http", "https"}``.
    schemes: frozenset[str] = field(default=frozenset({"https"}))
    #: Allow loopback, private and other non-public addresses for this exact host.
    allow_private: bool = False

    def __post_init__(self) -> None:
        schemes = frozenset(self.schemes)
        if not schemes or not schemes <= DEFAULT_PORTS.keys():
            raise ValueError("allowlist schemes must be a non-empty subset of {http, https}")
        wildcard = self.host.startswith("*.")
        host = _entry_host(self.host[2:] if wildcard else self.host, wildcard=wildcard)
        if wildcard and self.allow_private:
            raise ValueError("a wildcard allowlist entry cannot allow private addresses")
        port = self.port
        if port is not None and not (isinstance(port, int) and 1 <= port <= 65535):
            raise ValueError("allowlist port must be a number from 1 to 65535")
        if port is not None and {DEFAULT_PORTS[s] for s in schemes} == {port}:
            port = None  # "host:443" and "host" are the same entry
        # Canonical values make equality and duplicate detection exact.
        object.__setattr__(self, "host", f"*.{host}" if wildcard else host)
        object.__setattr__(self, "port", port)
        object.__setattr__(self, "schemes", schemes)

    @classmethod
    def parse(cls, text: str, *, allow_private: bool = False) -> AllowEntry:
        """Build an entry from ``[scheme://]host[:port]``.

        ``"api.example.com"`` allows https on port 443; ``"api.example.com:8443"``
        https on 8443; ``"http://127.0.0.1:8123"`` http (only) on 8123;
        ``"*.example.com"`` https to every proper subdomain. IPv6 addresses take
        brackets: ``"http://[::1]:8123"``.

        Raises:
            ValueError: When the text is not of that form (see the class doc).
        """
        scheme, sep, rest = text.partition("://")
        schemes = frozenset({scheme.lower()}) if sep else frozenset({"https"})
        if not sep:
            rest = text
        rest = rest.removesuffix("/")
        if any(char in rest for char in "/?#@\\ "):
            raise ValueError("an allowlist entry is [scheme://]host[:port], nothing more")
        if rest.startswith("["):
            host, close, after = rest[1:].partition("]")
            if not close or ":" not in host or (after and not after.startswith(":")):
                raise ValueError("malformed bracketed IPv6 allowlist entry")
            colon, port_text = after[:1], after[1:]
        elif rest.count(":") > 1:
            host, colon, port_text = rest, "", ""  # a bare IPv6 address
        else:
            host, colon, port_text = rest.partition(":")
        port = None
        if colon:
            if not (port_text.isascii() and port_text.isdecimal()):
                raise ValueError("allowlist port must be a number from 1 to 65535")
            port = int(port_text)
        return cls(host=host, port=port, schemes=schemes, allow_private=allow_private)

    @property
    def wildcard(self) -> bool:
        """Whether the entry matches subdomains (``*.example.com``) instead of one host."""
        return self.host.startswith("*.")

    def matches_host(self, host: str) -> bool:
        """Whether a canonical host (see ``Target.host``) is covered by this entry."""
        if self.wildcard:
            return host.endswith(self.host[1:])  # ".example.com": a whole-label suffix
        return host == self.host

    def __str__(self) -> str:
        scheme = "http(s)" if len(self.schemes) == 2 else next(iter(self.schemes))
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port is None else f":{self.port}"
        return f"{scheme}://{host}{port}"


@final
class HostAllowlist:
    """An immutable set of :class:`AllowEntry`; the HTTP tool's only way out.

    Raises:
        ValueError: At construction, when it is empty or two entries share host and port.
        TypeError: When given a single string instead of an iterable of entries.
    """

    __slots__ = ("_entries",)

    def __init__(self, entries: Iterable[str | AllowEntry]) -> None:
        if isinstance(entries, str):
            raise TypeError("HostAllowlist takes an iterable of entries, not one string")
        parsed = tuple(e if isinstance(e, AllowEntry) else AllowEntry.parse(e) for e in entries)
        if not parsed:
            raise ValueError("an empty allowlist allows nothing; refusing to build it")
        keys = [(entry.host, entry.port) for entry in parsed]
        if len(set(keys)) != len(keys):
            raise ValueError("two allowlist entries name the same host and port")
        self._entries: Final = parsed

    @property
    def entries(self) -> tuple[AllowEntry, ...]:
        """The entries, in the order given."""
        return self._entries

    def check(self, target: Target, *, hop: int = 0) -> AllowEntry:
        """Return the entry that allows ``target``, preferring an exact host over a wildcard.

        Raises:
            FetchError: ``host_not_allowed``, ``scheme_not_allowed`` or ``port_not_allowed``.
        """
        candidates = [e for e in self._entries if e.matches_host(target.host)]
        if not candidates:
            raise FetchError("host_not_allowed", hop=hop)
        candidates = [e for e in candidates if target.scheme in e.schemes]
        if not candidates:
            raise FetchError("scheme_not_allowed", hop=hop)
        default = DEFAULT_PORTS[target.scheme]
        candidates = [e for e in candidates if (e.port or default) == target.port]
        if not candidates:
            raise FetchError("port_not_allowed", hop=hop)
        return min(candidates, key=lambda entry: entry.wildcard)

    def describe(self) -> str:
        """The entries as one comma-separated line (for a tool description)."""
        return ", ".join(str(entry) for entry in self._entries)

    def __repr__(self) -> str:
        return f"HostAllowlist([{', '.join(repr(str(e)) for e in self._entries)}])"


def _entry_host(text: str, *, wildcard: bool) -> str:
    if not text.isascii():
        try:
            text = _a_labels(text)
        except UnicodeError as exc:  # idna.IDNAError and its subclasses
            raise ValueError("allowlist host is not a valid internationalised name") from exc
    host = canonical_host(text)  # checks ASCII labels, xn-- labels included, against IDNA 2008
    if host is None:
        raise ValueError("allowlist host is not a valid host name or IP address")
    if wildcard and (host[1] is not None or "." not in host[0]):
        raise ValueError("a wildcard allowlist entry must cover a domain of two or more labels")
    return host[0]


def _a_labels(text: str) -> str:
    """UTS 46 mapping (non-transitional: ``ß`` stays ``ß``), then IDNA 2008 per non-ASCII label.

    ASCII labels are left to :func:`canonical_host`, as in a request URL, so an
    entry and a request judge them by the same rules.
    """
    import idna  # lazy: only Unicode entries need it

    mapped = idna.uts46_remap(text, std3_rules=True)
    labels = mapped.split(".")
    return ".".join(
        label if label.isascii() else idna.alabel(label).decode("ascii") for label in labels
    )
