"""One pinned HTTP/1.1 GET exchange: resolve, check addresses, connect, send, read capped.

The socket is opened here to an address that was checked, and ``http.client``
only ever speaks over that socket: it never resolves the host again, so a DNS
answer that changes between the check and the connection (rebinding) cannot
redirect the request. ``http.client`` reads no proxy settings from the
environment, sends no cookies and does not decompress.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import Final

from boring_dispatch.tools._netcheck import address_refusal
from boring_dispatch.tools._urls import DEFAULT_PORTS, FetchError, Reason, Target

__all__ = [
    "Deadline",
    "Exchange",
    "Resolver",
    "TransportConfig",
    "exchange",
    "resolve_checked",
    "system_resolver",
]

IPAddress = IPv4Address | IPv6Address
#: ``resolver(host, port)`` returns the addresses of a host name, or raises ``OSError``.
Resolver = Callable[[str, int], Sequence[IPAddress]]

_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
# Refused even for entries that allow private addresses: never a real server.
_NEVER: Final = frozenset({"unspecified", "multicast"})
_CHUNK: Final = 65_536


def system_resolver(host: str, port: int) -> tuple[IPAddress, ...]:
    """Resolve with the operating system (``socket.getaddrinfo``), TCP only."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return tuple(ip_address(info[4][0]) for info in infos)


class Deadline:
    """The overall time budget of one fetch, shared by every hop."""

    __slots__ = ("_end",)

    def __init__(self, seconds: float) -> None:
        self._end: Final = time.monotonic() + seconds

    def remaining(self, hop: int) -> float:
        """Seconds left; raises ``FetchError("deadline")`` when none are."""
        left = self._end - time.monotonic()
        if left <= 0:
            raise FetchError("deadline", hop=hop)
        return left


