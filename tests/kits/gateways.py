"""Real gateway modules on disk and hand-built routes to them, for the execute-stage tests.

The routes are built directly (no blueprint resolution), so the launcher and
the runner are tested on their own: each test writes the gateway files it
needs into a temporary repository and launches a real child process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from boring_dispatch.records import CompiledBinding, ExecutionResult, PythonTarget, Route

#: The environment names a child may ever see (env.py's allowlist plus the fixed values).
ALLOWED_ENV: Final = frozenset(
    {
        "HOME",
        "LOGNAME",
        "USER",
        "TERM",
        "LANG",
        "LC_ALL",
        "LC_COLLATE",
        "LC_CTYPE",
        "LC_MESSAGES",
        "LC_MONETARY",
        "LC_NUMERIC",
        "LC_TIME",
        "TZ",
        "PATH",
        "PYTHONIOENCODING",
        "PYTHONDONTWRITEBYTECODE",
        "ASSISTANT_LOGS",
        "BORING_DISPATCH_OTEL",
        "BORING_DISPATCH_TRACE_ID",
    }
)

#: A gateway that reports everything the isolation tests look at, as one JSON line.
ECHO_GATEWAY: Final = textwrap.dedent(
    """
    import json, os, resource, sys
    from boring_dispatch.gateway import ArgvInterface, runtime_context

    def describe():
        fds = {}
        for name in os.listdir("/proc/self/fd"):
            try:
                fds[name] = os.readlink(f"/proc/self/fd/{name}")
            except OSError:
                pass
        context = runtime_context()
        return {
            "argv": None,
            "sys_argv": sys.argv,
            "env": dict(os.environ),
            "fds": fds,
            "sys_path": sys.path,
            "modules": sorted(sys.modules),
            "json_file": sys.modules["json"].__file__,
            "file": __file__,
            "cwd": os.getcwd(),
            "isolated": sys.flags.isolated,
            "sid": os.getsid(0),
            "pid": os.getpid(),
            "pgid": os.getpgid(0),
            "rlimits": {
                name: list(resource.getrlimit(getattr(resource, "RLIMIT_" + name.upper())))
                for name in ("core", "nofile", "fsize", "cpu", "as")
            },
            "context_module_id": None if context is None else context.module_id,
            "context_trace_id": None if context is None else context.trace_id,
            "stdin": sys.stdin.buffer.read().hex(),
        }

    class Echo(ArgvInterface):
        def run(self, argv):
            report = describe()
            report["argv"] = argv
            sys.stdout.write(json.dumps(report) + "\\n")
            return 0
    """
)


@dataclass(frozen=True, slots=True)
class Repo:
    """A temporary repository with one configured root ``skills`` and a module in it."""

    root: Path
    config: Path
    skills: Path
    module_id: str
    module_root: Path

    def write(self, relative: str, text: str) -> Path:
        """Write a file below the module root (dedented), creating directories."""
        path = self.module_root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path


def make_repo(base: Path, module_id: str = "echo-mod") -> Repo:
    """Create ``base/repo`` with ``officina.toml`` and an empty module root."""
    root = base / "repo"
    skills = root / "skills"
    module_root = skills.joinpath(*module_id.split("."))
    module_root.mkdir(parents=True)
    config = root / "officina.toml"
    config.write_text('schema_version = 1\n\n[modules]\nroots = ["skills"]\n', encoding="utf-8")
    return Repo(root, config, skills, module_id, module_root)


def logical_package(module_id: str) -> str:
    """The v6 logical package of a module (section 6.5)."""
    return "_officina_module_" + module_id.encode("utf-8").hex()


def make_route(
    repo: Repo,
    command: Sequence[str] = (),
    *,
    gateway_path: str = "gateway.py",
    entry: str = "Echo",
    stdin: bool = False,
    module_roots: Sequence[Path] | None = None,
) -> Route:
    """A route to ``repo``'s module as the resolver would build it."""
    package = logical_package(repo.module_id)
    names = gateway_path.removesuffix(".py").split("/")
    if names[-1] == "__init__":
        names.pop()
    export = f"{repo.module_id}.interface.run"
    return Route(
        caller_module_id="host-skill",
        target=export,
        target_module_id=repo.module_id,
        interface_version=1,
        implementing_source_id=repo.module_id,
        source_interface_id=f"{repo.module_id}.interface.run",
        binding=CompiledBinding(command=tuple(command), pattern="", takes_stdin=stdin, entry=entry),
        python_target=PythonTarget(
            gateway_path=gateway_path,
            process_entry=entry,
            logical_package=package,
            logical_entrypoint=".".join([package, *names]),
        ),
        cwd=repo.module_root,
        repository_root=repo.root,
        config_path=repo.config,
        security_level=0,
        output_audiences={"stdout": "machine", "stderr": "machine"},
        module_roots=(repo.skills,) if module_roots is None else tuple(module_roots),
    )


def report(result: ExecutionResult) -> dict[str, object]:
    """The echo gateway's JSON line (asserting the run succeeded)."""
    assert result.exit_code == 0, result.stderr
    value = json.loads(result.stdout.splitlines()[-1])
    assert isinstance(value, dict)
    return value


def wait_until(condition: Callable[[], bool], timeout_s: float = 15.0) -> bool:
    """Poll ``condition`` every 10 ms for at most ``timeout_s``; the last answer."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def process_gone(pid: int) -> bool:
    """The pid no longer exists (a zombie still counts as existing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def written(path: Path) -> bool:
    """The file exists and is not empty: its writer's one ``write`` has landed.

    ``exists()`` alone is true between the writer's ``open`` and its
    ``write``; a test that then reads the file gets nothing. (Gateways here run
    as root with test-chosen paths, ``/dev/null`` among them: they write in
    place, never rename over the path.)
    """
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def process_running(pid: int) -> bool:
    """The pid exists and is not a zombie."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return stat_line.rpartition(")")[2].split()[0] not in {"Z", "X"}


def route_to_json(route: Route) -> str:
    """Serialise the fields a driver process needs to rebuild ``route``."""
    return json.dumps(
        {
            "repo": str(route.repository_root),
            "module_id": route.target_module_id,
            "command": list(route.binding.command),
            "gateway_path": route.python_target.gateway_path,
            "entry": route.binding.entry,
            "stdin": route.binding.takes_stdin,
        }
    )


def run_driver(
    route: Route,
    code: str,
    *,
    stdin: int | None = None,
    stdout: int | None = None,
    stderr: int | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``python -c`` with ``route`` rebuilt as the name ``ROUTE`` before ``code`` runs."""
    prelude = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
        from pathlib import Path
        from kits import gateways as gateway_kit
        spec = json.loads({route_to_json(route)!r})
        root = Path(spec["repo"])
        repo = gateway_kit.Repo(root, root / "officina.toml", root / "skills", spec["module_id"],
                                root.joinpath("skills", *spec["module_id"].split(".")))
        ROUTE = gateway_kit.make_route(repo, spec["command"], gateway_path=spec["gateway_path"],
                                       entry=spec["entry"], stdin=spec["stdin"])
        """
    )
    return subprocess.Popen(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
    )
