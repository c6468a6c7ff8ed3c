"""Every process-bindable export of the famulus corpus, through the binding stage.

Blueprints are read with ``yaml.safe_load`` directly (test code only), so this
file does not depend on the loader. It checks that every pattern of every
export accepts a minimal argv built from the pattern itself, that the routes
and observations of BLUEPRINTS-V6 6.2 and 11.2 compile exactly as documented,
and it pins the level distribution the docs report.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Final

import pytest

from boring_dispatch.errors import ResolutionFailed, SecurityLevelUnavailable
from boring_dispatch.records import CompiledBinding
from boring_dispatch.repository._shapes import RefusalReason
from boring_dispatch.repository.bind.binding import compile_binding, python_target, secret_arguments
from boring_dispatch.repository.facts.audiences import output_audiences
from boring_dispatch.repository.facts.levels import derive_level
from kits.cases import corpus_config
from kits.corpus import (
    BINDABLE,
    EXPORTS,
    PATTERN_MODE,
    SECRET_IN_ARGV,
    UNSATISFIABLE,
    minimal_argv,
)


def compile_(export_id: str, *argv: str, stdin: bool = False) -> CompiledBinding:
    return compile_binding(
        EXPORTS[export_id].interface, interface_id=export_id, argv=argv, stdin=stdin
    )


def refusal(export_id: str, *argv: str, stdin: bool = False, reason: RefusalReason) -> str:
    with pytest.raises(ResolutionFailed) as caught:
        compile_(export_id, *argv, stdin=stdin)
    assert caught.value.code == "dispatcher.resolution_failed"
    assert caught.value.reason == reason, caught.value.message
    return caught.value.message


def test_the_corpus_has_195_exports_and_112_process_bindable_ones() -> None:
    assert len(EXPORTS) == 195
    assert len(BINDABLE) == 112
    assert len(PATTERN_MODE) == 109
    assert sorted(set(BINDABLE) - set(PATTERN_MODE)) == [
        "wakeup.interface.auto-policy",
        "wakeup.interface.explicit-schedule",
        "wakeup.interface.infer-schedule",
    ]


# --------------------------------------------------------------------------- #
# A minimal accepted argv for every pattern

PATTERN_CASES: Final = [
    pytest.param(export_id, index, id=f"{export_id}#{index}")
    for export_id, export in PATTERN_MODE.items()
    for index in range(len(export.binding["patterns"]))  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("export_id", "index"), PATTERN_CASES)
def test_every_corpus_pattern_accepts_its_minimal_argv(export_id: str, index: int) -> None:
    binding = PATTERN_MODE[export_id].binding
    pattern = binding["patterns"][index]  # type: ignore[index]
    name = pattern.get("name", f"pattern_{index}")
    argv = minimal_argv(pattern)
    if (export_id, name) in UNSATISFIABLE:
        refusal(export_id, *argv, reason="no_pattern")
        return
    if export_id in SECRET_IN_ARGV:
        assert "must travel on stdin" in refusal(export_id, *argv, reason="secret_in_argv")
        return
    compiled = compile_(export_id, *argv)
    assert compiled.pattern == name
    assert compiled.command == (*binding.get("args_prefix", []), *argv)  # type: ignore[misc]
    assert compiled.takes_stdin is False
    assert compiled.entry == binding["entry"]
    if pattern.get("allow_stdin") is True:
        assert compile_(export_id, *argv, stdin=True).takes_stdin is True
    else:
        refusal(export_id, *argv, stdin=True, reason="no_pattern")


@pytest.mark.parametrize(
    ("export_id", "argv", "command"),
    [
        ("wakeup.interface.auto-policy", ["on"], ["auto", "on"]),
        (
            "wakeup.interface.auto-policy",
            ["status", "codex", "s-1"],
            ["auto", "status", "codex", "s-1"],
        ),
        ("wakeup.interface.infer-schedule", [], ["infer", "--delay", "1 minute"]),
        (
            "wakeup.interface.infer-schedule",
            ["--text", "resets 5pm", "--message", "go"],
            ["infer", "--delay", "1 minute", "--message", "go", "--text", "resets 5pm"],
        ),
        (
            "wakeup.interface.explicit-schedule",
            ["claude", "s", "5h"],
            ["schedule", "claude", "s", "5h", "--delay", "1 minute"],
        ),
    ],
)
def test_argument_mode_exports_compile(export_id: str, argv: list[str], command: list[str]) -> None:
    compiled = compile_(export_id, *argv)
    assert list(compiled.command) == command
    assert compiled.pattern == ""


def test_auto_policy_refuses_an_unknown_action() -> None:
    refusal("wakeup.interface.auto-policy", "maybe", reason="value_enum")


@pytest.mark.parametrize("export_id", sorted(BINDABLE))
def test_every_corpus_export_has_a_valid_python_target(export_id: str) -> None:
    export = BINDABLE[export_id]
    target = python_target(export.module, export.source, str(export.binding["entry"]))
    assert target.logical_entrypoint.startswith(target.logical_package)


def test_the_corpus_has_no_secret_argument_in_argument_mode() -> None:
    for export_id, export in BINDABLE.items():
        if "patterns" not in export.binding:
            assert secret_arguments(export.interface) == (), export_id


def test_pattern_mode_secrets_are_listed_for_redaction() -> None:
    """Pattern-mode contracts are documentation; their secrets may sit in argv."""
    assert secret_arguments(EXPORTS["g-calendar._rtx.interface.setup-oauth"].interface) == (
        "client-id",
        "client-secret",
        "from-json",
    )


# --------------------------------------------------------------------------- #
# Observations of BLUEPRINTS-V6 6.2

READ_LIST = "list-manager._rtx.interface.read-list"
WEATHER = "get-weather._rtx.interface.scripts-weather"
UPDATE_LIST = "list-manager._rtx.interface.update-list"


def test_read_list_passes_the_argv_through() -> None:
    compiled = compile_(READ_LIST, "/tmp/todo.yaml", "state=incomplete")
    assert compiled.command == ("read", "/tmp/todo.yaml", "state=incomplete")
    assert compiled.pattern == "pattern_0"
    assert compile_(READ_LIST, "a", "-D", "--sort", "x").command == (
        "read",
        "a",
        "-D",
        "--sort",
        "x",
    )


def test_read_list_route_smoke_is_not_special() -> None:
    """Upstream's shortcut compiled ``["read", "--route-smoke"]``; here it matches no pattern."""
    refusal(READ_LIST, "--route-smoke", reason="no_pattern")


