"""SECURITY.md checklist E, asserted inside the child: what a gateway process can see and do.

Every test launches a real child through the launcher; the gateways report
what they observe (argv, environment, descriptors, sys.path, sys.modules,
rlimits) as JSON, so the assertions are about the child, not about our intent.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from boring_dispatch.process.launch import run_captured
from boring_dispatch.records import ExecLimits, ExecutionResult, Route
from kits.gateways import (
    ALLOWED_ENV,
    ECHO_GATEWAY,
    Repo,
    make_repo,
    make_route,
    process_gone,
    process_running,
    report,
    run_driver,
    wait_until,
)

LIMITS = ExecLimits(timeout_s=30.0)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    made = make_repo(tmp_path)
    made.write("gateway.py", ECHO_GATEWAY)
    return made


def _run(route: Route, limits: ExecLimits = LIMITS) -> ExecutionResult:
    return run_captured(route, stdin=None, limits=limits, trace_id=None)


def _probe(repo: Repo, statement: str) -> dict[str, object]:
    """Run a gateway that executes ``statement`` and reports the ImportError it raised, if any."""
    repo.write(
        "gateway.py",
        f"""
        import json
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                try:
                    {statement}
                except ImportError as error:
                    print(json.dumps({{"error": type(error).__name__}}))
                    return 0
                print(json.dumps({{"error": None}}))
                return 0
        """,
    )
    result = _run(make_route(repo))
    assert result.exit_code == 0, result.stderr
    value = json.loads(result.stdout)
    assert isinstance(value, dict)
    return value


# --------------------------------------------------------------------------- #
# E1: environment


HOSTILE_ENV = {
    "LD_PRELOAD": "/nonexistent/evil.so",
    "LD_LIBRARY_PATH": "/nonexistent",
    "PYTHONHOME": "/nonexistent",
    "PYTHONSTARTUP": "/nonexistent/startup.py",
    "PYTHONINSPECT": "1",
    "BASH_ENV": "/nonexistent/evil.sh",
    "ENV": "/nonexistent/evil.sh",
    "IFS": "/",
    "NODE_OPTIONS": "--require /nonexistent/evil.js",
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "core.pager",
    "GIT_CONFIG_VALUE_0": "evil",
    "SHELL": "/bin/evil",
    "AWS_SECRET_ACCESS_KEY": "canary-aws",
    "GITHUB_TOKEN": "canary-token",
    "BASH_FUNC_ls%%": "() { echo pwned; }",
    "TERM": "() { :; }; echo pwned",
}


def test_e1_hostile_and_secret_variables_never_reach_the_child(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in HOSTILE_ENV.items():
        monkeypatch.setenv(name, value)
    env = report(_run(make_route(repo)))["env"]
    assert isinstance(env, dict)
    assert set(env) <= ALLOWED_ENV
    assert not set(env) & set(HOSTILE_ENV)
    assert env["PATH"] == "/usr/bin:/bin"
    assert not any("canary" in value or "pwned" in value for value in env.values())


def test_e1_a_bash_started_by_the_gateway_sees_no_bash_env_or_functions(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "bash-env-ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"touch {marker}\n")
    monkeypatch.setenv("BASH_ENV", str(script))
    monkeypatch.setenv("BASH_FUNC_true%%", f"() {{ touch {marker}; }}")
    repo.write(
        "gateway.py",
        """
        import subprocess
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                return subprocess.run(["bash", "-c", "true"], check=False).returncode
        """,
    )
    assert _run(make_route(repo)).exit_code == 0
    assert not marker.exists()


# --------------------------------------------------------------------------- #
# E2: interpreter and lookup hijack


def test_e2_planted_pythonpath_and_pythonwarnings_import_nothing(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "planted"
    planted.mkdir()
    marker = tmp_path / "evilw-ran"
    (planted / "evilw.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nclass W(Warning):\n    pass\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(planted))
    monkeypatch.setenv("PYTHONWARNINGS", "ignore::evilw.W")
    seen = report(_run(make_route(repo)))
    assert not marker.exists()
    assert "evilw" not in seen["modules"]  # type: ignore[operator]
    assert str(planted) not in seen["sys_path"]  # type: ignore[operator]


def test_e2_stdlib_shadows_in_the_module_root_are_not_loaded(repo: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "shadow-ran"
    for name in ("json", "argparse", "os", "resource"):
        repo.write(f"{name}.py", f"open({str(marker)!r}, 'a').write({name!r})\n")
    seen = report(_run(make_route(repo)))
    assert not marker.exists()
    json_file = str(seen["json_file"])
    assert json_file.startswith(sys.base_prefix)
    assert not json_file.startswith(str(repo.root))


def test_e2_a_planted_interpreter_earlier_in_path_is_not_used(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "planted-python-ran"
    fake = bin_dir / "python3"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ.get('PATH', '')}")
    seen = report(_run(make_route(repo)))
    assert not marker.exists()
    assert seen["env"]["PATH"] == "/usr/bin:/bin"  # type: ignore[index]


# --------------------------------------------------------------------------- #
# E3: descriptors


def test_e3_an_inheritable_descriptor_of_the_parent_is_not_visible(
    repo: Repo, tmp_path: Path
) -> None:
    secret = tmp_path / "audit.db"
    secret.write_text("secret")
    fd = os.open(secret, os.O_RDONLY)  # no O_CLOEXEC on purpose
    os.set_inheritable(fd, True)  # noqa: FBT003 - a positional-only stdlib API
    try:
        fds = report(_run(make_route(repo)))["fds"]
    finally:
        os.close(fd)
    assert isinstance(fds, dict)
    assert str(secret) not in fds.values()
    assert str(fd) not in fds or fds[str(fd)].startswith("/proc/")
    extra = {n: target for n, target in fds.items() if n not in {"0", "1", "2"}}
    # The one socket is the child's end of the nested-call broker (runner option --broker-fd).
    sockets = [n for n, target in extra.items() if target.startswith("socket:")]
    assert len(sockets) == 1, extra
    assert all(target.startswith("/proc/") for n, target in extra.items() if n not in sockets)


def test_e3_a_process_the_gateway_starts_never_inherits_the_broker_socket(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        import json, os, subprocess, sys
        from boring_dispatch.gateway import ArgvInterface, runtime_context
        class Echo(ArgvInterface):
            def run(self, argv):
                code = "import os, json; print(json.dumps(os.listdir('/proc/self/fd')))"
                done = subprocess.run([sys.executable, "-c", code], close_fds=False,
                                      capture_output=True, text=True, check=True)
                print(json.dumps({"broker": runtime_context().broker_fd,
                                  "grandchild": json.loads(done.stdout)}))
        """,
    )
    result = _run(make_route(repo))
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    assert isinstance(seen["broker"], int)
    assert str(seen["broker"]) not in seen["grandchild"]


