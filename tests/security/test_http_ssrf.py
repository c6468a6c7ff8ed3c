"""Hostile input to the HTTP tool: server-side request forgery and parser confusion.

Every fetch here is refused before a connection. A tripwire on
``socket.socket.connect`` and ``socket.getaddrinfo`` records every connection
(and fails on any non-loopback one or any DNS lookup), and a real listening
socket on 127.0.0.1 proves nothing reached it.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.tools._netcheck import address_refusal
from boring_dispatch.tools._urls import parse_url
from boring_dispatch.tools.http import (
    AllowEntry,
    FetchError,
    HostAllowlist,
    HttpPolicy,
    Resolver,
    fetch,
)
from kits.strategies import (
    http_public_ipv4,
    http_public_ipv6,
    http_refused_ipv4,
    http_refused_ipv6,
)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    attempts: list[tuple[str, int]] = []
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: tuple[str, int]) -> None:
        if not ipaddress.ip_address(address[0]).is_loopback:
            raise AssertionError("a test tried to leave the loopback interface")
        attempts.append((address[0], address[1]))
        real_connect(self, address)

    def getaddrinfo(*args: object, **kwargs: object) -> object:
        raise AssertionError("no test here may resolve a name through the system")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return attempts


@pytest.fixture
def listener(connections: list[tuple[str, int]]) -> Iterator[socket.socket]:
    sock = socket.create_server(("127.0.0.1", 0))
    sock.settimeout(0.0)  # non-blocking: accept() raises when nobody came
    yield sock
    with pytest.raises(BlockingIOError):
        sock.accept()  # nothing ever connected
    sock.close()
    assert connections == []


def hosts(names: dict[str, Sequence[str]]) -> Resolver:
    def resolve(host: str, port: int) -> tuple[IPAddress, ...]:
        if host not in names:
            raise socket.gaierror(socket.EAI_NONAME, "unknown name")
        return tuple(ipaddress.ip_address(a) for a in names[host])

    return resolve


def refused(url: str, *entries: AllowEntry | str, **limits: object) -> FetchError:
    used = HttpPolicy(allow=HostAllowlist(entries), **limits)  # type: ignore[arg-type]
    with pytest.raises(FetchError) as caught:
        fetch(url, used)
    assert caught.value.code == "tool_error"
    return caught.value


# --------------------------------------------------------------------------- #
# The allowlist comes first


def test_a_host_outside_the_allowlist_is_refused_without_any_connection(
    listener: socket.socket,
) -> None:
    port = listener.getsockname()[1]
    error = refused(f"http://127.0.0.1:{port}/", "api.example.com")
    assert error.reason == "host_not_allowed"


def test_loopback_is_refused_when_the_entry_does_not_allow_private_addresses(
    listener: socket.socket,
) -> None:
    port = listener.getsockname()[1]
    error = refused(f"http://127.0.0.1:{port}/", f"http://127.0.0.1:{port}")
    assert error.reason == "address_not_allowed"


@pytest.mark.parametrize(
    "answer",
    [
        ["127.0.0.1"],
        ["10.1.2.3"],
        ["169.254.169.254"],
        ["100.64.0.1"],
        ["::1"],
        ["::ffff:127.0.0.1"],
        ["::ffff:169.254.169.254"],
        ["64:ff9b::a00:1"],
        ["fe80::1"],
        ["fd00::1"],
        ["2002:7f00:1::1"],
        ["93.184.216.34", "127.0.0.1"],  # one bad answer in a mixed set refuses the host
    ],
)
def test_a_name_resolving_to_a_non_public_address_is_refused_before_connecting(
    listener: socket.socket, answer: list[str]
) -> None:
    resolver = hosts({"api.example.com": answer})
    error = refused("https://api.example.com/", "api.example.com", resolver=resolver)
    assert error.reason == "address_not_allowed"


def test_unspecified_and_multicast_are_refused_even_where_private_is_allowed(
    listener: socket.socket,
) -> None:
    port = listener.getsockname()[1]
    for host in ("0.0.0.0", "224.0.0.1", "[::]", "[ff02::1]"):  # noqa: S104 - never bound
        entry = AllowEntry.parse(f"http://{host}:{port}", allow_private=True)
        assert refused(f"http://{host}:{port}/", entry).reason == "address_not_allowed"


# --------------------------------------------------------------------------- #
# Parser confusion: refused while parsing, so never resolved or contacted

HOSTILE_URLS = [
    ("http://127.0.0.1:{port}@evil.test/", "userinfo"),
    ("http://user:pass@127.0.0.1:{port}/", "userinfo"),
    ("http://evil.test\\@127.0.0.1:{port}/", "url_characters"),
    ("http://127.0.0.1:{port}\\/", "url_characters"),
    ("http://127.0.0.1:{port}/a b", "url_characters"),
    ("http://127.0.0.1:{port}/\t", "url_characters"),
    ("http://127.0.0.1:{port}/\r\nX-Injected: 1", "url_characters"),
    (" http://127.0.0.1:{port}/", "url_characters"),
    ("http://127.0.0.1:{port}/\x00", "url_characters"),
    ("http://127.0.0.1:{port}/\x7f", "url_characters"),
    ("http://127.0.0.1:{port}/caf\u00e9", "url_characters"),
    ("http://127.0.0.1\u3002:{port}/", "url_characters"),
    ("http://127.0.0.1:{port}/#@evil.test", "url_fragment"),
    ("http:/127.0.0.1:{port}/", "url_malformed"),
    ("http:127.0.0.1:{port}/", "url_malformed"),
    ("//127.0.0.1:{port}/", "url_malformed"),
    ("127.0.0.1:{port}/", "url_malformed"),
    ("file:///etc/passwd", "scheme_not_supported"),
    ("gopher://127.0.0.1:{port}/", "scheme_not_supported"),
    ("ftp://127.0.0.1:{port}/", "scheme_not_supported"),
    ("javascript://127.0.0.1:{port}/", "scheme_not_supported"),
    ("http://2130706433:{port}/", "bad_host"),
    ("http://0x7f000001:{port}/", "bad_host"),
    ("http://0x7f.0.0.1:{port}/", "bad_host"),
    ("http://0177.0.0.1:{port}/", "bad_host"),
    ("http://127.1:{port}/", "bad_host"),
    ("http://127.000.000.001:{port}/", "bad_host"),
    ("http://%31%32%37.0.0.1:{port}/", "bad_host"),
    ("http://[::1%25lo]:{port}/", "bad_host"),
    ("http://[127.0.0.1]:{port}/", "bad_host"),
    ("http://[::1:{port}/", "bad_host"),
    ("http://::1:{port}/", "bad_host"),
    ("http://:{port}/", "bad_host"),
    ("http://127.0.0.1..:{port}/", "bad_host"),
    ("http://ex_ample.test:{port}/", "bad_host"),
    ("http://-evil.test:{port}/", "bad_host"),
    ("http://127.0.0.1:0/", "bad_port"),
    ("http://127.0.0.1:65536/", "bad_port"),
    ("http://127.0.0.1:+80/", "bad_port"),
    ("http://127.0.0.1:/", "bad_port"),
    ("http://127.0.0.1:{port}:{port}/", "bad_port"),
    ("http://[::1]x/", "url_malformed"),
    ("http://127.0.0.1:{port}/%zz", "bad_path"),
    ("http://127.0.0.1:{port}/%4", "bad_path"),
    ("http://127.0.0.1:{port}/<script>", "bad_path"),
    ("http://127.0.0.1:{port}/" + "a" * 2100, "url_too_long"),
]


@pytest.mark.parametrize(("template", "reason"), HOSTILE_URLS)
def test_a_hostile_url_is_refused_while_parsing(
    listener: socket.socket, template: str, reason: str
) -> None:
    port = listener.getsockname()[1]
    entries = [
        AllowEntry.parse(f"http://127.0.0.1:{port}", allow_private=True),
        AllowEntry.parse(f"http://[::1]:{port}", allow_private=True),
        AllowEntry.parse(f"http://evil.test:{port}", allow_private=True),
    ]
    assert refused(template.format(port=port), *entries).reason == reason


def test_scheme_and_host_case_and_the_trailing_dot_are_canonicalised() -> None:
    target = parse_url("HTTPS://API.Example.COM.:8443/Path?Q=1", max_length=100)
    assert (target.scheme, target.host, target.port, target.path) == (
        "https",
        "api.example.com",
        8443,
        "/Path?Q=1",
    )
    assert parse_url("http://[0:0::1]?x", max_length=100).url() == "http://[::1]:80/?x"


# --------------------------------------------------------------------------- #
# Allowlist matching: wildcards, IDNA, trailing dots, ports


def _allows(allow: HostAllowlist, url: str) -> bool:
    try:
        allow.check(parse_url(url, max_length=2048))
    except FetchError:
        return False
    return True


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://api.example.com/", True),
        ("https://a.b.example.com/", True),
        ("https://API.EXAMPLE.COM./", True),
        ("https://example.com/", False),
        ("https://evilexample.com/", False),
        ("https://example.com.evil.net/", False),
        ("https://api.example.com.evil.net/", False),
        ("https://api.example.co/", False),
        ("https://api.example.com.", True),
        ("http://api.example.com/", False),
        ("https://api.example.com:8443/", False),
    ],
)
def test_a_wildcard_matches_proper_subdomains_only(url: str, allowed: bool) -> None:
    assert _allows(HostAllowlist(["*.example.com"]), url) is allowed


@pytest.mark.parametrize(
    "entry",
    ["*.com", "*", "*.", "a.*.example.com", "*example.com", "**.example.com", "*.127.0.0.1"],
)
def test_a_careless_wildcard_is_refused_when_the_allowlist_is_built(entry: str) -> None:
    with pytest.raises(ValueError, match="allowlist"):
        HostAllowlist([entry])


def test_a_wildcard_cannot_allow_private_addresses() -> None:
    with pytest.raises(ValueError, match="allowlist"):
        AllowEntry.parse("*.internal.example", allow_private=True)


def test_an_exact_entry_wins_over_a_wildcard_for_the_private_address_bit() -> None:
    allow = HostAllowlist(["*.example.com", AllowEntry.parse("db.example.com", allow_private=True)])
    assert allow.check(parse_url("https://db.example.com/", max_length=100)).allow_private
    assert not allow.check(parse_url("https://www.example.com/", max_length=100)).allow_private


def test_a_unicode_entry_is_idna_encoded_and_matches_its_ascii_form_only() -> None:
    allow = HostAllowlist(["Bücher.Example."])
    assert allow.entries[0].host == "xn--bcher-kva.example"
    assert _allows(allow, "https://xn--bcher-kva.example/")
    assert _allows(allow, "https://XN--BCHER-KVA.EXAMPLE./")
    assert not _allows(allow, "https://bucher.example/")
    with pytest.raises(FetchError) as caught:
        parse_url("https://bücher.example/", max_length=100)
    assert caught.value.reason == "url_characters"


def test_an_entry_allows_https_on_the_default_port_unless_it_says_otherwise() -> None:
    allow = HostAllowlist(["api.example.com", "http://plain.example.com:8080", "[2001:db8::1]"])
    assert _allows(allow, "https://api.example.com:443/")
    assert _allows(allow, "http://plain.example.com:8080/")
    assert _allows(allow, "https://[2001:db8:0::1]/")
    for url, reason in [
        ("http://api.example.com/", "scheme_not_allowed"),
        ("https://api.example.com:8443/", "port_not_allowed"),
        ("https://plain.example.com:8080/", "scheme_not_allowed"),
        ("http://plain.example.com/", "port_not_allowed"),
        ("https://other.example.com/", "host_not_allowed"),
    ]:
        with pytest.raises(FetchError) as caught:
            allow.check(parse_url(url, max_length=100))
        assert caught.value.reason == reason


@pytest.mark.parametrize(
    "entry",
    [
        "",
        "http://user@api.example.com",
        "api.example.com/path",
        "api.example.com?x",
        "ftp://api.example.com",
        "://api.example.com",
        "api.example.com:0",
        "api.example.com:65536",
        "api.example.com:",
        "api.example.com:８０",
        "[::1",
        "[127.0.0.1]",
        "127.1",
        "api..example.com",
        "api example.com",
    ],
)
def test_a_malformed_entry_is_refused_when_the_allowlist_is_built(entry: str) -> None:
    with pytest.raises(ValueError, match="allowlist"):
        HostAllowlist([entry])


def test_an_allowlist_refuses_one_string_no_entries_and_duplicate_entries() -> None:
    with pytest.raises(TypeError):
        HostAllowlist("api.example.com")
    with pytest.raises(ValueError, match="allowlist"):
        HostAllowlist([])
    with pytest.raises(ValueError, match="allowlist"):
        HostAllowlist(["api.example.com", "API.example.com.:443"])


# --------------------------------------------------------------------------- #
# Address classification

NAMED_ADDRESSES = [
    ("0.0.0.0", "unspecified"),  # noqa: S104 - data, never bound
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("10.0.0.1", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.168.1.1", "private"),
    ("100.64.0.1", "private"),
    ("169.254.169.254", "link-local"),
    ("224.0.0.251", "multicast"),
    ("255.255.255.255", "reserved"),
    ("192.0.2.1", "reserved"),
    ("198.18.0.1", "reserved"),
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:10.0.0.1", "private"),
    ("::ffff:169.254.169.254", "link-local"),
    ("64:ff9b::127.0.0.1", "loopback"),
    ("64:ff9b::169.254.169.254", "link-local"),
    ("64:ff9b:1::1", "private"),
    ("::127.0.0.1", "reserved"),
    ("2002:7f00:1::1", "tunnelled"),
    ("2002:808:808::1", "tunnelled"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "tunnelled"),
    ("2001:db8::1", "reserved"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("fe80::1", "link-local"),
    ("fe80::1%1", "link-local"),
    ("fec0::1", "private"),
    ("ff02::1", "multicast"),
    ("100::1", "reserved"),
    ("4000::1", "reserved"),
    ("8.8.8.8", None),
    ("172.32.0.1", None),
    ("192.169.0.1", None),
    ("2606:4700::1111", None),
    ("::ffff:8.8.8.8", None),
    ("64:ff9b::8.8.8.8", None),
]


@pytest.mark.parametrize(("text", "reason"), NAMED_ADDRESSES)
def test_well_known_addresses_are_classified(text: str, reason: str | None) -> None:
    assert address_refusal(ipaddress.ip_address(text)) == reason


@given(http_refused_ipv4())
def test_every_special_purpose_ipv4_address_is_refused(address: ipaddress.IPv4Address) -> None:
    assert address_refusal(address) is not None


@given(http_refused_ipv6())
def test_every_special_ipv6_address_and_every_wrapped_refused_ipv4_is_refused(
    address: ipaddress.IPv6Address,
) -> None:
    assert address_refusal(address) is not None


@given(st.one_of(http_public_ipv4(), http_public_ipv6()))
def test_public_addresses_and_their_mapped_and_nat64_forms_are_allowed(
    address: IPAddress,
) -> None:
    assert address_refusal(address) is None


# --------------------------------------------------------------------------- #
# Messages never carry the URL


@given(secret=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=12, max_size=40))
def test_refusal_messages_never_contain_the_host_path_or_query(secret: str) -> None:
    allow = HttpPolicy(allow=HostAllowlist(["api.example.com"]), resolver=hosts({}))
    urls = [
        f"https://{secret}.test/{secret}?token={secret}",
        f"https://api.example.com:1/{secret}?token={secret}",
        f"http://api.example.com/{secret}?token={secret}",
        f"https://{secret}@api.example.com/",
        f"https://api.example.com/{secret}#{secret}",
        f"https://api.example.com/{secret} ?token={secret}",
        f"gopher://{secret}/",
    ]
    for url in urls:
        with pytest.raises(FetchError) as caught:
            fetch(url, allow)
        assert secret not in str(caught.value)
        assert secret not in repr(caught.value.args)