def test_get_weather_observations() -> None:
    assert "does not match any declared pattern" in refusal(
        WEATHER, "--verbose", reason="no_pattern"
    )
    assert "does not match any declared pattern" in refusal(
        WEATHER, "--date", "2026-1-2", reason="no_pattern"
    )
    assert refusal(WEATHER, "--location", "-x", reason="missing_option_value").endswith(
        "flag --location requires a value"
    )


def test_update_list_observations() -> None:
    assert compile_(UPDATE_LIST, "x.yaml", "--file", "p.yaml").pattern == "file-mode"
    with_stdin = compile_(UPDATE_LIST, "x.yaml", stdin=True)
    assert (with_stdin.pattern, with_stdin.takes_stdin, with_stdin.command) == (
        "stdin-batch",
        True,
        ("update", "x.yaml"),
    )
    plain = compile_(UPDATE_LIST, "x.yaml")
    assert (plain.pattern, plain.takes_stdin) == ("stdin-batch", False)
    assert "does not match any declared pattern" in refusal(
        UPDATE_LIST, "x.yaml", "--file", "p", stdin=True, reason="no_pattern"
    )
    assert refusal(UPDATE_LIST, "x.yaml", "--file=p.yaml", reason="switch_with_value").endswith(
        "switch --file does not take a value"
    )


# --------------------------------------------------------------------------- #
# The five routes of BLUEPRINTS-V6 11.2 (binding stage)


@dataclass(frozen=True, slots=True)
class RouteCase:
    export_id: str
    argv: tuple[str, ...]
    command: tuple[str, ...]
    pattern: str
    cwd: str
    gateway: str
    entry: str
    package_hex: str
    entrypoint_suffix: str
    stdin: bool = False
    decision: bool = False


