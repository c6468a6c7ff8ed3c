"""A real ``dispatcher mcp`` process driven by the SDK's stdio client, and a repository for it.

:class:`McpServer` starts ``python -m boring_dispatch mcp ...`` through
``mcp.client.stdio.stdio_client`` and keeps one SDK ``Client`` session open in
a background event loop (an anyio blocking portal), so synchronous tests can
share one server per module. :func:`write_tools_repository` writes a small
repository whose gateways print known text, echo their argv/stdin/env, fail,
raise, nest and sleep, with one export per audience row and security level.
"""

from __future__ import annotations

import contextlib
import json
import sys
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, Self, TextIO

from kits.cases import RepositorySpec, _write

__all__ = [
    "ANY_ARGV",
    "CALLER",
    "INTERFACES",
    "McpServer",
    "gateway_module",
    "projection",
    "read_spans",
    "span_text",
    "write_tools_repository",
]

#: The host caller of every test call: a discoverable top-level skill.
CALLER: Final = "host"

GATEWAY: Final = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    from boring_dispatch.gateway import ArgvInterface


    class Streams(ArgvInterface):
        def run(self, argv):
            sys.stdout.write("out\\n")
            sys.stderr.write("err\\n")
            return 0


    class Echo(ArgvInterface):
        def run(self, argv):
            print(json.dumps({"argv": argv, "stdin": sys.stdin.read()}, sort_keys=True))
            return 0


    class Env(ArgvInterface):
        def run(self, argv):
            print(json.dumps(dict(os.environ), sort_keys=True))
            return 0


    class Fail(ArgvInterface):
        def run(self, argv):
            sys.stdout.write("partial\\n")
            sys.stderr.write("fail: broken\\n")
            return 3


    class Raise(ArgvInterface):
        def run(self, argv):
            raise RuntimeError("gateway failed with " + " ".join(argv))


    class Nested(ArgvInterface):
        def run(self, argv):
            result = self.dispatch("tools.interface.streams-both", version=1)
            print(json.dumps(
                {"exit_code": result.exit_code, "stdout": result.stdout, "stderr": result.stderr},
                sort_keys=True,
            ))
            return 0


    class Sleep(ArgvInterface):
        def run(self, argv):
            Path(argv[0]).write_text(f"{os.getpid()} {os.getppid()}")
            time.sleep(120)
            return 0


    class SleepNested(ArgvInterface):
        def run(self, argv):
            Path(argv[0] + ".outer").write_text(f"{os.getpid()} {os.getppid()}")
            self.dispatch("tools.interface.sleep", version=1, positionals=[argv[0] + ".inner"])
            return 0
    """
)

_WRITES: Final = [
    {"id": "out", "medium": "stdout", "access": "write"},
    {"id": "err", "medium": "stderr", "access": "write"},
]
_STATE_PATH: Final = "data/state.json"


def _contract(outputs: list[dict[str, object]], level: int | None = 0) -> dict[str, object] | None:
    """A contract whose derived level is ``level`` (``None``: no contract at all)."""
    if level is None:
        return None
    writes: list[dict[str, object]] = [dict(w) for w in _WRITES]
    network: list[dict[str, object]] = []
    if level >= 1:
        writes.append({"id": "state", "medium": "local-filesystem", "path": _STATE_PATH})
    if level == 2:
        network.append({"id": "api", "medium": "network-request", "access": "request"})
    return {
        "arguments": {},
        "outputs": outputs,
        "execution": {"state_effect": "read-only" if level == 0 else "mutating"},
        "direct_io": {"reads": [], "writes": writes, "network": network},
    }


def _outputs(stdout: object, stderr: object) -> list[dict[str, object]]:
    """One output per stream; ``None`` leaves the audience out, a list declares several."""
    outputs: list[dict[str, object]] = []
    for ref, audiences in (("out", stdout), ("err", stderr)):
        for index, audience in enumerate(audiences if isinstance(audiences, list) else [audiences]):
            output: dict[str, object] = {"id": f"{ref}-{index}", "direct_io_ref": ref}
            if audience is not None:
                output["audience"] = audience
            outputs.append(output)
    return outputs


#: export name -> (gateway class, stdout audience(s), stderr audience(s), level).
INTERFACES: Final[Mapping[str, tuple[str, object, object, int | None]]] = {
    "streams-machine": ("Streams", "machine", "machine", 0),
    "streams-human": ("Streams", "human", "machine", 0),
    "streams-both": ("Streams", "both", "both", 0),
    "streams-missing": ("Streams", None, None, 0),
    "streams-invalid": ("Streams", "everyone", "HUMAN", 0),
    "streams-conflicting": ("Streams", ["human", "machine"], "human", 0),
    "echo": ("Echo", "machine", "machine", 0),
    "env": ("Env", "machine", "machine", 0),
    "fail": ("Fail", "machine", "both", 0),
    "raise": ("Raise", "machine", "machine", 0),
    "nested": ("Nested", "machine", "machine", 0),
    "sleep": ("Sleep", "machine", "machine", 0),
    "sleep-nested": ("SleepNested", "machine", "machine", 0),
    "write-own": ("Streams", "human", "machine", 1),
    "fetch": ("Streams", "human", "machine", 2),
    "no-contract": ("Streams", "human", "machine", None),
    "private": ("Streams", "human", "machine", 0),
}
_ANY_ARGV: Final = {
    "name": "any",
    "min_positionals": 0,
    "allow_extra_positionals": True,
    "allow_stdin": True,
    "flag_patterns": {"--name": "[a-z]+", "--tag": "[a-z]+"},
}


def _module(module_id: str, *, skill: bool, **fields: object) -> dict[str, object]:
    document: dict[str, object] = {
        "schema_version": 6,
        "node_type": "module",
        "id": module_id,
        "version": 1,
        "children": {},
        "namespace_exports": {},
        "sources": {},
        "exports": {},
    }
    if skill:
        document["discovery"] = {"mechanism": "skill"}
    document.update(fields)
    return document


#: An argv pattern that accepts anything (the tests of nested calls pass argv freely).
ANY_ARGV: Final = {"min_positionals": 0, "allow_extra_positionals": True}


def gateway_module(
    module_id: str,
    exports: Mapping[str, tuple[str, int | None, list[str] | None]],
    *,
    skill: bool,
) -> tuple[dict[str, object], dict[str, object]]:
    """A module and its one source ``<module>.source.main`` (gateway ``main.py``).

    ``exports`` maps an interface name to (entry class, derived level, admitted
    callers): the level gives the contract (``None``: no contract, so no level),
    ``None`` callers means every module. Every interface accepts any argv. The
    module owns ``data/state.json``, so level 1 is reachable.
    """
    source_id = f"{module_id}.source.main"
    interfaces: dict[str, object] = {}
    exported: dict[str, object] = {}
    for name, (entry, level, callers) in exports.items():
        body: dict[str, object] = {
            "version": 1,
            "process_binding": {"kind": "process", "entry": entry, "patterns": [ANY_ARGV]},
        }
        contract = _contract(_outputs("machine", "machine"), level)
        if contract is not None:
            body["contract"] = contract
        interfaces[f"{source_id}.interface.{name}"] = body
        exported[f"{module_id}.interface.{name}"] = {
            "source_interface": f"{source_id}.interface.{name}",
            "access": {"allow_all_modules": callers is None, "allowed_callers": callers or []},
        }
    module = _module(
        module_id,
        skill=skill,
        authority={"owns_filesystem": [{"match": "exact", "path": _STATE_PATH}]},
        sources={source_id: {"blueprint": {"base": "module-root", "path": "main.yaml"}}},
        exports=exported,
    )
    source = {
        "schema_version": 6,
        "node_type": "behavioral_source",
        "id": source_id,
        "version": 1,
        "gateway": {"path": "main.py"},
        "interfaces": interfaces,
    }
    return module, source


def write_tools_repository(directory: Path) -> Path:
    """Write the test repository under ``directory``; return its ``officina.toml``.

    Modules: ``host`` (the skill that calls), ``other`` (a plain module, not a
    skill) and ``tools`` (every export, all public except ``private``, which
    admits ``other`` only).
    """
    public = {"allow_all_modules": True, "allowed_callers": []}
    exports = {
        f"tools.interface.{name}": {
            "source_interface": f"tools.source.main.interface.{name}",
            "access": {"allow_all_modules": False, "allowed_callers": ["other"]}
            if name == "private"
            else public,
        }
        for name in INTERFACES
    }
    interfaces: dict[str, object] = {}
    for name, (entry, stdout, stderr, level) in INTERFACES.items():
        body: dict[str, object] = {
            "version": 1,
            "process_binding": {"kind": "process", "entry": entry, "patterns": [_ANY_ARGV]},
        }
        contract = _contract(_outputs(stdout, stderr), level)
        if contract is not None:
            body["contract"] = contract
        interfaces[f"tools.source.main.interface.{name}"] = body
    tools = _module(
        "tools",
        skill=False,
        authority={"owns_filesystem": [{"match": "exact", "path": _STATE_PATH}]},
        sources={"tools.source.main": {"blueprint": {"base": "module-root", "path": "main.yaml"}}},
        exports=exports,
    )
    source = {
        "schema_version": 6,
        "node_type": "behavioral_source",
        "id": "tools.source.main",
        "version": 1,
        "gateway": {"path": "main.py", "language": "Python>=3.11"},
        "interfaces": interfaces,
    }
    spec = RepositorySpec(
        roots=("skills",),
        modules={
            CALLER: _module(CALLER, skill=True),
            "other": _module("other", skill=False),
            "tools": tools,
        },
        sources={"tools.source.main": source},
        files={"skills/tools/main.py": GATEWAY},
    )
    return _write(spec, directory)


def projection(
    interface: str,
    *,
    positionals: list[str] | None = None,
    options: dict[str, object] | None = None,
    stdin: str | None = None,
    dry_run: bool = False,
    caller: str = CALLER,
) -> dict[str, object]:
    """The projection of one call to ``tools.interface.<interface>`` (version 1)."""
    return {
        "caller": caller,
        "interface": f"tools.interface.{interface}",
        "version": 1,
        "arguments": {"positionals": positionals or [], "options": options or {}, "stdin": stdin},
        "dry_run": dry_run,
    }


class McpServer:
    """One ``dispatcher mcp`` process with an open SDK client session (use as a context manager).

    Args:
        args: the arguments after ``dispatcher`` (``["mcp", "--config", path]``).
        env: extra environment of the server process.
        cwd: its working directory.
        errlog: where its stderr goes.
        mode: the client's protocol negotiation (``"legacy"`` is the initialize
            handshake that today's hosts use; ``"auto"`` tries the 2026 protocol).
        elicitation: the client's answer to an elicitation request (its message and
            requested schema in, ``(action, content)`` out); ``None``: the client
            does not declare the capability. Every request is kept in ``elicited``.
    """

    def __init__(
        self,
        args: list[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        errlog: TextIO,
        mode: str = "legacy",
        elicitation: Callable[[str, dict[str, Any]], tuple[str, dict[str, Any] | None]]
        | None = None,
    ) -> None:
        self._args = [sys.executable, "-m", "boring_dispatch", *args]
        self._env = dict(env)
        self._cwd = cwd
        self._errlog = errlog
        self._mode = mode
        self._stack = contextlib.ExitStack()
        self._client: Any = None
        self._portal: Any = None
        self._elicitation = elicitation
        #: Every elicitation request the server sent: (message, requested schema).
        self.elicited: list[tuple[str, dict[str, Any]]] = []

    def __enter__(self) -> Self:
        from anyio.from_thread import start_blocking_portal
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=self._args[0], args=self._args[1:], env=self._env, cwd=self._cwd
        )
        self._portal = self._stack.enter_context(start_blocking_portal())
        options: dict[str, Any] = {}
        if self._elicitation is not None:
            answer = self._elicitation

            async def elicit(context: Any, request: Any) -> Any:
                import mcp_types

                schema = dict(request.requested_schema)
                self.elicited.append((request.message, schema))
                action, content = answer(request.message, schema)
                return mcp_types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

            options["elicitation_callback"] = elicit
        client = Client(stdio_client(params, errlog=self._errlog), mode=self._mode, **options)
        self._client = self._stack.enter_context(self._portal.wrap_async_context_manager(client))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def list_tools(self) -> list[dict[str, Any]]:
        """The listed tools, as the wire shows them (camelCase keys)."""
        listed = self._portal.call(self._client.list_tools)
        return [_wire(tool) for tool in listed.tools]

    def call(self, name: str, arguments: Mapping[str, object] | None) -> dict[str, Any]:
        """One tool call: ``{"content", "structuredContent", "isError"}`` as on the wire."""
        result = self._portal.call(self._client.call_tool, name, arguments)
        wire = _wire(result)
        return {key: wire.get(key) for key in ("content", "structuredContent", "isError")}

    def call_wire(
        self,
        name: str,
        arguments: Mapping[str, object] | None,
        meta: Mapping[str, object] | None = None,
    ) -> dict[str, Any]:
        """One tool call: the whole ``CallToolResult`` as on the wire (``_meta`` included).

        ``meta`` is sent as the request's ``params._meta`` (a ``traceparent``...).
        """

        async def call() -> Any:
            return await self._client.call_tool(
                name, None if arguments is None else dict(arguments), meta=meta
            )

        return _wire(self._portal.call(call))

    def call_with_timeout(
        self, name: str, arguments: Mapping[str, object], timeout_s: float
    ) -> BaseException | None:
        """Call and give up after ``timeout_s`` (the SDK cancels the request); the error."""

        async def call() -> BaseException | None:
            try:
                await self._client.call_tool(name, dict(arguments), read_timeout_seconds=timeout_s)
            except Exception as error:  # the SDK's timeout error
                return error
            return None

        result: BaseException | None = self._portal.call(call)
        return result


def _wire(model: Any) -> dict[str, Any]:
    dumped = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert isinstance(dumped, dict)
    return dumped


def read_spans(logs: Path) -> list[dict[str, Any]]:
    """Every span line under ``<logs>/dispatch/``, in file order."""
    return [
        json.loads(line)
        for path in sorted((logs / "dispatch").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def span_text(logs: Path) -> str:
    """The raw text of every file under ``logs`` (for "appears nowhere" checks)."""
    return "".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(logs.rglob("*"))
        if path.is_file()
    )
