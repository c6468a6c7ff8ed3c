"""The child environment is an allowlist plus fixed values, never a copy of ours."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.observe.trace import new_trace_id
from boring_dispatch.process.env import FIXED, child_environment
from kits.gateways import ALLOWED_ENV

# sudo's initial_badenv_table (abridged) plus credentials and our own hijack list.
HOSTILE = {
    "LD_PRELOAD": "/tmp/evil.so",
    "LD_LIBRARY_PATH": "/tmp",
    "LD_AUDIT": "/tmp/evil.so",
    "PYTHONPATH": "/tmp/evil",
    "PYTHONHOME": "/tmp/evil",
    "PYTHONSTARTUP": "/tmp/evil.py",
    "PYTHONINSPECT": "1",
    "PYTHONWARNINGS": "ignore::evilw.W",
    "PYTHONSAFEPATH": "",
    "BASH_ENV": "/tmp/evil.sh",
    "ENV": "/tmp/evil.sh",
    "IFS": " \t\n/",
    "NODE_OPTIONS": "--require /tmp/evil.js",
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "core.sshCommand",
    "GIT_CONFIG_VALUE_0": "touch /tmp/pwned",
    "SHELL": "/bin/bash",
    "PERL5OPT": "-Mevil",
    "RUBYOPT": "-revil",
    "AWS_SECRET_ACCESS_KEY": "canary-aws-secret",
    "GITHUB_TOKEN": "canary-github-token",
    "OPENAI_API_KEY": "canary-openai",
    "BASH_FUNC_ls%%": "() { echo pwned; }",
    "OTEL_EXPORTER_OTLP_HEADERS": "authorization=canary",
}


def test_hostile_and_secret_variables_never_reach_the_child() -> None:
    env = child_environment({**HOSTILE, "HOME": "/home/u", "USER": "u"})
    assert set(env) <= ALLOWED_ENV
    assert not set(HOSTILE) & set(env) - set(FIXED)
    assert not any("canary" in value or "evil" in value for value in env.values())


def test_fixed_values_override_whatever_the_parent_has() -> None:
    env = child_environment(
        {"PATH": "/tmp/planted:/usr/bin", "PYTHONIOENCODING": "latin-1", "LANG": "C.UTF-8"}
    )
    assert env["PATH"] == "/usr/bin:/bin"
    assert env["PYTHONIOENCODING"] == "utf-8:strict"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_identity_and_terminal_variables_are_copied_when_plain() -> None:
    parent = {"HOME": "/home/u", "LOGNAME": "u", "USER": "u", "TERM": "xterm-256color"}
    env = child_environment(parent)
    assert {name: env[name] for name in parent} == parent


def test_an_exported_bash_function_is_never_copied_even_under_an_allowed_name() -> None:
    env = child_environment({"TERM": "() { :; }; touch /tmp/pwned", "HOME": "() {"})
    assert "TERM" not in env
    assert "HOME" not in env


def test_values_with_control_characters_are_not_copied() -> None:
    assert "USER" not in child_environment({"USER": "u\nINJECTED=1"})


def test_lang_defaults_to_c_utf8_when_the_parent_has_none() -> None:
    assert child_environment({})["LANG"] == "C.UTF-8"


def test_plain_locale_names_pass_and_locale_paths_are_refused() -> None:
    env = child_environment(
        {"LANG": "de_DE.UTF-8", "LC_ALL": "/tmp/evil/locale", "LC_CTYPE": "../../tmp"}
    )
    assert env["LANG"] == "de_DE.UTF-8"
    assert "LC_ALL" not in env
    assert "LC_CTYPE" not in env


@pytest.mark.parametrize(
    ("value", "passes"),
    [
        ("Europe/Berlin", True),
        ("UTC", True),
        (":America/New_York", True),
        ("/etc/localtime", False),
        ("../../../tmp/evil", False),
        ("Europe/../../tmp", False),
    ],
)
def test_time_zone_names_pass_and_time_zone_paths_are_refused(value: str, passes: bool) -> None:
    assert ("TZ" in child_environment({"TZ": value})) is passes


def test_the_trace_id_is_passed_only_when_well_formed() -> None:
    trace_id = new_trace_id()
    assert child_environment({}, trace_id=trace_id)["BORING_DISPATCH_TRACE_ID"] == trace_id
    assert "BORING_DISPATCH_TRACE_ID" not in child_environment({}, trace_id="x; rm -rf /")
    assert "BORING_DISPATCH_TRACE_ID" not in child_environment(
        {"BORING_DISPATCH_TRACE_ID": trace_id}
    )


def test_assistant_logs_passes_only_as_an_absolute_path() -> None:
    assert child_environment({"ASSISTANT_LOGS": "/var/log/a"})["ASSISTANT_LOGS"] == "/var/log/a"
    assert "ASSISTANT_LOGS" not in child_environment({"ASSISTANT_LOGS": "relative/logs"})


def test_the_otel_switch_passes_only_as_exactly_one() -> None:
    assert child_environment({"BORING_DISPATCH_OTEL": "1"})["BORING_DISPATCH_OTEL"] == "1"
    assert "BORING_DISPATCH_OTEL" not in child_environment({"BORING_DISPATCH_OTEL": "yes"})


def test_the_default_source_is_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LD_PRELOAD", "/tmp/evil.so")
    monkeypatch.setenv("TERM", "vt100")
    env = child_environment()
    assert env["TERM"] == "vt100"
    assert "LD_PRELOAD" not in env


_names = st.one_of(
    st.sampled_from(sorted(ALLOWED_ENV | set(HOSTILE))),
    st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1),
)


@given(st.dictionaries(_names, st.text(max_size=30), max_size=12))
def test_no_parent_environment_grows_the_child_beyond_the_allowlist(
    parent: dict[str, str],
) -> None:
    env = child_environment(parent)
    assert set(env) <= ALLOWED_ENV
    for name, value in env.items():
        assert value == FIXED.get(name, value)
        assert not value.startswith("()")