def test_e7_stdin_is_dev_null_and_the_child_leads_its_own_session(repo: Repo) -> None:
    seen = report(_run(make_route(repo)))
    assert seen["fds"]["0"] == "/dev/null"  # type: ignore[index]
    assert seen["sid"] == seen["pid"] == seen["pgid"]
    assert seen["sid"] != os.getsid(0)


# --------------------------------------------------------------------------- #
# E4: timeouts end the whole process group


GRANDCHILD = """
    import subprocess, sys, time
    from boring_dispatch.gateway import ArgvInterface
    class Echo(ArgvInterface):
        def run(self, argv):
            child = subprocess.Popen(["sleep", "120"])
            print(child.pid, flush=True)
            time.sleep(120)
    """


def test_e4_a_grandchild_does_not_outlive_the_timeout(repo: Repo) -> None:
    repo.write("gateway.py", GRANDCHILD)
    result = _run(make_route(repo), ExecLimits(timeout_s=1.0))
    assert result.timed_out
    grandchild = int(result.stdout.split()[0])
    assert not process_running(grandchild)
    assert wait_until(lambda: process_gone(grandchild))


def test_e4_a_grandchild_that_ignores_sigterm_is_killed(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        import signal, subprocess, sys, time
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                code = ("import signal, time; "
                        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)")
                child = subprocess.Popen([sys.executable, "-c", code])
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                print(child.pid, flush=True)
                time.sleep(120)
        """,
    )
    result = _run(make_route(repo), ExecLimits(timeout_s=1.0))
    assert result.timed_out
    grandchild = int(result.stdout.split()[0])
    assert not process_running(grandchild)


def test_e4_a_nested_call_in_its_own_group_ends_with_the_outer_call(
    repo: Repo, tmp_path: Path
) -> None:
    inner = make_repo(tmp_path / "inner", module_id="inner-mod")
    pids = tmp_path / "inner-pids"
    inner.write(
        "gateway.py",
        f"""
        import os, subprocess, time
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                child = subprocess.Popen(["sleep", "120"])
                with open({str(pids)!r} + ".tmp", "w") as handle:
                    handle.write(f"{{os.getpid()}} {{child.pid}} {{os.getpgid(0)}}")
                os.rename({str(pids)!r} + ".tmp", {str(pids)!r})
                time.sleep(120)
        """,
    )
    # The outer gateway launches the inner one with the launcher, as nested dispatch does.
    repo.write(
        "gateway.py",
        f"""
        import sys
        from pathlib import Path
        from boring_dispatch.gateway import ArgvInterface
        from boring_dispatch.process.launch import run_captured
        from boring_dispatch.records import ExecLimits
        class Echo(ArgvInterface):
            def run(self, argv):
                sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
                from kits import gateways as gateway_kit
                root = Path({str(inner.root)!r})
                repo = gateway_kit.Repo(root, root / "officina.toml", root / "skills",
                                        "inner-mod", root / "skills" / "inner-mod")
                run_captured(gateway_kit.make_route(repo), stdin=None,
                             limits=ExecLimits(timeout_s=60), trace_id=None)
        """,
    )
    result = _run(make_route(repo), ExecLimits(timeout_s=1.5))
    assert result.timed_out, result.stderr
    assert wait_until(pids.exists, timeout_s=5)
    runner_pid, sleeper_pid, inner_group = (int(x) for x in pids.read_text().split())
    assert inner_group == runner_pid  # the nested call had its own group
    assert wait_until(lambda: not process_running(runner_pid) and not process_running(sleeper_pid))


# --------------------------------------------------------------------------- #
# E5: floods


def test_e5_an_endless_stdout_is_capped_without_deadlock(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        import sys
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                line = b"y\\n" * 32768
                while True:
                    sys.stdout.buffer.write(line)
        """,
    )
    result = _run(make_route(repo), ExecLimits(timeout_s=30.0, max_output_bytes=200_000))
    assert result.stdout_truncated
    assert not result.timed_out
    assert len(result.stdout) == 200_000


