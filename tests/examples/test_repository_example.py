"""The example repository (``examples/repository``), end to end through the real CLI.

Every feature a newcomer reads about in ``docs/gateways.md`` runs here as a
subprocess ``python -m boring_dispatch --config <abs officina.toml> ...``:
the blueprints are resolved, authorized and compiled by the real pipeline and
the gateways run in real child processes. Tests that write files run against
a copy of the repository, so the checkout stays clean.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boring_dispatch.records import ExecLimits, RouteRequest
from boring_dispatch.repository.repository import Repository
from boring_dispatch.repository.strict_yaml.load import load_yaml

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "repository"
CONFIG = EXAMPLE / "officina.toml"
GOLDEN = EXAMPLE / "names.golden"
#: Bounds every subprocess; a hung child fails the test instead of the suite.
WAIT_S = 60

TODAY = (EXAMPLE / "skills" / "notes" / "_rtx" / "notes" / "today.txt").read_text("utf-8")


def cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m boring_dispatch ARGS...`` with empty (or given) stdin, capturing output."""
    return subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=WAIT_S,
        check=False,
    )


def call(
    caller: str,
    target: str,
    *argv: str,
    flags: tuple[str, ...] = (),
    stdin: bytes | None = None,
    config: Path = CONFIG,
) -> subprocess.CompletedProcess[bytes]:
    """``dispatcher --config CONFIG --caller-skill CALLER [FLAGS] TARGET ARGV...``."""
    return cli(
        "--config", str(config), "--caller-skill", caller, *flags, target, *argv, stdin=stdin
    )


def dry_run(caller: str, target: str, *argv: str, stdin: bool = False) -> dict[str, object]:
    flags = ("--dry-run", "--stdin") if stdin else ("--dry-run",)
    done = call(caller, target, *argv, flags=flags)
    assert done.returncode == 0, done.stderr.decode()
    payload = json.loads(done.stdout)
    assert isinstance(payload, dict)
    return payload


def gateway_stderr(done: subprocess.CompletedProcess[bytes]) -> bytes:
    """Stderr without the dispatcher's advisory ``warning:`` lines (certification status)."""
    lines = done.stderr.splitlines(keepends=True)
    return b"".join(line for line in lines if not line.startswith(b"warning: "))


def error_line(done: subprocess.CompletedProcess[bytes]) -> dict[str, object]:
    """The single JSON error line of ``--error-format json``."""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    payload = json.loads(lines[0])
    assert isinstance(payload, dict)
    return payload


def refusal(
    caller: str,
    target: str,
    *argv: str,
    flags: tuple[str, ...] = (),
    stdin: bytes | None = None,
    config: Path = CONFIG,
) -> object:
    """The ``code`` of a request the dispatcher refuses (exit 2, nothing on stdout)."""
    flags = ("--error-format", "json", *flags)
    done = call(caller, target, *argv, flags=flags, stdin=stdin, config=config)
    assert done.returncode == 2, done.stderr.decode()
    assert done.stdout == b""
    return error_line(done)["code"]


@pytest.fixture
def repository_copy(tmp_path: Path) -> Path:
    """A private copy of the example repository (its journal data left behind)."""

    def ignore(directory: str, names: list[str]) -> list[str]:
        if Path(directory).parts[-3:] == ("journal", "_rtx", "data"):
            return [n for n in names if n != ".gitignore"]
        return [n for n in names if n == "__pycache__"]

    root = tmp_path.resolve() / "repository"
    shutil.copytree(EXAMPLE, root, ignore=ignore)
    return root


# --------------------------------------------------------------------------- #
# The shape of the example itself


def _module_blueprints() -> list[Path]:
    return sorted(EXAMPLE.glob("*/**/blueprint.yaml"))


def _blueprint(path: Path) -> Any:
    """A blueprint through the dispatcher's strict loader (no anchors, tags, duplicates)."""
    return load_yaml(path.read_bytes(), what=str(path))


