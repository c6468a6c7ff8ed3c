"""Every process-bindable export of the famulus corpus, through the binding stage.

Blueprints are read with ``yaml.safe_load`` directly (test code only), so this
file does not depend on the loader. It checks that every pattern of every
export accepts a minimal argv built from the pattern itself, that the routes
and observations of BLUEPRINTS-V6 6.2 and 11.2 compile exactly as documented,
and it pins the level distribution the docs report.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest
import yaml

from boring_dispatch.blueprints.audiences import output_audiences
from boring_dispatch.blueprints.binding import compile_binding, python_target, secret_arguments
from boring_dispatch.blueprints.levels import derive_level
from boring_dispatch.errors import ResolutionFailed, SecurityLevelUnavailable
from boring_dispatch.types import CompiledBinding, ModuleRecord, SourceRecord
from case_data import corpus_config


@dataclass(frozen=True, slots=True)
class Export:
    export_id: str
    module: ModuleRecord
    source: SourceRecord
    interface: Mapping[str, object]

    @property
    def binding(self) -> Mapping[str, object]:
        value = self.interface.get("process_binding")
        return value if isinstance(value, Mapping) else {}


_PARSED: dict[Path, dict[str, object]] = {}


def _load(path: Path) -> dict[str, object]:
    if path not in _PARSED:  # several exports share one source blueprint
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert isinstance(data, dict)
        _PARSED[path] = data
    return _PARSED[path]


def corpus_exports() -> dict[str, Export]:
    root = corpus_config("famulus").parent
    out: dict[str, Export] = {}
    for configured in ("skills", "src/officina"):
        for blueprint in sorted((root / configured).rglob("blueprint.yaml")):
            data = _load(blueprint)
            module = ModuleRecord(
                module_id=str(data["id"]),
                root=blueprint.parent,
                configured_root=root / configured,
                version=int(str(data["version"])),
                data=data,
            )
            exports = data["exports"]
            sources = data["sources"]
            assert isinstance(exports, dict)
            assert isinstance(sources, dict)
            for export_id, export in exports.items():
                source_interface = export["source_interface"]
                source_id = source_interface.rpartition(".interface.")[0]
                source_data = _load(blueprint.parent / sources[source_id]["blueprint"]["path"])
                source = SourceRecord(
                    source_id=source_id,
                    module=module,
                    version=int(str(source_data["version"])),
                    gateway_path=source_data["gateway"]["path"],  # type: ignore[index]
                    data=source_data,
                )
                interfaces = source_data["interfaces"]
                assert isinstance(interfaces, dict)
                out[export_id] = Export(export_id, module, source, interfaces[source_interface])
    return out


EXPORTS: Final = corpus_exports()
BINDABLE: Final = {
    export_id: export
    for export_id, export in sorted(EXPORTS.items())
    if export.binding.get("kind") == "process"
}
PATTERN_MODE: Final = {k: v for k, v in BINDABLE.items() if "patterns" in v.binding}


def compile_(export_id: str, *argv: str, stdin: bool = False) -> CompiledBinding:
    return compile_binding(
        EXPORTS[export_id].interface, interface_id=export_id, argv=argv, stdin=stdin
    )


def refusal(export_id: str, *argv: str, stdin: bool = False) -> str:
    with pytest.raises(ResolutionFailed) as caught:
        compile_(export_id, *argv, stdin=stdin)
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

#: Values for regexes the generic candidates below do not satisfy.
VALUE_OVERRIDES: Final = {
    r"^[0-9a-f]{40}$": "0" * 40,
    r"^[0-9a-fA-F]{40,64}$": "a" * 40,
    r"^[0-9a-f]{6}$": "abcdef",
    r"^\[.+\]$": "[1]",
    r"^/.+$": "/x",
}
GENERIC_VALUES: Final = ("x", "1", "2026-01-02", "a-b")

#: Patterns no argv can match: they require a flag their own allowed_flags omit.
UNSATISFIABLE: Final = {
    ("list-manager._rtx.interface.cloud-create-entry", "stdin-mode"),
    ("list-manager._rtx.interface.cloud-update", "stdin-mode"),
}


def value_for(regex: str, *, full: bool) -> str:
    """A value the regex accepts: an override, a generic value, or a word it names."""
    words: list[str] = re.findall(r"[a-z][a-z-]*[a-z]", regex)
    candidates = [
        VALUE_OVERRIDES.get(regex, ""),
        *GENERIC_VALUES,
        *words,
        *(w + "/x" for w in words),
    ]
    for candidate in candidates:
        found = re.fullmatch(regex, candidate) if full else re.match(regex, candidate)
        if candidate and found:
            return candidate
    pytest.fail(f"add a VALUE_OVERRIDES entry for {regex!r}")


def minimal_argv(pattern: Mapping[str, object]) -> list[str]:
    """Minimum positionals (matching positional_patterns), then every required flag."""
    flag_patterns = pattern.get("flag_patterns", {})
    positional_patterns = pattern.get("positional_patterns", {})
    assert isinstance(flag_patterns, dict)
    assert isinstance(positional_patterns, dict)
    indexes = {int(key): regex for key, regex in positional_patterns.items()}
    count = max([int(str(pattern.get("min_positionals", 0))), *(i + 1 for i in indexes)])
    argv = [value_for(indexes[i], full=False) if i in indexes else f"p{i}" for i in range(count)]
    required = pattern.get("required_flags", [])
    assert isinstance(required, list)
    for flag in required:
        argv += (
            [flag, value_for(flag_patterns[flag], full=True)] if flag in flag_patterns else [flag]
        )
    return argv


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
        refusal(export_id, *argv)
        return
    compiled = compile_(export_id, *argv)
    assert compiled.pattern == name
    assert compiled.command == (*binding.get("args_prefix", []), *argv)  # type: ignore[misc]
    assert compiled.stdin is False
    assert compiled.entry == binding["entry"]
    if pattern.get("allow_stdin") is True:
        assert compile_(export_id, *argv, stdin=True).stdin is True
    else:
        refusal(export_id, *argv, stdin=True)


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
    refusal("wakeup.interface.auto-policy", "maybe")


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
    refusal(READ_LIST, "--route-smoke")


def test_get_weather_observations() -> None:
    assert "does not match any declared pattern" in refusal(WEATHER, "--verbose")
    assert "does not match any declared pattern" in refusal(WEATHER, "--date", "2026-1-2")
    assert refusal(WEATHER, "--location", "-x").endswith("flag --location requires a value")


def test_update_list_observations() -> None:
    assert compile_(UPDATE_LIST, "x.yaml", "--file", "p.yaml").pattern == "file-mode"
    with_stdin = compile_(UPDATE_LIST, "x.yaml", stdin=True)
    assert (with_stdin.pattern, with_stdin.stdin, with_stdin.command) == (
        "stdin-batch",
        True,
        ("update", "x.yaml"),
    )
    plain = compile_(UPDATE_LIST, "x.yaml")
    assert (plain.pattern, plain.stdin) == ("stdin-batch", False)
    assert "does not match any declared pattern" in refusal(
        UPDATE_LIST, "x.yaml", "--file", "p", stdin=True
    )
    assert refusal(UPDATE_LIST, "x.yaml", "--file=p.yaml").endswith(
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
    assert (compiled.command, compiled.pattern, compiled.stdin) == (
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
    refusal("daily-plan._rtx.interface.render-plan", "--route-smoke")
    assert "does not match any declared pattern" in refusal(
        "daily-plan._rtx.interface.render-plan", "bogus", "a", "b"
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