def test_e5_a_stderr_flood_with_silent_stdout_is_capped(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        import sys
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                while True:
                    sys.stderr.buffer.write(b"e" * 65536)
        """,
    )
    result = _run(make_route(repo), ExecLimits(timeout_s=30.0, max_output_bytes=100_000))
    assert result.stderr_truncated
    assert not result.stdout_truncated
    assert result.stdout == ""
    assert len(result.stderr) == 100_000


def test_e5_one_endless_line_without_a_newline_is_capped(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        import os
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                while True:
                    os.write(1, b"z" * 65536)
        """,
    )
    result = _run(make_route(repo), ExecLimits(timeout_s=30.0, max_output_bytes=150_000))
    assert result.stdout_truncated
    assert "\n" not in result.stdout


# --------------------------------------------------------------------------- #
# E6: rlimits


def test_e6_core_dumps_are_off_and_a_memory_hog_hits_its_limit(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        import resource
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                if resource.getrlimit(resource.RLIMIT_CORE) != (0, 0):
                    return 4
                try:
                    hog = bytearray(2 << 30)
                except MemoryError:
                    return 3
                return len(hog) and 5
        """,
    )
    limits = ExecLimits(timeout_s=30.0, max_memory_bytes=1 << 30)
    assert _run(make_route(repo), limits).exit_code == 3


# --------------------------------------------------------------------------- #
# E7: failures


def test_e7_a_raising_gateway_prints_its_traceback_and_exits_nonzero(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                raise RuntimeError("gateway failed on purpose")
        """,
    )
    result = _run(make_route(repo))
    assert result.exit_code == 1
    assert "Traceback" in result.stderr
    assert "RuntimeError: gateway failed on purpose" in result.stderr
    assert result.stdout == ""