def test_every_module_blueprint_is_a_strict_v6_document_with_the_schema_required_fields() -> None:
    required = {
        "schema_version",
        "node_type",
        "id",
        "version",
        "maturity",
        "gateway",
        "content",
        "authority",
        "sources",
        "children",
        "namespace_exports",
        "exports",
    }
    blueprints = _module_blueprints()
    assert len(blueprints) == 16
    for path in blueprints:
        data = _blueprint(path)
        module_id = ".".join(path.parent.relative_to(EXAMPLE).parts[1:])
        assert required <= data.keys(), path
        assert (data["schema_version"], data["node_type"], data["id"]) == (6, "module", module_id)
        assert type(data["version"]) is int
        assert data["version"] >= 1
        for key in ("sources", "children", "namespace_exports", "exports"):
            assert isinstance(data[key], dict), (path, key)
        assert all(value == {} for value in data["children"].values())
        is_skill = path.parent.parent.name == "skills"
        assert ("discovery" in data) is is_skill, path
        if is_skill:
            assert data["discovery"]["mechanism"] == "skill"
            assert {"installation_tier", "personal_preference"} <= data.keys()


def test_every_source_blueprint_is_a_v6_behavioral_source_whose_gateway_exists() -> None:
    required = {
        "schema_version",
        "node_type",
        "id",
        "version",
        "maturity",
        "gateway",
        "content",
        "dependencies",
        "uses_interfaces",
        "interfaces",
    }
    sources = 0
    for path in _module_blueprints():
        module = _blueprint(path)
        for source_id, locator in module["sources"].items():
            assert locator["blueprint"]["base"] == "module-root"
            source_path = path.parent / locator["blueprint"]["path"]
            data = _blueprint(source_path)
            assert required <= data.keys(), source_path
            assert (data["schema_version"], data["node_type"], data["id"]) == (
                6,
                "behavioral_source",
                source_id,
            )
            assert (path.parent / data["gateway"]["path"]).is_file()
            for interface in data["interfaces"].values():
                if data["gateway"]["language"] == "Markdown":  # a Markdown setup step
                    assert "process_binding" not in interface
                    continue
                assert {"version", "content", "uses_interfaces", "contract"} <= interface.keys()
                assert interface["process_binding"]["kind"] == "process"
            sources += 1
    assert sources == 10


# --------------------------------------------------------------------------- #
# A read-only level-0 tool with machine-audience output


def test_list_notes_prints_the_note_names_sorted() -> None:
    done = call("notes", "notes._rtx.interface.list-notes")

    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"groceries\ntoday\nwelcome\n"
    assert gateway_stderr(done) == b""


def test_a_dry_run_reports_command_cwd_level_audiences_and_stdin_without_running() -> None:
    payload = dry_run("notes", "notes._rtx.interface.list-notes")

    assert payload["command"] == []
    assert payload["cwd"] == str(EXAMPLE / "skills" / "notes" / "_rtx")
    assert payload["security_level"] == 0
    assert payload["output_audiences"] == {"stdout": "machine", "stderr": "both"}
    assert payload["stdin"] is False
    assert payload["pattern"] == "no-arguments"
    assert payload["implementing_source_id"] == "notes._rtx.source.reader"
    assert payload["python_target"]["process_entry"] == "ListNotes"  # type: ignore[index]
    argv = payload["argv"]
    assert isinstance(argv, list)
    assert argv[0] == sys.executable


def test_read_note_refuses_a_path_before_any_gateway_code_runs() -> None:
    code = refusal("planner", "notes._rtx.interface.read-note", "../../officina")

    assert code == "dispatcher.resolution_failed"


def test_read_note_reports_an_unknown_note_with_exit_1_and_a_diagnostic() -> None:
    done = call("planner", "notes._rtx.interface.read-note", "missing")

    assert done.returncode == 1
    assert done.stdout == b""
    assert b"no note named missing" in done.stderr


def test_a_wrong_version_pin_is_an_error_not_a_retry() -> None:
    code = refusal("notes", "notes._rtx.interface.list-notes@2")

    assert code == "dispatcher.interface_version_mismatch"


# --------------------------------------------------------------------------- #
# Security levels, derived from each contract