ROUTES: Final = [
    RouteCase(
        READ_LIST,
        ("/tmp/todo.yaml", "state=incomplete"),
        ("read", "/tmp/todo.yaml", "state=incomplete"),
        "pattern_0",
        "skills/list-manager/_rtx",
        "_yaml_store.py",
        "Interface",
        "6c6973742d6d616e616765722e5f727478",
        "._yaml_store",
    ),
    RouteCase(
        "daily-plan._rtx.interface.render-plan",
        ("extract", "/tmp/plan.md", "/tmp/outdir"),
        ("extract", "/tmp/plan.md", "/tmp/outdir"),
        "pattern_0",
        "skills/daily-plan/_rtx",
        "_render_plan.py",
        "Interface",
        "6461696c792d706c616e2e5f727478",
        "._render_plan",
    ),
    RouteCase(
        WEATHER,
        ("--date", "2026-01-02", "--location", "Paris"),
        ("--date", "2026-01-02", "--location", "Paris"),
        "pattern_0",
        "skills/get-weather/_rtx",
        "_weather_client.py",
        "Interface",
        "6765742d776561746865722e5f727478",
        "._weather_client",
    ),
    RouteCase(
        "send-feedback._rtx.interface.check-route",
        (),
        (),
        "pattern_0",
        "skills/send-feedback/_rtx",
        "_github_issue.py",
        "CheckRoute",
        "73656e642d666565646261636b2e5f727478",
        "._github_issue",
    ),
    RouteCase(
        "wakeup.interface.explicit-schedule",
        ("claude", "abc123", "2026-01-01T05:00", "--delay", "5m"),
        ("schedule", "claude", "abc123", "2026-01-01T05:00", "--delay", "5m"),
        "",
        "src/officina/wakeup",
        "cli.py",
        "Interface",
        "77616b657570",
        ".cli",
    ),
    RouteCase(  # the bonus route: stdin accepted by the stdin-batch pattern
        UPDATE_LIST,
        ("/tmp/x.yaml",),
        ("update", "/tmp/x.yaml"),
        "stdin-batch",
        "skills/list-manager/_rtx",
        "_yaml_store.py",
        "Interface",
        "6c6973742d6d616e616765722e5f727478",
        "._yaml_store",
        stdin=True,
        decision=True,
    ),
]


@pytest.mark.parametrize("route", ROUTES, ids=[r.export_id for r in ROUTES])
def test_the_documented_routes_compile_exactly(route: RouteCase) -> None:
    export = EXPORTS[route.export_id]
    compiled = compile_(route.export_id, *route.argv, stdin=route.stdin)
    assert (compiled.command, compiled.pattern, compiled.takes_stdin) == (
        route.command,
        route.pattern,
        route.decision,
    )
    assert compiled.entry == route.entry
    assert export.module.root == corpus_config("famulus").parent / route.cwd
    python = python_target(export.module, export.source, compiled.entry)
    assert python.gateway_path == route.gateway
    assert python.process_entry == route.entry
    assert python.logical_package == "_officina_module_" + route.package_hex
    assert python.logical_entrypoint == python.logical_package + route.entrypoint_suffix


def test_route_5_appends_the_default_delay() -> None:
    compiled = compile_(
        "wakeup.interface.explicit-schedule", "claude", "abc123", "2026-01-01T05:00"
    )
    assert compiled.command[-2:] == ("--delay", "1 minute")


def test_route_2_variants() -> None:
    refusal("daily-plan._rtx.interface.render-plan", "--route-smoke", reason="no_pattern")
    assert "does not match any declared pattern" in refusal(
        "daily-plan._rtx.interface.render-plan", "bogus", "a", "b", reason="no_pattern"
    )


# --------------------------------------------------------------------------- #
# Derived facts over the corpus

#: The distribution the docs report; update both together.
LEVELS: Final = {0: 18, 1: 4, 2: 90}
LEVEL_1: Final = [
    "cloud-files._rtx.interface.use-google-credential",
    "g-calendar._rtx.interface.use-google-credential",
    "list-manager._rtx.interface.cloud-delete",
    "list-manager._rtx.interface.cloud-init",
]


def test_every_process_bindable_export_has_a_level_and_the_distribution_is_documented() -> None:
    levels: dict[str, int] = {}
    for export_id, export in BINDABLE.items():
        try:
            levels[export_id] = derive_level(export.interface, export.module)
        except SecurityLevelUnavailable:  # pragma: no cover - reported by the assertion below
            levels[export_id] = -1
    assert dict(Counter(levels.values())) == LEVELS
    assert sorted(k for k, v in levels.items() if v == 1) == LEVEL_1
    assert levels[READ_LIST] == 0
    assert levels[WEATHER] == 2


def test_output_audiences_never_fail_on_the_corpus() -> None:
    for export in EXPORTS.values():
        assert set(output_audiences(export.interface).values()) <= {"machine", "human", "both"}
    assert output_audiences(EXPORTS[WEATHER].interface) == {"stdout": "machine", "stderr": "human"}