def test_e7_a_gateway_killed_by_a_signal_reports_the_signal(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        import os, signal
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                os.kill(os.getpid(), signal.SIGSEGV)
        """,
    )
    assert _run(make_route(repo)).exit_code == -11


# --------------------------------------------------------------------------- #
# The confined importer


def test_a_bare_import_of_a_sibling_file_fails(repo: Repo) -> None:
    repo.write("helper.py", "VALUE = 1\n")
    assert _probe(repo, "import helper")["error"] == "ModuleNotFoundError"


def test_another_repository_module_is_not_importable_through_an_ambient_path(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = repo.skills / "othermod"
    other.mkdir()
    (other / "__init__.py").write_text("VALUE = 'other module'\n")
    monkeypatch.setenv("PYTHONPATH", f"{repo.skills}:{repo.root}")
    assert _probe(repo, "import othermod")["error"] == "ModuleNotFoundError"
    assert _probe(repo, "import skills.othermod")["error"] == "ModuleNotFoundError"


def test_no_sys_path_entry_of_the_child_touches_a_module_root(repo: Repo) -> None:
    sys_path = report(_run(make_route(repo)))["sys_path"]
    assert isinstance(sys_path, list)
    roots = [os.path.realpath(repo.skills), os.path.realpath(repo.module_root)]
    for entry in sys_path:
        real = os.path.realpath(entry)
        assert all(os.path.commonpath([real, root]) not in {real, root} for root in roots)


def test_a_symlinked_gateway_file_is_refused(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text(ECHO_GATEWAY)
    (repo.module_root / "gateway.py").unlink()
    (repo.module_root / "gateway.py").symlink_to(outside)
    result = _run(make_route(repo))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: gateway module refused")


def test_a_symlinked_helper_file_is_refused(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside_helper.py"
    outside.write_text("VALUE = 'outside'\n")
    (repo.module_root / "helper.py").symlink_to(outside)
    assert _probe(repo, "from . import helper")["error"] == "ConfinedImportError"


def test_a_symlinked_directory_cannot_be_used_to_escape(repo: Repo, tmp_path: Path) -> None:
    escape = tmp_path / "escape"
    escape.mkdir()
    (escape / "__init__.py").write_text("")
    (escape / "loot.py").write_text("VALUE = 'outside'\n")
    (repo.module_root / "lib").symlink_to(escape)
    assert _probe(repo, "from .lib import loot")["error"] == "ConfinedImportError"


def test_a_gateway_path_that_escapes_the_module_root_is_refused(repo: Repo) -> None:
    repo.write("../sibling.py", ECHO_GATEWAY)
    route = make_route(repo, gateway_path="../sibling.py")
    result = _run(route)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")


def test_a_fifo_in_place_of_a_helper_neither_blocks_nor_loads(repo: Repo) -> None:
    os.mkfifo(repo.module_root / "helper.py")
    assert _probe(repo, "from . import helper")["error"] == "ConfinedImportError"


# --------------------------------------------------------------------------- #
# E8: the importer is a guardrail; the boundary holds without it


@pytest.fixture
def bypassing(repo: Repo) -> Repo:
    """A gateway that defeats the confined importer, then reports what it can see."""
    repo.write("helper.py", "VALUE = 'reached by a bare import'\n")
    repo.write("describe.py", ECHO_GATEWAY)
    repo.write(
        "gateway.py",
        f"""
        import json, os, sys
        import posix
        from boring_dispatch.gateway import ArgvInterface
        from .describe import describe
        class Echo(ArgvInterface):
            def run(self, argv):
                for finder in list(sys.meta_path):
                    if type(finder).__name__ == "ConfinedFinder":
                        sys.meta_path.remove(finder)
                sys.path.insert(0, {str(repo.module_root)!r})
                import helper
                report = describe()
                report["helper"] = helper.VALUE
                report["posix"] = posix.getpid() == os.getpid()
                print(json.dumps(report))
        """,
    )
    return repo


def test_e8_posix_and_a_runtime_bypass_are_possible(bypassing: Repo) -> None:
    seen = report(_run(make_route(bypassing)))
    assert seen["posix"] is True
    assert seen["helper"] == "reached by a bare import"


def test_e8_environment_descriptors_and_limits_hold_when_the_importer_is_bypassed(
    bypassing: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "canary-aws")
    monkeypatch.setenv("LD_PRELOAD", "/nonexistent/evil.so")
    secret = tmp_path / "parent-secret"
    secret.write_text("secret")
    fd = os.open(secret, os.O_RDONLY)
    os.set_inheritable(fd, True)  # noqa: FBT003 - a positional-only stdlib API
    limits = ExecLimits(timeout_s=30.0, max_open_files=100, max_file_bytes=1 << 20)
    try:
        seen = report(_run(make_route(bypassing), limits))
    finally:
        os.close(fd)
    env, fds, rlimits = seen["env"], seen["fds"], seen["rlimits"]
    assert isinstance(env, dict)
    assert isinstance(fds, dict)
    assert isinstance(rlimits, dict)
    assert set(env) <= ALLOWED_ENV
    assert str(secret) not in fds.values()
    assert rlimits["core"] == [0, 0]
    assert rlimits["nofile"] == [100, 100]
    assert rlimits["fsize"] == [1 << 20, 1 << 20]


def test_e8_the_timeout_ends_a_gateway_that_bypassed_the_importer(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        import subprocess, sys, time
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                kept = [f for f in sys.meta_path if type(f).__name__ != "ConfinedFinder"]
                sys.meta_path[:] = kept
                child = subprocess.Popen(["sleep", "120"])
                print(child.pid, flush=True)
                time.sleep(120)
        """,
    )
    result = _run(make_route(repo), ExecLimits(timeout_s=1.0))
    assert result.timed_out
    assert not process_running(int(result.stdout.split()[0]))