@pytest.mark.parametrize(
    ("caller", "target", "argv", "stdin", "level"),
    [
        ("notes", "notes._rtx.interface.list-notes", (), False, 0),
        ("planner", "notes._rtx.interface.read-note", ("today",), False, 0),
        ("journal", "journal._rtx.interface.add-entry", ("garden", "roses"), False, 1),
        ("journal", "journal._rtx.interface.show-entries", ("garden",), False, 0),
        ("web", "web._rtx.interface.fetch-title", ("http://127.0.0.1:9/",), False, 2),
        ("planner", "planner._rtx.interface.morning-brief", (), False, 0),
        ("signer", "signer._rtx.interface.sign-message", ("hello",), True, 0),
        ("notes", "textkit.interface.word-count", (), True, 0),
        ("timer", "timer._rtx.interface.wait", ("1",), False, 0),
    ],
)
def test_each_tool_has_the_security_level_its_contract_implies(
    caller: str, target: str, argv: tuple[str, ...], stdin: bool, level: int
) -> None:
    assert dry_run(caller, target, *argv, stdin=stdin)["security_level"] == level


# --------------------------------------------------------------------------- #
# Level 1: writes only inside the module's own filesystem area


def test_add_entry_writes_only_its_topic_file_inside_the_data_area(repository_copy: Path) -> None:
    config = repository_copy / "officina.toml"
    data = repository_copy / "skills" / "journal" / "_rtx" / "data"

    add = "journal._rtx.interface.add-entry"
    first = call("journal", add, "garden", "water", "the", "roses", config=config)
    second = call("journal", add, "garden", "buy", "seeds", config=config)
    shown = call("journal", "journal._rtx.interface.show-entries", "garden", config=config)

    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert first.stdout == b"added an entry to garden\n"
    assert sorted(p.name for p in data.iterdir()) == [".gitignore", "garden.txt"]
    assert (data / "garden.txt").read_text("utf-8") == "water the roses\nbuy seeds\n"
    assert shown.returncode == 0
    assert shown.stdout == b"water the roses\nbuy seeds\n"


def test_add_entry_refuses_a_topic_that_would_leave_the_data_area(repository_copy: Path) -> None:
    config = repository_copy / "officina.toml"

    code = refusal("journal", "journal._rtx.interface.add-entry", "../escape", "x", config=config)

    assert code == "dispatcher.resolution_failed"
    assert not (repository_copy / "skills" / "journal" / "escape.txt").exists()


def test_the_journal_code_is_private_to_the_journal_skill() -> None:
    code = refusal("notes", "journal._rtx.interface.show-entries", "garden")

    assert code == "dispatcher.namespace_route_missing"


# --------------------------------------------------------------------------- #
# A private _rtx child reached through a namespace route, and a denial


def test_another_skill_reads_a_note_through_the_namespace_route() -> None:
    done = call("planner", "notes._rtx.interface.read-note", "today")

    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == TODAY


def test_a_skill_the_interface_access_does_not_name_is_denied_with_a_json_error() -> None:
    done = call(
        "journal", "notes._rtx.interface.read-note", "today", flags=("--error-format", "json")
    )

    assert done.returncode == 2
    assert done.stdout == b""
    error = error_line(done)
    assert error["schema_version"] == 1
    assert error["code"] == "dispatcher.unauthorized_caller"
    assert error["caller_module_id"] == "journal"
    assert error["interface_id"] == "notes._rtx.interface.read-note"
    # The diagnostic names the filter that refused (documented message format).
    assert str(error["message"]).endswith("[caller-filtered:namespace-interface:notes]")


def test_the_same_denial_happens_on_a_dry_run() -> None:
    code = refusal("journal", "notes._rtx.interface.read-note", "today", flags=("--dry-run",))

    assert code == "dispatcher.unauthorized_caller"


def test_the_route_open_to_all_modules_admits_a_skill_the_interface_policy_would_not() -> None:
    done = call("journal", "notes._rtx.interface.list-notes")

    assert done.returncode == 0
    assert done.stdout == b"groceries\ntoday\nwelcome\n"


def test_a_library_module_cannot_be_a_host_caller() -> None:
    code = refusal("textkit", "textkit.interface.word-count")

    assert code == "dispatcher.host_caller_invalid"


# --------------------------------------------------------------------------- #
# Nested calls


