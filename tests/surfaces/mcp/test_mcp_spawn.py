"""``--spawn-gateways``: each gateway a fresh interpreter, as before the fork server.

By default the MCP server forks gateways from its clean fork server (whose
command line a forked gateway still shows); with ``--spawn-gateways`` each
gateway is started as ``python -I -B ... -m boring_dispatch.process.child.runner``.
The flag applies to a repository only.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from kits.cases import RepositorySpec, _write
from kits.mcp import McpServer, gateway_module

ORIGIN = textwrap.dedent(
    """
    import json, sys
    from boring_dispatch.gateway import ArgvInterface


    class Origin(ArgvInterface):
        def run(self, argv):
            print(json.dumps({"orig_argv": sys.orig_argv}))
            return 0
    """
)


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tools, source = gateway_module("tools", {"origin": ("Origin", 0, None)}, skill=True)
    spec = RepositorySpec(
        roots=("skills",),
        modules={"tools": tools},
        sources={"tools.source.main": source},
        files={"skills/tools/main.py": ORIGIN},
    )
    return _write(spec, tmp_path_factory.mktemp("repo"))


@pytest.fixture(scope="module")
def errlog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[io.TextIOWrapper]:
    with (tmp_path_factory.mktemp("stderr") / "server.log").open("w+", encoding="utf-8") as log:
        yield log


def _origins(config: Path, errlog: io.TextIOWrapper, *flags: str) -> list[list[str]]:
    call = {"caller": "tools", "interface": "tools.interface.origin", "arguments": {}}
    with McpServer(
        ["mcp", *flags, "--config", str(config)], env={}, cwd=config.parent, errlog=errlog
    ) as server:
        results = [server.call("invoke_security_0", call) for _ in range(3)]
    origins = []
    for result in results:
        assert result["isError"] is False, result
        stdout = result["structuredContent"]["result"]["stdout"]
        origins.append(json.loads(stdout)["orig_argv"])
    return origins


def test_by_default_gateways_are_forked_from_the_fork_server(
    config: Path, errlog: io.TextIOWrapper
) -> None:
    for argv in _origins(config, errlog):
        assert "boring_dispatch.process.child.forkserver" in argv
        assert "boring_dispatch.process.child.runner" not in argv


def test_spawn_gateways_starts_a_fresh_runner_for_every_call(
    config: Path, errlog: io.TextIOWrapper
) -> None:
    for argv in _origins(config, errlog, "--spawn-gateways"):
        assert "boring_dispatch.process.child.runner" in argv
        assert "boring_dispatch.process.child.forkserver" not in argv
        assert "-I" in argv


def test_spawn_gateways_is_refused_for_a_python_table() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "mcp",
            "--spawn-gateways",
            "--registry",
            "examples.support_and_billing.support:SUPPORT",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        cwd=Path(__file__).resolve().parents[3],
        check=False,
    )
    assert done.returncode != 0
    assert "--spawn-gateways applies to a repository" in done.stderr