# --------------------------------------------------------------------------- #
# E7: the dispatcher itself is killed mid-call


@pytest.mark.parametrize(
    "where",
    [
        "",  # in the runner's group
        "process_group=0",  # a group of its own, in the session
        "start_new_session=True",  # a session of its own: reached as the runner's child
    ],
)
@pytest.mark.parametrize("signal_number", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("launch", ["run_captured", "run_streaming"])  # MCP and nested; the CLI
def test_e7_killing_the_dispatcher_mid_call_ends_the_gateway_and_its_grandchild(
    repo: Repo, tmp_path: Path, where: str, signal_number: int, launch: str
) -> None:
    pids = tmp_path / "pids"
    repo.write(
        "gateway.py",
        f"""
        import os, subprocess, time
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                child = subprocess.Popen(["sleep", "120"], {where})
                with open({str(pids)!r} + ".tmp", "w") as handle:
                    handle.write(f"{{os.getpid()}} {{child.pid}}")
                os.rename({str(pids)!r} + ".tmp", {str(pids)!r})
                time.sleep(120)
        """,
    )
    driver = run_driver(
        make_route(repo),
        f"""
        from boring_dispatch.process.launch import {launch} as launch
        from boring_dispatch.records import ExecLimits
        launch(ROUTE, stdin=None, limits=ExecLimits(timeout_s=120.0), trace_id=None)
        """,
    )
    try:
        assert wait_until(pids.exists, timeout_s=30)
        runner_pid, sleeper_pid = (int(x) for x in pids.read_text().split())
        assert process_running(runner_pid)
        assert process_running(sleeper_pid)
        # SIGKILL: the dispatcher gets no chance to end the group; SIGTERM and SIGHUP end
        # it by their default action, as abruptly (the runner's parent-death signal acts).
        driver.send_signal(signal_number)
        driver.wait(timeout=10)
        assert wait_until(
            lambda: not process_running(runner_pid) and not process_running(sleeper_pid),
            timeout_s=10,
        )
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait(timeout=10)