@dataclass(frozen=True, slots=True)
class Exchange:
    """What one request returned: a final response, or a redirect location."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    truncated: bool
    charset: str | None
    location: str | None


@dataclass(frozen=True, slots=True)
class TransportConfig:
    """The parts of a policy that the transport needs."""

    resolver: Resolver
    timeout_s: float
    max_body_bytes: int
    max_header_bytes: int
    user_agent: str
    ca_file: str | None


def resolve_checked(
    target: Target, config: TransportConfig, deadline: Deadline, *, allow_private: bool, hop: int
) -> tuple[IPAddress, ...]:
    """The addresses to connect to, every one of them checked.

    A host with any refused address is refused whole: a mixed answer is what a
    rebinding attacker returns.

    Raises:
        FetchError: ``resolve_failed``, ``timeout`` or ``address_not_allowed``.
    """
    if target.literal is not None:
        addresses: tuple[IPAddress, ...] = (target.literal,)
    else:
        addresses = tuple(dict.fromkeys(_resolve(target, config, deadline, hop)))
    if not addresses:
        raise FetchError("resolve_failed", hop=hop)
    for address in addresses:
        reason = address_refusal(address)
        if reason is not None and (not allow_private or reason in _NEVER):
            raise FetchError("address_not_allowed", hop=hop)
    return addresses


def exchange(
    target: Target,
    addresses: tuple[IPAddress, ...],
    config: TransportConfig,
    deadline: Deadline,
    hop: int,
) -> Exchange:
    """Connect to the first reachable checked address and perform one GET.

    Raises:
        FetchError: For connection, TLS, timeout, deadline and protocol failures.
    """
    sock = _connect(addresses, target.port, config.timeout_s, deadline, hop)
    watchdog = _Watchdog(sock)
    try:
        timer = threading.Timer(deadline.remaining(hop), watchdog.fire)
        timer.daemon = True
        timer.start()
        try:
            return _converse(target, sock, config, hop, watchdog)
        finally:
            timer.cancel()
    finally:
        watchdog.finish()
        sock.close()  # a no-op once TLS has taken the socket over (it closes its own)


def _resolve(
    target: Target, config: TransportConfig, deadline: Deadline, hop: int
) -> Sequence[IPAddress]:
    # getaddrinfo has no timeout; run it aside and stop waiting at the limit.
    outcome: list[Sequence[IPAddress] | Exception] = []

    def run() -> None:
        try:
            outcome.append(config.resolver(target.host, target.port))
        except Exception as exc:  # noqa: BLE001 - handed back to the caller below
            outcome.append(exc)

    worker = threading.Thread(target=run, name="boring-dispatch-resolve", daemon=True)
    worker.start()
    worker.join(min(config.timeout_s, deadline.remaining(hop)))
    if not outcome:
        deadline.remaining(hop)
        raise FetchError("timeout", hop=hop)
    result = outcome[0]
    if isinstance(result, OSError):
        raise FetchError("resolve_failed", hop=hop) from None
    if isinstance(result, Exception):
        raise result
    return result


def _connect(
    addresses: tuple[IPAddress, ...], port: int, timeout_s: float, deadline: Deadline, hop: int
) -> socket.socket:
    failure: Reason = "connect_failed"
    for address in addresses:
        family = socket.AF_INET6 if isinstance(address, IPv6Address) else socket.AF_INET
        wait = min(timeout_s, deadline.remaining(hop))
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(wait)
        try:
            sock.connect((str(address), port))
        except TimeoutError:
            sock.close()
            failure = "timeout"
        except OSError:
            sock.close()
        else:
            return sock
    deadline.remaining(hop)
    raise FetchError(failure, hop=hop)


class _Watchdog:
    """Shuts the connection down when the overall deadline passes, waking any blocked read.

    It holds its own duplicate of the socket's descriptor: ``shutdown`` acts on the
    connection, not the descriptor, so the reading thread's socket (plain or TLS)
    is never touched from the timer thread.
    """

    __slots__ = ("_done", "_handle", "_lock", "fired")

    def __init__(self, sock: socket.socket) -> None:
        self._handle = sock.dup()
        self._lock = threading.Lock()
        self._done = False
        self.fired = False

    def fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.fired = True
            with contextlib.suppress(OSError):  # already closed by the peer
                self._handle.shutdown(socket.SHUT_RDWR)

    def finish(self) -> None:
        with self._lock:
            self._done = True
            self._handle.close()


class _PinnedConnection(http.client.HTTPConnection):
    """An ``HTTPConnection`` over a socket opened to a checked address; never opens its own."""

    def __init__(self, sock: socket.socket, target: Target, timeout_s: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout_s)
        self.sock = sock

    def connect(self) -> None:
        raise ConnectionError("a pinned connection never opens a socket of its own")


def _converse(
    target: Target, sock: socket.socket, config: TransportConfig, hop: int, watchdog: _Watchdog
) -> Exchange:
    try:
        if target.scheme == "https":
            # SNI and certificate checks use the host name; the socket stays pinned.
            sock = _tls_context(config.ca_file).wrap_socket(sock, server_hostname=target.host)
        connection = _PinnedConnection(sock, target, config.timeout_s)
        try:
            connection.putrequest("GET", target.path, skip_host=True, skip_accept_encoding=True)
            connection.putheader("Host", _host_header(target))
            connection.putheader("User-Agent", config.user_agent)
            connection.putheader("Accept-Encoding", "identity")  # no decompression bombs
            connection.putheader("Connection", "close")
            connection.endheaders()
            response = connection.getresponse()
            try:
                return _read(response, config, hop, watchdog)
            finally:
                response.close()
        finally:
            connection.close()
    except OSError as exc:
        raise FetchError(_failure(exc, watchdog), hop=hop) from None
    except http.client.HTTPException as exc:
        raise FetchError(_protocol_failure(exc, watchdog), hop=hop) from None


def _read(
    response: http.client.HTTPResponse, config: TransportConfig, hop: int, watchdog: _Watchdog
) -> Exchange:
    size = sum(len(name) + len(value) + 4 for name, value in response.getheaders())
    if size > config.max_header_bytes:
        raise FetchError("headers_too_large", hop=hop)
    if response.status in _REDIRECTS:
        locations = response.headers.get_all("Location") or []
        if len(locations) != 1:
            raise FetchError("redirect_without_location", hop=hop)
        return Exchange(
            status=response.status,
            headers=(),
            body=b"",
            truncated=False,
            charset=None,
            location=locations[0].strip(),
        )
    chunks: list[bytes] = []
    total = 0
    while total <= config.max_body_bytes:  # read at most cap + 1 bytes
        chunk = response.read(min(_CHUNK, config.max_body_bytes + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if watchdog.fired:  # the shutdown looks like an end of file to the reads above
        raise FetchError("deadline", hop=hop)
    truncated = total > config.max_body_bytes
    if response.length and not truncated:  # http.client counts down Content-Length
        raise FetchError("connection_lost", hop=hop)
    body = b"".join(chunks)
    return Exchange(
        status=response.status,
        headers=_safe_headers(response),
        body=body[: config.max_body_bytes],
        truncated=truncated,
        charset=response.headers.get_content_charset(),
        location=None,
    )


_SAFE_HEADERS: Final = (
    "content-type",
    "content-length",
    "content-language",
    "last-modified",
    "etag",
    "cache-control",
    "retry-after",
)


def _safe_headers(response: http.client.HTTPResponse) -> tuple[tuple[str, str], ...]:
    # A small fixed subset: never Set-Cookie, never anything the caller did not ask about.
    pairs = []
    for name in _SAFE_HEADERS:
        value = response.getheader(name)
        if value is not None:
            clean = "".join(char for char in value if 0x20 <= ord(char) <= 0x7E)
            pairs.append((name, clean[:256]))
    return tuple(pairs)


@functools.lru_cache(maxsize=8)
def _tls_context(ca_file: str | None) -> ssl.SSLContext:
    # Certificate and host name verification on; one context per trust store, reused.
    return ssl.create_default_context(cafile=ca_file)


def _host_header(target: Target) -> str:
    host = f"[{target.host}]" if isinstance(target.literal, IPv6Address) else target.host
    return host if target.port == DEFAULT_PORTS[target.scheme] else f"{host}:{target.port}"


def _failure(exc: OSError, watchdog: _Watchdog) -> Reason:
    if watchdog.fired:
        return "deadline"
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, ssl.SSLError | ssl.CertificateError):
        return "tls_failed"
    return "connection_lost"


def _protocol_failure(exc: http.client.HTTPException, watchdog: _Watchdog) -> Reason:
    if watchdog.fired:
        return "deadline"
    # http.client caps each header line (LineTooLong) and the header count (a plain
    # HTTPException saying "got more than 100 headers").
    if isinstance(exc, http.client.LineTooLong) or "more than" in str(exc):
        return "headers_too_large"
    if isinstance(exc, http.client.IncompleteRead):
        return "connection_lost"
    return "bad_response"
