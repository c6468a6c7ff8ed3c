from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from boring_dispatch.registry.deployed import deploy, schema_hash
from kits import fixture_tables
from kits.serve import TESTS, chromium_dom, get, serving

TABLE = "kits.fixture_tables:TABLE"
CONFIG = str(TESTS.parent / "examples" / "repository" / "officina.toml")


def _bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_allowlist_of_a_table_is_served_as_json_behind_the_token() -> None:
    with serving("--registry", TABLE) as served:
        assert served.url.startswith("http://127.0.0.1:")
        status, headers, body = get(served.url + "allowlist.json", _bearer(served.token))
        assert status == 200
        assert headers["content-type"] == "application/json"
        document = json.loads(body)
        assert document["kind"] == "table"
        assert document["surface"] == "support"
        assert [t["name"] for t in document["tools"]] == ["finish", "get_job", "refund"]
        refund = document["tools"][2]
        assert refund["description"] == "Refund an invoice."
        assert refund["confirm"] is True
        assert refund["schema_hash"] == schema_hash(fixture_tables.TABLE, "refund")


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer "},
        {"Authorization": "Bearer wrong-token-of-enough-length"},
        {"Authorization": "Token x"},
        {"Authorization": "Basic !!!"},
        {"Authorization": "Basic " + base64.b64encode(b"user:nope").decode()},
    ],
)
def test_no_token_or_a_wrong_token_is_refused(headers: dict[str, str]) -> None:
    with serving("--registry", TABLE) as served:
        for path in ("", "allowlist.json", "nope"):
            status, reply, body = get(served.url + path, headers)
            assert (status, body) == (401, b"a valid token is required\n")
            assert "Bearer" in reply["www-authenticate"] or "Basic" in reply["www-authenticate"]
        status, _, _ = get(served.url + "allowlist.json", headers, method="POST")
        assert status == 401


def test_the_endpoint_is_read_only_and_has_two_paths() -> None:
    with serving("--registry", TABLE) as served:
        auth = _bearer(served.token)
        for method in ("POST", "PUT", "DELETE"):
            assert get(served.url + "allowlist.json", auth, method=method)[0] == 405
        assert get(served.url + "admin", auth)[0] == 404
        basic = base64.b64encode(f"anyone:{served.token}".encode()).decode()
        assert get(served.url, {"Authorization": f"Basic {basic}"})[0] == 200


def test_a_foreign_host_name_is_refused_on_a_loopback_bind() -> None:
    with serving("--registry", TABLE) as served:
        auth = _bearer(served.token)
        assert get(served.url + "allowlist.json", {**auth, "Host": "rebound.example"})[0] == 421
        assert get(served.url + "allowlist.json", {**auth, "Host": "localhost"})[0] == 200


def test_a_token_file_is_used_and_never_printed(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("a-token-from-a-file-0123456789\n")
    with serving("--registry", TABLE, "--token-file", str(token_file)) as served:
        assert served.token is None
        assert (
            get(served.url + "allowlist.json", _bearer("a-token-from-a-file-0123456789"))[0] == 200
        )


@pytest.mark.parametrize("content", ["short\n", "", "with space but long enough\x07\n"])
def test_a_weak_token_file_is_refused(tmp_path: Path, content: str) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(content)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "serve",
            "--registry",
            TABLE,
            "--port",
            "0",
            "--token-file",
            str(token_file),
        ],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "token file" in done.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1", "example.com"])  # noqa: S104
def test_a_non_loopback_bind_is_refused_without_allow_remote(host: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "boring_dispatch", "serve", "--registry", TABLE, "--host", host],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--allow-remote" in done.stderr
    assert "token" not in done.stderr


def test_a_repository_allowlist_has_levels_audiences_and_callers() -> None:
    with serving("--config", CONFIG) as served:
        status, _, body = get(served.url + "allowlist.json", _bearer(served.token))
    assert status == 200
    document = json.loads(body)
    assert document["kind"] == "repository"
    exports = {e["interface"]: e for e in document["exports"]}
    listing = exports["notes._rtx.interface.list-notes"]
    assert listing["security_level"] == 0
    assert listing["output_audiences"] == {"stdout": "machine", "stderr": "both"}
    assert listing["access"] == {"all_modules": False, "allowed_callers": ["notes"]}
    golden = (TESTS.parent / "examples" / "repository" / "names.golden").read_text().split()
    assert sorted(exports) == sorted(n for n in golden if not n.startswith("#"))


def test_a_deployed_table_is_served_with_its_rows_only(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/t.db"
    deploy(fixture_tables.TABLE, ["get_job"], surface="web", database=url, deployed_by="ci")
    with serving("--registry", TABLE, "--database", url, "--surface", "web") as served:
        document = json.loads(get(served.url + "allowlist.json", _bearer(served.token))[2])
    assert [t["name"] for t in document["tools"]] == ["get_job"]
    assert document["deployed_surface"] == "web"


def test_the_html_view_shows_the_same_allowlist_in_chromium() -> None:
    with serving("--registry", TABLE) as served:
        host = served.url.removeprefix("http://")
        dom = chromium_dom(f"http://viewer:{served.token}@{host}")
        refused = chromium_dom(f"http://viewer:wrong-token-0123456789@{host}")
    assert "<title>Table support</title>" in dom
    for name in ("finish", "get_job", "refund"):
        assert f"<td>{name}</td>" in dom
    assert schema_hash(fixture_tables.TABLE, "get_job") in dom
    assert "get_job" not in refused
    assert "<table" not in refused


def test_the_html_view_of_a_repository_in_chromium() -> None:
    with serving("--config", CONFIG) as served:
        host = served.url.removeprefix("http://")
        dom = chromium_dom(f"http://viewer:{served.token}@{host}")
    assert "<td>notes._rtx.interface.list-notes</td>" in dom
    assert "stdout=machine" in dom


@pytest.mark.parametrize(("ci", "outcome"), [("true", "1 failed"), ("", "1 skipped")])
def test_without_chromium_the_html_check_fails_in_ci_and_skips_elsewhere(
    tmp_path: Path, ci: str, outcome: str
) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "import shutil\n"
        "from kits.serve import chromium_dom\n"
        "def test_needs_chromium() -> None:\n"
        "    shutil.which = lambda name: None  # as on a machine without chromium\n"
        "    chromium_dom('http://127.0.0.1:9/')\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "-c",
            "/dev/null",
            str(probe),
        ],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(TESTS), "CI": ci, "HOME": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert outcome in done.stdout, done.stdout[-2000:]
    assert ("chromium is not installed (Debian package chromium)" in done.stdout) == bool(ci)
