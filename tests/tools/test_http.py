"""The HTTP tool against a real HTTP server on the loopback interface.

Every test runs with a tripwire on ``socket.socket.connect`` and
``socket.getaddrinfo``: a connection to anything but a loopback address, or a
DNS lookup of anything but a numeric host or ``localhost``, fails the test
before a packet leaves the machine. The tripwire also records every
connection, which is how tests prove that no connection was attempted.
"""

from __future__ import annotations

import http.server
import ipaddress
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from boring_dispatch.tools.http import (
    AllowEntry,
    FetchError,
    HostAllowlist,
    HttpPolicy,
    Resolver,
    fetch,
    http_get_tool,
)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
BOUND = 5.0  # the longest any test thread may wait for anything


@dataclass(frozen=True)
class Reply:
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b"ok"
    #: Bytes written verbatim instead of a well-formed response.
    raw: bytes | None = None
    #: Wait for the release event (bounded) before answering at all.
    stall: bool = False
    #: Send headers and this many body bytes, then wait for the release event.
    stall_after: int | None = None


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    request_line: str


@dataclass
class Server:
    host: str
    port: int = 0
    routes: dict[str, Reply] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    #: Server names the TLS clients asked for (SNI), in order.
    sni: list[str | None] = field(default_factory=list)

    def url(self, path: str = "/") -> str:
        return f"http://{self.host}:{self.port}{path}"

    def entry(self, *, allow_private: bool = True) -> AllowEntry:
        return AllowEntry.parse(f"http://{self.host}:{self.port}", allow_private=allow_private)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        state = self.server.state
        state.seen.append(Seen(self.path, dict(self.headers.items()), self.requestline))
        reply = state.routes.get(self.path, Reply(status=404, body=b"no route"))
        if reply.stall:
            state.release.wait(BOUND)
        if reply.raw is not None:
            self.wfile.write(reply.raw)
            self.close_connection = True
            return
        self.send_response(reply.status)
        for name, value in reply.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if reply.stall_after is not None:
            self.wfile.write(reply.body[: reply.stall_after])
            self.wfile.flush()
            state.release.wait(BOUND)
            return
        self.wfile.write(reply.body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002, ARG002 - stdlib signature
        return


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: Server) -> None:
        super().__init__((state.host, 0), _Handler)
        self.state = state


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Loopback-only tripwire; returns the list of attempted connections."""
    attempts: list[tuple[str, int]] = []
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: tuple[str, int]) -> None:
        if not ipaddress.ip_address(address[0]).is_loopback:
            raise AssertionError("a test tried to leave the loopback interface")
        attempts.append((address[0], address[1]))
        real_connect(self, address)

    def getaddrinfo(host: str, *args: object, **kwargs: object) -> object:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            if host != "localhost":
                raise AssertionError("a test tried to resolve a name through DNS") from None
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return attempts


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    """A self-signed certificate for api.service.test, made by the openssl command."""
    openssl = shutil.which("openssl")
    if openssl is None:
        print("openssl not found: TLS tests skipped")
        pytest.skip("the openssl command is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    made = Certificate(folder / "cert.pem", folder / "key.pem")
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(made.key), "-out", str(made.cert), "-days", "2",
         "-subj", "/CN=api.service.test", "-addext", "subjectAltName=DNS:api.service.test"],
        check=True, capture_output=True, timeout=30,
    )  # fmt: skip
    return made


@pytest.fixture
def serve(
    connections: list[tuple[str, int]],
) -> Iterator[Callable[..., Server]]:
    started: list[tuple[_HTTPServer, threading.Thread]] = []

    def start(host: str = "127.0.0.1", tls: Certificate | None = None) -> Server:
        state = Server(host)
        httpd = _HTTPServer(state)
        state.port = httpd.server_address[1]
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls.cert, tls.key)
            context.sni_callback = lambda _sock, name, _ctx: state.sni.append(name)
            httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
        thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
        thread.start()
        started.append((httpd, thread))
        return state

    yield start
    for httpd, thread in started:
        httpd.state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(BOUND)


@pytest.fixture
def server(serve: Callable[..., Server]) -> Server:
    return serve("127.0.0.1")


def policy(*entries: AllowEntry | str, **limits: object) -> HttpPolicy:
    return HttpPolicy(allow=HostAllowlist(entries), **limits)  # type: ignore[arg-type]


def table(names: dict[str, Sequence[str]], calls: list[str] | None = None) -> Resolver:
    """A static resolver: a hosts file in a dict. Unknown names fail like DNS does."""

    def resolve(host: str, port: int) -> tuple[IPAddress, ...]:
        if calls is not None:
            calls.append(host)
        if host not in names:
            raise socket.gaierror(socket.EAI_NONAME, "unknown name")
        return tuple(ipaddress.ip_address(a) for a in names[host])

    return resolve


def refusal(url: str, used: HttpPolicy) -> FetchError:
    with pytest.raises(FetchError) as caught:
        fetch(url, used)
    assert caught.value.code == "tool_error"
    return caught.value


# --------------------------------------------------------------------------- #
# Plain fetches


def test_an_allowlisted_url_is_fetched_with_only_safe_request_and_response_headers(
    server: Server, connections: list[tuple[str, int]]
) -> None:
    server.routes["/data?q=1"] = Reply(
        headers=(
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Set-Cookie", "session=secret"),
            ("X-Internal", "secret"),
            ("ETag", '"v1"'),
        ),
        body="héllo".encode(),
    )
    response = fetch(server.url("/data?q=1"), policy(server.entry()))
    assert response.status == 200
    assert response.text() == "héllo"
    assert not response.truncated
    assert response.redirects == 0
    assert dict(response.headers) == {
        "content-type": "text/plain; charset=utf-8",
        "content-length": "6",
        "etag": '"v1"',
    }
    (seen,) = server.seen
    assert seen.request_line == "GET /data?q=1 HTTP/1.1"
    assert seen.headers["Host"] == f"127.0.0.1:{server.port}"
    assert seen.headers["Accept-Encoding"] == "identity"
    assert seen.headers["Connection"] == "close"
    assert "Cookie" not in seen.headers
    assert connections == [("127.0.0.1", server.port)]


def test_a_non_2xx_status_is_returned_not_raised(server: Server) -> None:
    response = fetch(server.url("/missing"), policy(server.entry()))
    assert (response.status, response.text()) == (404, "no route")


def test_a_host_name_is_resolved_once_and_the_checked_address_is_the_one_connected(
    server: Server, connections: list[tuple[str, int]]
) -> None:
    calls: list[str] = []
    resolver = table({"api.service.test": ["127.0.0.1"]}, calls)
    entry = AllowEntry.parse(f"http://api.service.test:{server.port}", allow_private=True)
    server.routes["/"] = Reply(body=b"named")
    # Mixed case and a trailing dot name the same host.
    response = fetch(f"http://API.Service.Test.:{server.port}/", policy(entry, resolver=resolver))
    assert response.text() == "named"
    assert calls == ["api.service.test"]
    assert connections == [("127.0.0.1", server.port)]
    assert server.seen[0].headers["Host"] == f"api.service.test:{server.port}"


def test_the_system_resolver_is_used_by_default(server: Server) -> None:
    entry = AllowEntry.parse(f"http://localhost:{server.port}", allow_private=True)
    server.routes["/"] = Reply(body=b"local")
    assert fetch(f"http://localhost:{server.port}/", policy(entry)).text() == "local"
    assert server.seen[0].headers["Host"] == f"localhost:{server.port}"


def test_a_resolver_that_fails_is_resolve_failed(server: Server) -> None:
    entry = AllowEntry.parse(f"http://nowhere.test:{server.port}", allow_private=True)
    error = refusal(f"http://nowhere.test:{server.port}/", policy(entry, resolver=table({})))
    assert error.reason == "resolve_failed"
    assert server.seen == []


def test_a_resolver_that_hangs_is_cut_by_the_timeout(server: Server) -> None:
    release = threading.Event()

    def hang(host: str, port: int) -> tuple[IPAddress, ...]:
        release.wait(BOUND)
        return (ipaddress.ip_address("127.0.0.1"),)

    entry = AllowEntry.parse(f"http://slow.test:{server.port}", allow_private=True)
    try:
        error = refusal(
            f"http://slow.test:{server.port}/", policy(entry, resolver=hang, timeout_s=0.3)
        )
    finally:
        release.set()
    assert error.reason == "timeout"
    assert server.seen == []


def test_http_is_refused_for_an_https_only_entry_without_connecting(
    server: Server, connections: list[tuple[str, int]]
) -> None:
    https_only = AllowEntry(host="127.0.0.1", port=server.port, allow_private=True)
    error = refusal(server.url(), policy(https_only))
    assert error.reason == "scheme_not_allowed"
    assert connections == []
    assert server.seen == []


def test_proxy_environment_variables_are_ignored(
    server: Server, monkeypatch: pytest.MonkeyPatch, connections: list[tuple[str, int]]
) -> None:
    # A loopback address where nothing listens: if it were used, the fetch would fail.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.9:9")
    monkeypatch.setenv("NO_PROXY", "")
    server.routes["/direct"] = Reply(body=b"direct")
    assert fetch(server.url("/direct"), policy(server.entry())).text() == "direct"
    assert server.seen[0].request_line == "GET /direct HTTP/1.1"  # origin form, not via proxy
    assert connections == [("127.0.0.1", server.port)]


def test_a_port_with_no_listener_is_connect_failed(connections: list[tuple[str, int]]) -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    entry = AllowEntry.parse(f"http://127.0.0.1:{port}", allow_private=True)
    assert refusal(f"http://127.0.0.1:{port}/", policy(entry)).reason == "connect_failed"


# --------------------------------------------------------------------------- #
# TLS


def _tls_policy(port: int, certificate: Certificate | None, host: str) -> HttpPolicy:
    entry = AllowEntry(host=host, port=port, allow_private=True)
    resolver = table({host: ["127.0.0.1"]})
    ca_file = None if certificate is None else str(certificate.cert)
    return policy(entry, resolver=resolver, ca_file=ca_file)


def test_https_verifies_the_certificate_for_the_host_name_over_the_pinned_address(
    serve: Callable[..., Server],
    certificate: Certificate,
    connections: list[tuple[str, int]],
) -> None:
    server = serve("127.0.0.1", tls=certificate)
    server.routes["/secure"] = Reply(body=b"secret-free")
    used = _tls_policy(server.port, certificate, "api.service.test")
    response = fetch(f"https://api.service.test:{server.port}/secure", used)
    assert response.text() == "secret-free"
    assert server.sni == ["api.service.test"]
    assert server.seen[0].headers["Host"] == f"api.service.test:{server.port}"
    assert connections == [("127.0.0.1", server.port)]


def test_a_certificate_for_another_name_is_tls_failed(
    serve: Callable[..., Server], certificate: Certificate
) -> None:
    server = serve("127.0.0.1", tls=certificate)
    used = _tls_policy(server.port, certificate, "other.service.test")
    error = refusal(f"https://other.service.test:{server.port}/", used)
    assert error.reason == "tls_failed"
    assert server.seen == []


def test_a_certificate_from_an_untrusted_issuer_is_tls_failed(
    serve: Callable[..., Server], certificate: Certificate
) -> None:
    server = serve("127.0.0.1", tls=certificate)
    error = refusal(
        f"https://api.service.test:{server.port}/",
        _tls_policy(server.port, None, "api.service.test"),
    )
    assert error.reason == "tls_failed"
    assert server.seen == []


def test_a_tls_body_that_stalls_past_the_overall_deadline_is_cut_off(
    serve: Callable[..., Server], certificate: Certificate
) -> None:
    server = serve("127.0.0.1", tls=certificate)
    server.routes["/drip"] = Reply(body=b"d" * 100, stall_after=10)
    entry = AllowEntry(host="api.service.test", port=server.port, allow_private=True)
    used = policy(
        entry,
        resolver=table({"api.service.test": ["127.0.0.1"]}),
        ca_file=str(certificate.cert),
        timeout_s=BOUND,
        deadline_s=0.5,
    )
    assert refusal(f"https://api.service.test:{server.port}/drip", used).reason == "deadline"


def test_a_ca_file_that_does_not_load_is_refused_when_the_policy_is_built(
    tmp_path: Path,
) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate", encoding="utf-8")
    with pytest.raises(ValueError, match="ca_file"):
        policy("api.example.com", ca_file=str(junk))


# --------------------------------------------------------------------------- #
# Redirects


def test_redirects_to_allowlisted_paths_are_followed(server: Server) -> None:
    server.routes["/start"] = Reply(status=302, headers=(("Location", "/next?x=1#frag"),))
    server.routes["/next?x=1"] = Reply(status=301, headers=(("Location", "final"),))
    server.routes["/final"] = Reply(status=307, headers=(("Location", server.url("/done")),))
    server.routes["/done"] = Reply(body=b"done")
    response = fetch(server.url("/start"), policy(server.entry()))
    assert (response.status, response.text(), response.redirects) == (200, "done", 3)
    assert [seen.path for seen in server.seen] == ["/start", "/next?x=1", "/final", "/done"]


def test_a_redirect_to_a_host_outside_the_allowlist_is_refused_before_contacting_it(
    serve: Callable[..., Server], connections: list[tuple[str, int]]
) -> None:
    first, second = serve("127.0.0.1"), serve("127.0.0.2")
    first.routes["/go"] = Reply(status=302, headers=(("Location", second.url("/steal")),))
    error = refusal(first.url("/go"), policy(first.entry()))
    assert (error.reason, error.hop) == ("host_not_allowed", 1)
    assert second.seen == []
    assert connections == [("127.0.0.1", first.port)]


def test_a_redirect_to_a_name_outside_the_allowlist_is_never_resolved(server: Server) -> None:
    calls: list[str] = []
    resolver = table({"evil.test": ["127.0.0.1"]}, calls)
    server.routes["/go"] = Reply(
        status=303, headers=(("Location", f"http://evil.test:{server.port}/"),)
    )
    error = refusal(server.url("/go"), policy(server.entry(), resolver=resolver))
    assert error.reason == "host_not_allowed"
    assert calls == []
    assert len(server.seen) == 1


def test_a_redirect_to_a_loopback_address_is_refused_when_its_entry_forbids_private(
    serve: Callable[..., Server], connections: list[tuple[str, int]]
) -> None:
    first, second = serve("127.0.0.1"), serve("127.0.0.2")
    first.routes["/go"] = Reply(
        status=308,
        headers=(
            (
                "Location",
                second.url("/"),
            ),
        ),
    )
    used = policy(first.entry(), second.entry(allow_private=False))
    error = refusal(first.url("/go"), used)
    assert (error.reason, error.hop) == ("address_not_allowed", 1)
    assert second.seen == []
    assert connections == [("127.0.0.1", first.port)]


def test_a_redirect_to_an_https_only_host_over_http_is_refused(server: Server) -> None:
    resolver = table({"secure.test": ["127.0.0.1"]})
    server.routes["/go"] = Reply(
        status=302, headers=(("Location", f"http://secure.test:{server.port}/"),)
    )
    secure = AllowEntry(host="secure.test", port=server.port, allow_private=True)
    error = refusal(server.url("/go"), policy(server.entry(), secure, resolver=resolver))
    assert (error.reason, error.hop) == ("scheme_not_allowed", 1)
    assert len(server.seen) == 1


def test_a_redirect_loop_stops_at_the_redirect_cap(server: Server) -> None:
    server.routes["/loop"] = Reply(status=302, headers=(("Location", "/loop"),))
    error = refusal(server.url("/loop"), policy(server.entry(), max_redirects=3))
    assert (error.reason, error.hop) == ("too_many_redirects", 3)
    assert len(server.seen) == 4


def test_a_cap_of_zero_redirects_refuses_the_first_redirect(server: Server) -> None:
    server.routes["/go"] = Reply(status=301, headers=(("Location", "/there"),))
    error = refusal(server.url("/go"), policy(server.entry(), max_redirects=0))
    assert error.reason == "too_many_redirects"
    assert [seen.path for seen in server.seen] == ["/go"]


def test_a_redirect_without_a_single_location_is_refused(server: Server) -> None:
    server.routes["/none"] = Reply(status=302)
    two = (("Location", "/a"), ("Location", "/b"))
    server.routes["/two"] = Reply(status=302, headers=two)
    for path in ("/none", "/two"):
        assert refusal(server.url(path), policy(server.entry())).reason == (
            "redirect_without_location"
        )


def test_a_hostile_location_is_refused_for_what_it_is(server: Server) -> None:
    cases = {
        "/a": ("http://user:pw@127.0.0.1/", "userinfo"),
        "/b": ("/path with space", "url_characters"),
        "/c": ("\\\\evil.test/", "url_characters"),
        "/d": ("file:///etc/passwd", "scheme_not_supported"),
        "/e": ("http://0x7f.0.0.1/", "bad_host"),
    }
    for path, (location, _) in cases.items():
        server.routes[path] = Reply(status=302, headers=(("Location", location),))
    for path, (_, reason) in cases.items():
        error = refusal(server.url(path), policy(server.entry()))
        assert (error.reason, error.hop) == (reason, 1)
    assert len(server.seen) == len(cases)


# --------------------------------------------------------------------------- #
# Caps and time limits


def test_a_body_over_the_cap_is_cut_and_marked_truncated(server: Server) -> None:
    server.routes["/big"] = Reply(body=b"x" * 10_000)
    server.routes["/exact"] = Reply(body=b"y" * 1000)
    big = fetch(server.url("/big"), policy(server.entry(), max_body_bytes=1000))
    assert (len(big.body), big.truncated) == (1000, True)
    exact = fetch(server.url("/exact"), policy(server.entry(), max_body_bytes=1000))
    assert (len(exact.body), exact.truncated) == (1000, False)


def test_the_client_stops_reading_one_byte_past_the_cap(server: Server) -> None:
    # The server sends 1500 of 2000 bytes and then waits: reading on would block.
    server.routes["/endless"] = Reply(body=b"x" * 2000, stall_after=1500)
    used = policy(server.entry(), max_body_bytes=1000, timeout_s=1.0)
    response = fetch(server.url("/endless"), used)
    assert (len(response.body), response.truncated) == (1000, True)


def test_a_body_without_content_length_is_capped_too(server: Server) -> None:
    server.routes["/stream"] = Reply(
        raw=b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"z" * 5000
    )
    response = fetch(server.url("/stream"), policy(server.entry(), max_body_bytes=100))
    assert (response.body, response.truncated) == (b"z" * 100, True)


def test_response_headers_over_the_cap_are_refused(server: Server) -> None:
    server.routes["/fat"] = Reply(headers=(("X-Fat", "a" * 5000),))
    many = b"".join(b"X-%d: v\r\n" % i for i in range(150))
    server.routes["/many"] = Reply(raw=b"HTTP/1.1 200 OK\r\n" + many + b"\r\n")
    used = policy(server.entry(), max_header_bytes=1024)
    assert refusal(server.url("/fat"), used).reason == "headers_too_large"
    assert refusal(server.url("/many"), used).reason == "headers_too_large"


def test_a_malformed_response_is_refused(server: Server) -> None:
    server.routes["/junk"] = Reply(raw=b"SMTP ready\r\n\r\n")
    assert refusal(server.url("/junk"), policy(server.entry())).reason == "bad_response"


def test_a_body_cut_short_by_the_server_is_connection_lost(server: Server) -> None:
    server.routes["/short"] = Reply(raw=b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
    assert refusal(server.url("/short"), policy(server.entry())).reason == "connection_lost"


def test_a_server_that_does_not_answer_hits_the_timeout(server: Server) -> None:
    server.routes["/slow"] = Reply(stall=True)
    error = refusal(server.url("/slow"), policy(server.entry(), timeout_s=0.3))
    assert error.reason == "timeout"


def test_a_body_that_stalls_past_the_overall_deadline_is_cut_off(server: Server) -> None:
    server.routes["/drip"] = Reply(body=b"d" * 100, stall_after=10)
    used = policy(server.entry(), timeout_s=BOUND, deadline_s=0.4)
    assert refusal(server.url("/drip"), used).reason == "deadline"


# --------------------------------------------------------------------------- #
# Text decoding


def test_the_declared_charset_decodes_the_body_when_it_is_a_known_one(server: Server) -> None:
    server.routes["/latin"] = Reply(
        headers=(("Content-Type", "text/plain; charset=ISO-8859-1"),), body="café".encode("latin-1")
    )
    server.routes["/odd"] = Reply(
        headers=(("Content-Type", "text/plain; charset=rot13"),), body=b"plain"
    )
    latin = fetch(server.url("/latin"), policy(server.entry()))
    assert (latin.charset, latin.text()) == ("latin-1", "café")
    odd = fetch(server.url("/odd"), policy(server.entry()))
    assert (odd.charset, odd.text()) == (None, "plain")


# --------------------------------------------------------------------------- #
# The table row


def test_the_tool_returns_a_small_result_and_refuses_with_tool_error(server: Server) -> None:
    from boring_dispatch.registry.registry import Registry

    server.routes["/hello"] = Reply(
        headers=(("Content-Type", "text/plain"), ("Set-Cookie", "a=b")), body=b"hi"
    )
    registry = Registry({"http_get": http_get_tool(policy(server.entry(), max_body_bytes=100))})
    ok = registry.dispatch("http_get", {"url": server.url("/hello")})
    assert ok.ok
    assert ok.result == {
        "status": 200,
        "headers": {"content-type": "text/plain", "content-length": "2"},
        "body": "hi",
        "truncated": False,
        "redirects": 0,
    }
    refused = registry.dispatch("http_get", {"url": "https://elsewhere.test/?token=CANARY"})
    assert not refused.ok
    assert refused.error is not None
    assert refused.error.code == "tool_error"
    assert refused.error.message == "host not in allowlist"
    assert len(server.seen) == 1
