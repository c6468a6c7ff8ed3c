"""Gateway of ``web._rtx``: GET one URL and print its ``<title>``.

The binding lets only ``http(s)://host[:port][/path]`` through. The gateway
reads at most 256 KiB, waits at most 10 seconds and follows no redirect (a
redirect could lead to a host the caller did not name).
"""

from __future__ import annotations

import argparse
import http.client
import sys
import urllib.request
from html.parser import HTMLParser

from boring_dispatch.gateway import Interface

_MAX_BYTES = 256 * 1024
_TIMEOUT_S = 10.0
_MAX_TITLE = 500


class _TitleParser(HTMLParser):
    """Collects the text of the first ``<title>`` element."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = False
        self.done = False
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:  # noqa: ARG002
        if tag == "title" and not self.done:
            self.inside = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.inside:
            self.inside = False
            self.done = True

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.parts.append(data)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse every redirect: a 3xx answer becomes an HTTPError."""

    def redirect_request(self, *_args: object, **_kwargs: object) -> None:
        return None


def _title(html: str) -> str:
    parser = _TitleParser()
    parser.feed(html)
    return " ".join("".join(parser.parts).split())[:_MAX_TITLE]


class FetchTitle(Interface):
    """``fetch-title URL``."""

    def build_parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="fetch-title")
        parser.add_argument("url")
        return parser

    def run(self, args: argparse.Namespace) -> int:
        url: str = args.url
        if not url.startswith(("http://", "https://")):
            sys.stderr.write("fetch-title: only http and https URLs\n")
            return 2
        opener = urllib.request.build_opener(_NoRedirect)
        request = urllib.request.Request(url, headers={"User-Agent": "boring-dispatch-example"})  # noqa: S310 -- scheme checked above
        try:
            with opener.open(request, timeout=_TIMEOUT_S) as response:
                body: bytes = response.read(_MAX_BYTES)
                charset: str = response.headers.get_content_charset() or "utf-8"
        except (OSError, ValueError, http.client.HTTPException) as error:
            sys.stderr.write(f"fetch-title: request failed: {type(error).__name__}\n")
            return 1
        try:
            html = body.decode(charset, errors="replace")
        except LookupError:
            html = body.decode("utf-8", errors="replace")
        print(_title(html))
        return 0
