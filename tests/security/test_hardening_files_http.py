"""The HTTP tool: allowlist and request agree on IDNA 2008; every body fits the observation cap.

Findings 6 and 7 of the files group: allowlist entries were encoded with the
stdlib's IDNA 2003 codec (``faß.de`` became ``fass.de``, a zero-width joiner
vanished), and the default policy let a 32 KiB Cyrillic page become
``observation_too_large`` because escaped JSON is up to six times its bytes.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import idna
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch import Registry
from boring_dispatch.registry.pipeline import TableLimits
from boring_dispatch.tools._urls import parse_url
from boring_dispatch.tools.http import (
    AllowEntry,
    FetchError,
    HostAllowlist,
    HttpPolicy,
    http_get_tool,
)

# --------------------------------------------------------------------------- #
# Finding 6: IDNA 2008 / UTS 46, the same for entries and requests

#: Entry text -> the host IDNA 2008 (UTS 46, non-transitional) gives it; None: refused.
IDNA_FAMILY: dict[str, str | None] = {
    # deviation characters: IDNA 2003 mapped them away, IDNA 2008 keeps them
    "faß.de": "xn--fa-hia.de",
    "straße.example": "xn--strae-oqa.example",
    "ςαβ.gr": "xn--mxac0c.gr",  # final sigma
    "σαβ.gr": "xn--mxac3c.gr",
    "نامه\u200cای.example": "xn--mgba3gch31f060k.example",  # ZWNJ where Persian needs it
    "क्\u200dष.example": "xn--11b2ezcw70k.example",  # ZWJ after a virama
    "exa\u200dmple.com": None,  # a stray ZWJ: IDNA 2003 silently dropped it
    "exa\u200cmple.com": None,
    "x\u200db.example": None,
    # case, width and dots
    "FAß.DE": "xn--fa-hia.de",
    "ΣΑΒ.gr": "xn--mxac3c.gr",
    "BÜCHER.example": "xn--bcher-kva.example",
    "bücher.example": "xn--bcher-kva.example",
    "faß.de.": "xn--fa-hia.de",
    "münchen\u3002de": "xn--mnchen-3ya.de",
    "\uff41\uff50\uff49.example": "api.example",
    # mixed scripts are distinct names, never folded into the Latin one
    "p\u0430ypal.com": "xn--pypal-4ve.com",
    "\u0430pple.com": "xn--pple-43d.com",
    # punycode forms
    "xn--fa-hia.de": "xn--fa-hia.de",
    "XN--FA-HIA.DE": "xn--fa-hia.de",
    "xn--fa-hia.de.": "xn--fa-hia.de",
    "*.xn--fa-hia.de": "*.xn--fa-hia.de",
    "*.faß.de": "*.xn--fa-hia.de",
    "xn--example-j06c.com": None,  # the A-label of exa<ZWJ>mple
    "xn--ab-j1t.example": None,  # a<ZWNJ>b
    "xn---bbk.com": None,  # not canonical Punycode
    "xn--a.example": None,
    "xn--zz.example": None,
    # combining marks and ignorables
    "\u0301abc.example": None,
    "a\u0308.example": "xn--4ca.example",  # NFC: ä
}


def naive_a_labels(text: str) -> str:
    """Punycode each label as written, with no IDNA checks (what an attacker may send)."""
    return ".".join(
        label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
        for label in text.split(".")
    )


@pytest.mark.parametrize("text", list(IDNA_FAMILY), ids=ascii)
def test_entries_use_idna_2008_and_requests_agree(text: str) -> None:
    expected = IDNA_FAMILY[text]
    if expected is None:
        with pytest.raises(ValueError, match=r"internationalised|valid host"):
            AllowEntry.parse(text)
        # No spelling of the refused name gets through as a request either.
        for spelling in {naive_a_labels(text), naive_a_labels(text.lower())}:
            if spelling.isascii():
                with pytest.raises(FetchError) as caught:
                    parse_url(f"https://{spelling}/", max_length=2048)
                assert caught.value.reason in {"bad_host", "url_characters"}
        return
    entry = AllowEntry.parse(text)
    assert entry.host == expected
    allowlist = HostAllowlist([entry])
    host = expected.removeprefix("*.")
    if entry.wildcard:
        host = f"api.{host}"
    for spelling in (host, host.upper(), f"{host}."):
        assert allowlist.check(parse_url(f"https://{spelling}/", max_length=2048)) == entry
    # The IDNA 2003 spelling of a different name never reaches this entry.
    try:
        legacy = text.removeprefix("*.").encode("idna").decode("ascii").lower().rstrip(".")
    except UnicodeError:
        return
    if legacy != expected.removeprefix("*."):
        with pytest.raises(FetchError) as refused:
            allowlist.check(parse_url(f"https://api.{legacy}/", max_length=2048))
        assert refused.value.reason in {"host_not_allowed", "bad_host"}


def test_unicode_in_a_request_url_is_still_refused() -> None:
    with pytest.raises(FetchError) as caught:
        parse_url("https://faß.de/", max_length=2048)
    assert caught.value.reason == "url_characters"


LABEL_ALPHABET = "aßςσΣ\u200d\u200cاله\u094dकжа-0ÜüｆZ\u0301\u00ad"


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(LABEL_ALPHABET, min_size=1, max_size=6), min_size=1, max_size=3))
def test_the_entry_language_and_the_request_language_are_the_same(labels: list[str]) -> None:
    text = ".".join([*labels, "example"])
    try:
        entry = AllowEntry.parse(text)
    except ValueError:
        entry = None
    try:
        mapped: str | None = idna.uts46_remap(text, std3_rules=True)
    except idna.IDNAError:
        mapped = None
    if entry is not None:
        # The entry names what was written (UTS 46 mapped): no character silently dropped or
        # replaced, as IDNA 2003 did with ß, ς, ZWJ and ZWNJ.
        assert mapped is not None
        assert ".".join(idna.ulabel(label) for label in entry.host.split(".")) == mapped
        # Every entry is reachable by exactly its canonical host.
        target = parse_url(f"https://{entry.host}/", max_length=2048)
        assert target.host == entry.host
        assert HostAllowlist([entry]).check(target) == entry
    for spelling in {naive_a_labels(text), naive_a_labels(text.lower())}:
        if not spelling.isascii():
            continue
        try:
            target = parse_url(f"https://{spelling}/", max_length=2048)
        except FetchError:
            continue
        # Every accepted request host is a host an entry could name, unchanged.
        assert AllowEntry.parse(target.host).host == target.host


# --------------------------------------------------------------------------- #
# Finding 7: the default body cap and the default observation cap agree


@dataclass
class Page:
    body: bytes
    content_type: str = "text/plain; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()


@dataclass
class Pages:
    pages: dict[str, Page] = field(default_factory=dict)
    port: int = 0


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        page = self.server.pages.pages.get(self.path, Page(b"", "text/plain"))
        self.send_response(200)
        self.send_header("Content-Type", page.content_type)
        for name, value in page.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(page.body)))
        self.end_headers()
        self.wfile.write(page.body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002, ARG002 - stdlib signature
        return


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, pages: Pages) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.pages = pages


@pytest.fixture(scope="module")
def pages() -> Iterator[Pages]:
    state = Pages()
    server = _Server(state)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5.0)


def table(pages: Pages) -> Registry:
    # The default policy (only the loopback server allowed) and the default table limits.
    entry = AllowEntry.parse(f"http://127.0.0.1:{pages.port}", allow_private=True)
    return Registry({"http_get": http_get_tool(HttpPolicy(allow=HostAllowlist([entry])))})


CAP = TableLimits().max_observation_bytes
BODY = HttpPolicy(allow=HostAllowlist(["example.com"])).max_body_bytes
# Every safe header the tool passes on, each as long as it keeps and all quotes (2 bytes each).
WORST_HEADERS = tuple(
    (name, '"' * 300)
    for name in (
        "Content-Language",
        "Last-Modified",
        "ETag",
        "Cache-Control",
        "Retry-After",
    )
)


def fill(unit: bytes, size: int) -> bytes:
    return (unit * (size // len(unit) + 1))[:size]


SCRIPTS: dict[str, tuple[bytes, str]] = {
    "latin": ("é".encode(), "utf-8"),
    "cyrillic": ("Ж".encode(), "utf-8"),  # the finding: 32 KiB -> 96 KiB of JSON
    "cjk": ("中".encode(), "utf-8"),
    "emoji": ("😀".encode(), "utf-8"),
    "control": (b"\x01", "utf-8"),  # six bytes of JSON per byte: the worst case
    "undecodable": (b"\xff", "utf-8"),  # each byte becomes U+FFFD: also six
    "quotes": (b'"\\', "utf-8"),
    "mixed": ('aé\x00Ж中😀"\\\n'.encode(), "utf-8"),
    "latin1": (b"\xe9\x80", "iso-8859-1"),
    "utf16": ("Ж中".encode("utf-16-le"), "utf-16"),
}


@pytest.mark.parametrize("script", list(SCRIPTS))
@pytest.mark.parametrize("size", [BODY // 2, BODY, BODY + 1, 3 * BODY])
@pytest.mark.parametrize("worst_headers", [False, True])
def test_every_body_fits_the_default_observation_cap(
    pages: Pages, script: str, size: int, worst_headers: bool
) -> None:
    unit, charset = SCRIPTS[script]
    body = fill(unit, size)
    path = f"/{script}/{size}/{worst_headers}"
    headers = WORST_HEADERS if worst_headers else ()
    pages.pages[path] = Page(body, f"text/plain; charset={charset}", headers)
    observation = table(pages).dispatch("http_get", {"url": f"http://127.0.0.1:{pages.port}{path}"})
    assert observation.ok, observation.to_dict()
    result = observation.result
    assert isinstance(result, dict)
    size_of_json = len(json.dumps(result, ensure_ascii=True, separators=(",", ":")))
    assert size_of_json <= CAP
    codec = {"utf-8": "utf-8", "iso-8859-1": "latin-1", "utf-16": "utf-16"}[charset]
    full = body[:BODY].decode(codec, errors="replace")
    assert full.startswith(result["body"])
    cut = len(result["body"]) < len(full) or size > BODY
    assert result["truncated"] is cut
    if worst_headers:
        assert len(result["headers"]["etag"]) == 256


def test_the_default_still_returns_a_whole_ascii_page(pages: Pages) -> None:
    body = fill(b"plain text, ", BODY)
    pages.pages["/ascii"] = Page(body)
    observation = table(pages).dispatch("http_get", {"url": f"http://127.0.0.1:{pages.port}/ascii"})
    assert observation.ok
    assert observation.result["body"] == body.decode()  # type: ignore[index]
    assert observation.result["truncated"] is False  # type: ignore[index]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(unit=st.text(min_size=1, max_size=8), count=st.integers(1, 40_000), tail=st.text())
def test_any_utf8_page_fits_the_default_observation_cap(
    pages: Pages, unit: str, count: int, tail: str
) -> None:
    body = (unit * count + tail).encode("utf-8", errors="surrogatepass")
    pages.pages["/any"] = Page(body)
    observation = table(pages).dispatch("http_get", {"url": f"http://127.0.0.1:{pages.port}/any"})
    assert observation.ok, observation.to_dict()
    result = observation.result
    assert isinstance(result, dict)
    assert len(json.dumps(result, separators=(",", ":"))) <= CAP
    assert body[:BODY].decode("utf-8", errors="replace").startswith(result["body"])
