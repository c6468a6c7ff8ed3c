from __future__ import annotations

import base64
import html

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from boring_dispatch.surfaces.http.app import build_app, render_html, table_allowlist
from kits import fixture_tables

TOKEN = "the-right-token-0123456789abcdef"
DOCUMENT = table_allowlist(fixture_tables.TABLE)
CLIENT = TestClient(build_app(DOCUMENT, TOKEN))


@given(offered=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), max_size=40))
def test_every_other_token_is_refused(offered: str) -> None:
    if offered == TOKEN:
        return
    for header in (
        f"Bearer {offered}",
        "Basic " + base64.b64encode(f"u:{offered}".encode()).decode(),
    ):
        reply = CLIENT.get("/allowlist.json", headers={"Authorization": header})
        assert reply.status_code == 401
        assert reply.content == b"a valid token is required\n"


@given(prefix=st.integers(0, len(TOKEN) - 1))
def test_a_prefix_of_the_token_is_refused(prefix: int) -> None:
    reply = CLIENT.get("/", headers={"Authorization": f"Bearer {TOKEN[:prefix]}"})
    assert reply.status_code == 401


def test_the_token_is_admitted_in_both_schemes() -> None:
    assert (
        CLIENT.get("/allowlist.json", headers={"Authorization": f"Bearer {TOKEN}"}).json()
        == DOCUMENT
    )
    basic = base64.b64encode(f"anyone:{TOKEN}".encode()).decode()
    assert CLIENT.get("/", headers={"Authorization": f"Basic {basic}"}).status_code == 200


def test_two_authorization_headers_are_refused() -> None:
    headers = [("Authorization", f"Bearer {TOKEN}"), ("Authorization", "Bearer x")]
    assert CLIENT.get("/", headers=headers).status_code == 401


@pytest.mark.parametrize("token", ["", "short", "x" * 15, "ü" * 20, "tab\there-and-long-enough"])
def test_a_weak_token_is_refused_when_the_app_is_built(token: str) -> None:
    with pytest.raises(ValueError, match="at least 16"):
        build_app(DOCUMENT, token)


@given(text=st.text(max_size=40))
def test_every_value_is_escaped_in_the_html_view(text: str) -> None:
    document: dict[str, object] = {
        "kind": "table",
        "surface": text,
        "tools": [
            {
                "name": text,
                "description": text,
                "schema_hash": text,
                "confirm": False,
                "audience": "both",
                "fixture": True,
            }
        ],
    }
    page = render_html(document)
    assert page.count(f"<td>{html.escape(text)}</td>") >= 3
    assert "<script" not in page.lower() or "<script" not in text.lower()
    if html.escape(text) != text:
        # The raw value never stands where a value goes (markup of our own uses < too).
        assert f"<td>{text}</td>" not in page
        assert f"<title>Table {text}</title>" not in page


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:8787", 200),
        ("LOCALHOST", 200),
        ("[::1]:8787", 200),
        ("evil.example", 421),
        ("evil.example:8787", 421),
        ("127.0.0.1.evil.example", 421),
        ("[::1", 421),
        ("", 421),
    ],
)
def test_a_loopback_server_answers_its_loopback_names_only(host: str, status: int) -> None:
    client = TestClient(build_app(DOCUMENT, TOKEN, hosts=("127.0.0.1", "localhost", "[::1]")))
    reply = client.get(
        "/allowlist.json", headers={"Host": host, "Authorization": f"Bearer {TOKEN}"}
    )
    assert reply.status_code == status


def test_every_answer_forbids_caching_sniffing_and_scripts() -> None:
    for path in ("/", "/allowlist.json"):
        reply = CLIENT.get(path, headers={"Authorization": f"Bearer {TOKEN}"})
        assert reply.headers["cache-control"] == "no-store"
        assert reply.headers["x-content-type-options"] == "nosniff"
        assert reply.headers["content-security-policy"].startswith("default-src 'none'")
    assert CLIENT.get("/").headers["cache-control"] == "no-store"
