"""The `dispatcher` command, run as a real subprocess against the famulus corpus."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "famulus"
CONFIG = CORPUS / "officina.toml"


def dispatcher(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *args],
        input=None if stdin is None else stdin.decode(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def dry_run(caller: str, target: str, *argv: str, extra: tuple[str, ...] = ()) -> dict[str, object]:
    done = dispatcher(
        "--config", str(CONFIG), "--caller-skill", caller, *extra, "--dry-run", target, *argv
    )
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert isinstance(payload, dict)
    return payload


def json_dry_run(caller: str, *target_and_argv: str) -> subprocess.CompletedProcess[str]:
    """A corpus dry run with the JSON error format (the prefix most refusal tests share)."""
    return dispatcher(
        "--config",
        str(CONFIG),
        "--caller-skill",
        caller,
        "--error-format",
        "json",
        "--dry-run",
        *target_and_argv,
    )


def error_line(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.startswith("{")]
    assert len(lines) == 1, done.stderr
    payload = json.loads(lines[0])
    assert isinstance(payload, dict)
    return payload


def test_route_one_dry_runs_as_the_reference_observed() -> None:
    payload = dry_run(
        "daily-plan", "list-manager._rtx.interface.read-list", "/tmp/todo.yaml", "state=incomplete"
    )
    assert payload["command"] == ["read", "/tmp/todo.yaml", "state=incomplete"]
    assert payload["pattern"] == "pattern_0"
    assert payload["cwd"] == str(CORPUS / "skills" / "list-manager" / "_rtx")
    assert payload["implementing_source_id"] == "list-manager._rtx.source.rtx-yaml-store"
    assert payload["script_interface"] == (
        "list-manager._rtx.source.rtx-yaml-store.interface.read-list"
    )
    assert payload["stdin"] is False
    assert payload["caller_source_id"] is None
    assert payload["target"] == "list-manager._rtx.interface.read-list"
    assert payload["target_module_id"] == payload["terminal_module_id"] == "list-manager._rtx"
    assert payload["python_target"] == {
        "gateway_path": "_yaml_store.py",
        "process_entry": "Interface",
        "logical_package": "_officina_module_6c6973742d6d616e616765722e5f727478",
        "logical_entrypoint": "_officina_module_6c6973742d6d616e616765722e5f727478._yaml_store",
    }
    assert payload["warnings"] == [
        {
            "code": "certification-status-unavailable",
            "message": "precomputed certification status is unavailable",
        }
    ]
    argv = payload["argv"]
    assert isinstance(argv, list)
    assert argv[-3:] == ["read", "/tmp/todo.yaml", "state=incomplete"]
    assert "security_level" in payload
    audiences = payload["output_audiences"]
    assert isinstance(audiences, dict)
    assert set(audiences) == {"stdout", "stderr"}


def test_the_repository_config_alias_is_accepted() -> None:
    done = dispatcher(
        "--repository-config",
        str(CONFIG),
        "--caller-skill",
        "daily-plan",
        "--dry-run",
        "daily-plan._rtx.interface.render-plan",
        "extract",
        "/tmp/plan.md",
        "/tmp/o",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["command"] == ["extract", "/tmp/plan.md", "/tmp/o"]


def test_route_three_passes_inline_values_through_unchanged() -> None:
    payload = dry_run(
        "daily-plan",
        "get-weather._rtx.interface.scripts-weather",
        "--date=2026-01-02",
        "--location=Paris",
    )
    assert payload["command"] == ["--date=2026-01-02", "--location=Paris"]
    assert payload["cwd"] == str(CORPUS / "skills" / "get-weather" / "_rtx")


def test_route_four_selects_the_declared_entry_class() -> None:
    payload = dry_run("send-feedback", "send-feedback._rtx.interface.check-route")
    assert payload["command"] == []
    assert payload["python_target"]["process_entry"] == "CheckRoute"  # type: ignore[index]


def test_route_five_compiles_argument_mode_with_the_default_appended() -> None:
    payload = dry_run(
        "llm-wakeup", "wakeup.interface.explicit-schedule", "claude", "abc123", "2026-01-01T05:00"
    )
    assert payload["command"] == [
        "schedule",
        "claude",
        "abc123",
        "2026-01-01T05:00",
        "--delay",
        "1 minute",
    ]
    assert payload["pattern"] == ""
    assert payload["cwd"] == str(CORPUS / "src" / "officina" / "wakeup")


def test_stdin_is_decided_by_the_matching_pattern() -> None:
    payload = dry_run(
        "daily-plan", "list-manager._rtx.interface.update-list", "/tmp/x.yaml", extra=("--stdin",)
    )
    assert payload["pattern"] == "stdin-batch"
    assert payload["stdin"] is True


def test_options_after_the_target_belong_to_the_gateway() -> None:
    done = json_dry_run(
        "daily-plan",
        "daily-plan._rtx.interface.render-plan",
        "extract",
        "a",
        "--dry-run",
    )
    assert error_line(done)["code"] == "dispatcher.resolution_failed"


def test_a_denied_caller_gets_the_documented_json_error_line() -> None:
    done = json_dry_run(
        "get-weather",
        "list-manager._rtx.interface.read-list",
        "/tmp/secret-path.yaml",
    )
    payload = error_line(done)
    assert payload == {
        "schema_version": 1,
        "code": "dispatcher.unauthorized_caller",
        "caller_module_id": "get-weather",
        "target_module_id": payload["target_module_id"],
        "message": "get-weather is not an allowed caller of list-manager._rtx.interface.read-list"
        " [caller-filtered:namespace-interface:list-manager]",
        "interface_id": "list-manager._rtx.interface.read-list",
    }
    assert "secret-path" not in done.stderr


def test_a_private_child_cannot_be_the_host_caller() -> None:
    done = json_dry_run(
        "daily-plan._rtx",
        "daily-plan._rtx.interface.render-plan",
        "extract",
        "a",
        "b",
    )
    assert error_line(done)["code"] == "dispatcher.host_caller_invalid"


def test_a_stale_version_pin_is_an_error_never_a_retry() -> None:
    done = json_dry_run(
        "daily-plan",
        "daily-plan._rtx.interface.render-plan@7",
        "extract",
        "a",
        "b",
    )
    assert error_line(done)["code"] == "dispatcher.interface_version_mismatch"
    assert "interface-version-pin-stale" not in done.stderr
    assert done.stdout == ""


def test_route_smoke_has_no_special_meaning() -> None:
    done = json_dry_run(
        "daily-plan",
        "daily-plan._rtx.interface.render-plan",
        "--route-smoke",
    )
    assert error_line(done)["code"] == "dispatcher.resolution_failed"


def test_a_target_without_the_interface_mark_is_refused_before_anything_else() -> None:
    done = dispatcher(
        "--config",
        "relative/officina.toml",
        "--caller-skill",
        "x",
        "--error-format",
        "json",
        "not-a-target",
    )
    assert done.returncode == 2
    assert done.stderr == (
        "error: target must be a fully qualified `<module>.interface.<name>` export\n"
    )


def test_a_missing_config_fails_closed() -> None:
    done = dispatcher(
        "--caller-skill",
        "daily-plan",
        "--error-format",
        "json",
        "daily-plan._rtx.interface.render-plan",
    )
    payload = error_line(done)
    assert payload["code"] == "dispatcher.runtime_misconfigured"
    assert payload["message"] == "dispatcher requires the exact repository configuration path"


def test_a_relative_config_path_fails_closed() -> None:
    done = dispatcher(
        "--config",
        "officina.toml",
        "--caller-skill",
        "daily-plan",
        "--error-format",
        "json",
        "--dry-run",
        "daily-plan._rtx.interface.x",
    )
    assert error_line(done)["code"] == "dispatcher.runtime_misconfigured"


def test_text_errors_are_one_line_without_a_traceback() -> None:
    done = dispatcher(
        "--config",
        str(CONFIG),
        "--caller-skill",
        "nope",
        "--dry-run",
        "daily-plan._rtx.interface.render-plan",
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: ")
    assert "Traceback" not in done.stderr


def test_abbreviated_options_are_refused() -> None:
    done = dispatcher(
        "--conf",
        str(CONFIG),
        "--caller-skill",
        "daily-plan",
        "--dry-run",
        "daily-plan._rtx.interface.render-plan",
    )
    assert done.returncode == 2


def test_names_lists_every_export_of_the_corpus_sorted(tmp_path: Path) -> None:
    done = dispatcher("names", "--config", str(CONFIG))
    assert done.returncode == 0, done.stderr
    names = done.stdout.splitlines()
    assert names == sorted(names)
    assert "list-manager._rtx.interface.read-list" in names
    assert len(names) == len(set(names)) == 195
    golden = tmp_path / "names.golden"
    golden.write_text("\n".join([*names[1:], "surprise.interface.extra"]) + "\n")
    failed = dispatcher("names", "--config", str(CONFIG), "--golden", str(golden))
    assert failed.returncode == 1
    assert names[0] in failed.stderr
    assert "surprise.interface.extra" in failed.stderr


def test_replay_pushes_each_line_through_the_same_pipeline(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    lines = [
        {
            "caller": "daily-plan",
            "interface": "list-manager._rtx.interface.read-list",
            "version": 1,
            "argv": ["/tmp/todo.yaml"],
            "stdin": None,
        },
        {
            "caller": "daily-plan",
            "interface": "get-weather._rtx.interface.scripts-weather",
            "version": None,
            "arguments": {"positionals": [], "options": {"--date": "2026-01-02"}, "stdin": None},
        },
        "this line is not json",
        {
            "caller": "get-weather",
            "interface": "list-manager._rtx.interface.read-list",
            "version": 1,
            "argv": ["/tmp/todo.yaml"],
            "stdin": None,
        },
    ]
    trace.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    )
    done = dispatcher("replay", "--config", str(CONFIG), "--dry-run", str(trace))
    assert done.returncode == 0, done.stderr
    outcomes = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(outcomes) == 4
    assert outcomes[0]["command"] == ["read", "/tmp/todo.yaml"]
    assert outcomes[1]["command"] == ["--date", "2026-01-02"]
    assert outcomes[2]["error"]["code"] == "dispatcher.invalid_request"
    assert outcomes[3]["error"]["code"] == "dispatcher.unauthorized_caller"
    direct = json_dry_run(
        "get-weather",
        "list-manager._rtx.interface.read-list",
        "/tmp/todo.yaml",
    )
    assert error_line(direct) == outcomes[3]["error"]


def test_describe_prints_the_level_usage_and_audiences() -> None:
    done = dispatcher(
        "describe", "--config", str(CONFIG), "get-weather._rtx.interface.scripts-weather"
    )
    assert done.returncode == 0, done.stderr
    assert "Security level: " in done.stdout
    assert "stdout=machine, stderr=human" in done.stdout
    assert "[--date <YYYY-MM-DD>]" in done.stdout


EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "repository" / "officina.toml"


def test_the_timeout_option_kills_the_gateway_and_says_so() -> None:
    done = dispatcher(
        "--config",
        str(EXAMPLE),
        "--caller-skill",
        "timer",
        "--timeout",
        "0.5",
        "timer._rtx.interface.wait",
        "10",
    )
    assert done.returncode == 124
    assert "error: the gateway timed out after 0.5 s" in done.stderr


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_a_timeout_must_be_a_positive_number_of_seconds(value: str) -> None:
    done = dispatcher(
        "--config",
        str(EXAMPLE),
        "--caller-skill",
        "timer",
        "--timeout",
        value,
        "timer._rtx.interface.wait",
        "1",
    )
    assert done.returncode == 2
    assert "positive number of seconds" in done.stderr or "number of seconds" in done.stderr


def test_a_live_call_passes_the_gateway_exit_code_and_streams_through() -> None:
    done = dispatcher(
        "--config", str(EXAMPLE), "--caller-skill", "notes", "notes._rtx.interface.list-notes"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["groceries", "today", "welcome"]


@pytest.mark.parametrize("kind", ["missing", "directory", "not-utf8"])
def test_an_unreadable_trace_file_is_an_error_line_not_a_traceback(
    tmp_path: Path, kind: str
) -> None:
    trace = tmp_path / "trace.jsonl"
    if kind == "directory":
        trace.mkdir()
    elif kind == "not-utf8":
        trace.write_bytes(b'{"name": "\xff"}\n')
    done = dispatcher("replay", "--config", str(CONFIG), "--dry-run", str(trace))
    assert done.returncode == 2
    assert done.stderr.startswith("error: cannot read the trace file")
    assert "Traceback" not in done.stderr


def test_an_unreadable_golden_file_is_an_error_line_not_a_traceback(tmp_path: Path) -> None:
    golden = tmp_path / "names.golden"
    golden.write_bytes(b"\xff\xfe\n")
    done = dispatcher("names", "--config", str(CONFIG), "--golden", str(golden))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr


def test_a_replay_line_with_a_lone_surrogate_fails_alone(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    bad = '{"caller": "notes", "interface": "notes._rtx.interface.list-notes", "argv": [],'
    trace.write_text(bad + ' "stdin": "\\ud800"}\n' + bad + ' "stdin": null}\n')
    done = dispatcher("replay", "--config", str(EXAMPLE), "--live", str(trace))
    assert done.returncode == 0, done.stderr
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert first["error"]["code"] == "dispatcher.invalid_request"
    assert second["exit_code"] == 0


def test_a_huge_version_pin_is_an_invalid_interface_id() -> None:
    done = json_dry_run(
        "daily-plan",
        "daily-plan._rtx.interface.render-plan@" + "9" * 5000,
    )
    assert error_line(done)["code"] == "dispatcher.invalid_interface_id"


def test_the_installed_script_finds_a_registry_module_in_the_working_directory() -> None:
    script = Path(sys.executable).parent / "dispatcher"
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [
            str(script),
            "names",
            "--registry",
            "examples.support_and_billing.support:SUPPORT",
            "--golden",
            "examples/support_and_billing/support.golden",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["finish", "get_job", "lookup_invoice"]


@pytest.mark.parametrize(
    "options",
    [
        ("--caller-skill", "journal", "--caller-skill", "planner"),
        ("--caller-skill=journal", "--caller-skill", "planner"),
        ("--caller-skill", "planner", "--config", str(EXAMPLE)),
        ("--caller-skill", "planner", "--repository-config", str(EXAMPLE)),
        ("--caller-skill", "planner", "--error-format", "json", "--error-format", "text"),
        ("--caller-skill", "planner", "--timeout", "5", "--timeout", "6"),
    ],
)
def test_an_option_given_twice_is_refused_never_silently_replaced(options: tuple[str, ...]) -> None:
    done = dispatcher(
        "--config", str(EXAMPLE), *options, "--dry-run", "notes._rtx.interface.read-note", "today"
    )
    assert done.returncode == 2
    assert "given more than once" in done.stderr
    assert done.stdout == ""


SUPPORT_SPEC = "examples.support_and_billing.support:SUPPORT"
ROOT = Path(__file__).resolve().parents[3]


def _in_root(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_names_of_a_python_table_fail_on_a_surprise_and_on_a_missing_name(tmp_path: Path) -> None:
    golden = tmp_path / "support.golden"
    golden.write_text("finish\nget_job\nrefund\n")  # refund is missing; lookup_invoice a surprise
    done = _in_root("names", "--registry", SUPPORT_SPEC, "--golden", str(golden))
    assert done.returncode == 1
    assert "lookup_invoice" in done.stderr
    assert "refund" in done.stderr


def test_replay_of_a_python_table_exits_non_zero_on_a_difference(tmp_path: Path) -> None:
    same: dict[str, object] = {"name": "get_job", "args": {"job_id": 7}}
    recorded = json.loads(_in_root_replay(tmp_path, [same]).stdout.splitlines()[0])
    trace = tmp_path / "changed.jsonl"
    lines = [
        {**same, "observation": recorded},
        {**same, "observation": {"ok": True, "result": {"job_id": 7, "status": "CHANGED"}}},
    ]
    trace.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    done = _in_root("replay", "--registry", SUPPORT_SPEC, "--live", str(trace))
    assert done.returncode == 1
    assert len(done.stdout.splitlines()) == 2
    matching = tmp_path / "same.jsonl"
    matching.write_text(json.dumps(lines[0]) + "\n")
    assert _in_root("replay", "--registry", SUPPORT_SPEC, "--live", str(matching)).returncode == 0


def _in_root_replay(
    tmp_path: Path, calls: list[dict[str, object]]
) -> subprocess.CompletedProcess[str]:
    trace = tmp_path / "calls.jsonl"
    trace.write_text("\n".join(json.dumps(call) for call in calls) + "\n")
    done = _in_root("replay", "--registry", SUPPORT_SPEC, "--live", str(trace))
    assert done.returncode == 0, done.stderr
    return done


def test_a_bad_registry_spec_is_a_json_error_line_when_asked() -> None:
    done = _in_root("names", "--registry", "no.such.module:NAME", "--error-format", "json")
    assert done.returncode == 2
    payload = json.loads(done.stderr.strip().splitlines()[-1])
    assert payload["code"] == "registry_invalid"
    assert payload["schema_version"] == 1