def test_morning_brief_prints_the_output_of_two_nested_calls() -> None:
    done = call("planner", "planner._rtx.interface.morning-brief")

    assert done.returncode == 0, done.stderr.decode()
    title = f"Morning brief (today, {len(TODAY.split())} words)"
    assert done.stdout.decode() == f"{title}\n{'=' * len(title)}\n{TODAY}"


def test_a_nested_call_is_authorized_as_the_running_module_not_the_host_caller(
    repository_copy: Path,
) -> None:
    # Narrow read-note to planner._rtx only: the host skill `planner` loses it,
    # the nested call made by planner._rtx keeps it.
    notes = repository_copy / "skills" / "notes" / "blueprint.yaml"
    text = notes.read_text("utf-8")
    assert text.count("        - planner\n") == 1
    notes.write_text(text.replace("        - planner\n", "        - planner._rtx\n"), "utf-8")
    config = repository_copy / "officina.toml"

    direct = call("planner", "notes._rtx.interface.read-note", "today", config=config)
    nested = call("planner", "planner._rtx.interface.morning-brief", config=config)

    assert direct.returncode == 2
    assert b"caller-filtered:namespace-interface:notes" in direct.stderr
    assert nested.returncode == 0, nested.stderr.decode()
    assert nested.stdout.decode().endswith(TODAY)


def test_a_refused_nested_call_fails_the_outer_call_with_the_refusal_code(
    repository_copy: Path,
) -> None:
    notes = repository_copy / "skills" / "notes" / "blueprint.yaml"
    text = notes.read_text("utf-8")
    notes.write_text(text.replace("        - planner\n", "        - journal\n"), "utf-8")

    done = call(
        "planner", "planner._rtx.interface.morning-brief", config=repository_copy / "officina.toml"
    )

    assert done.returncode == 1
    assert done.stdout == b""
    assert b"nested call refused: dispatcher.unauthorized_caller" in done.stderr


# --------------------------------------------------------------------------- #
# Standard input


def test_word_count_reads_stdin_when_the_caller_sends_it() -> None:
    done = call(
        "notes", "textkit.interface.word-count", flags=("--stdin",), stdin=b"one two three\nfour\n"
    )

    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout) == {"bytes": 19, "lines": 2, "words": 4}


def test_without_stdin_flag_the_gateway_sees_empty_stdin_not_the_dispatchers() -> None:
    done = call("notes", "textkit.interface.word-count", stdin=b"never forwarded\n")

    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout) == {"bytes": 0, "lines": 0, "words": 0}


def test_stdin_is_refused_for_an_interface_whose_patterns_do_not_allow_it() -> None:
    code = refusal("notes", "notes._rtx.interface.list-notes", flags=("--stdin",), stdin=b"x")

    assert code == "dispatcher.resolution_failed"


# --------------------------------------------------------------------------- #
# A secret argument delivered on stdin

SECRET = "correct-horse-battery-staple-8d1f"


def test_the_secret_key_is_bound_to_stdin_and_never_appears_in_the_dry_run() -> None:
    # The key is offered on stdin, but a dry run never reads stdin.
    done = call(
        "signer",
        "signer._rtx.interface.sign-message",
        "hello",
        flags=("--dry-run", "--stdin"),
        stdin=SECRET.encode(),
    )

    assert done.returncode == 0, done.stderr.decode()
    payload = json.loads(done.stdout)
    assert payload["command"] == ["hello"]
    assert payload["argv"][-2:] == ["--", "hello"]
    assert payload["stdin"] is True
    assert payload["pattern"] == ""
    assert SECRET.encode() not in done.stdout + done.stderr


def test_sign_message_signs_with_the_key_from_stdin_and_the_key_is_not_in_the_child_argv() -> None:
    done = call(
        "signer",
        "signer._rtx.interface.sign-message",
        "hello",
        "--audit-argv",
        flags=("--stdin",),
        stdin=SECRET.encode() + b"\n",
    )

    assert done.returncode == 0, done.stderr.decode()
    result = json.loads(done.stdout)
    expected = hmac.new(SECRET.encode(), b"hello", hashlib.sha256).hexdigest()
    assert result["signature"] == expected
    child_argv = result["argv"]
    assert child_argv[-2:] == ["hello", "--audit-argv"]
    assert not any(SECRET in token for token in child_argv)
    assert SECRET.encode() not in done.stdout + done.stderr


def test_a_secret_typed_on_the_command_line_is_refused_without_echoing_it() -> None:
    done = call(
        "signer",
        "signer._rtx.interface.sign-message",
        "hello",
        "--key",
        SECRET,
        flags=("--error-format", "json"),
    )

    assert done.returncode == 2
    assert error_line(done)["code"] == "dispatcher.resolution_failed"
    assert SECRET.encode() not in done.stdout + done.stderr


def test_sign_message_without_stdin_is_refused_because_the_key_is_required() -> None:
    code = refusal("signer", "signer._rtx.interface.sign-message", "hello")

    assert code == "dispatcher.resolution_failed"


# --------------------------------------------------------------------------- #
# A level-2 tool: the network (only ever a local server in tests)


class _Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/")
            self.end_headers()
            return
        body = b"<html><head><title>  Hello from\n the test </title></head><body/></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture
def local_site() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=WAIT_S)


def test_fetch_title_gets_the_title_from_a_local_server(local_site: str) -> None:
    done = call("web", "web._rtx.interface.fetch-title", f"{local_site}/")

    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"Hello from the test\n"


def test_fetch_title_follows_no_redirect(local_site: str) -> None:
    done = call("web", "web._rtx.interface.fetch-title", f"{local_site}/moved")

    assert done.returncode == 1
    assert b"request failed: HTTPError" in done.stderr


def test_fetch_title_refuses_a_non_http_url_before_launch() -> None:
    code = refusal("web", "web._rtx.interface.fetch-title", "file:///etc/passwd")

    assert code == "dispatcher.resolution_failed"


# --------------------------------------------------------------------------- #
# A slow tool and timeouts


def test_wait_zero_seconds_succeeds() -> None:
    done = call("timer", "timer._rtx.interface.wait", "0")

    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"waited 0 s\n"


def test_wait_refuses_more_than_thirty_seconds_before_launch() -> None:
    code = refusal("timer", "timer._rtx.interface.wait", "31")

    assert code == "dispatcher.resolution_failed"


def test_a_call_that_outlives_its_time_limit_is_killed_and_reported_as_timed_out() -> None:
    repository = Repository.open(CONFIG)
    request = RouteRequest(caller="timer", target="timer._rtx.interface.wait", argv=("30",))

    result = repository.invoke(request, limits=ExecLimits(timeout_s=1.0))

    assert result.timed_out is True
    assert result.exit_code != 0
    assert result.stdout == ""


# --------------------------------------------------------------------------- #
# names and describe


def test_names_lists_every_export_and_matches_the_golden_file() -> None:
    listed = cli("names", "--config", str(CONFIG))
    checked = cli("names", "--config", str(CONFIG), "--golden", str(GOLDEN))

    assert listed.returncode == 0, listed.stderr.decode()
    assert listed.stdout.decode() == GOLDEN.read_text("utf-8")
    assert checked.returncode == 0, checked.stderr.decode()
    assert checked.stdout.decode() == GOLDEN.read_text("utf-8")


def test_describe_prints_level_mcp_tool_usage_stdin_and_audiences() -> None:
    done = cli("describe", "--config", str(CONFIG), "planner._rtx.interface.morning-brief")

    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.decode().splitlines()
    assert lines[:7] == [
        "Interface: planner._rtx.interface.morning-brief@1",
        "Security level: 0",
        "MCP tool: invoke_security_0",
        "Usage: [NOTE]",
        "Stdin: refused",
        "Output audiences: stdout=human, stderr=both",
        "Process-bindable: yes",
    ]


@pytest.mark.parametrize(
    ("interface", "stdin_line"),
    [
        ("signer._rtx.interface.sign-message", "Stdin: required"),
        ("textkit.interface.word-count", "Stdin: accepted"),
        ("web._rtx.interface.fetch-title", "Security level: 2"),
        ("journal._rtx.interface.add-entry", "Security level: 1"),
    ],
)
def test_describe_shows_how_each_interface_takes_stdin_and_its_level(
    interface: str, stdin_line: str
) -> None:
    done = cli("describe", "--config", str(CONFIG), interface)

    assert done.returncode == 0, done.stderr.decode()
    assert stdin_line in done.stdout.decode().splitlines()
