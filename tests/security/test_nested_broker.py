"""Nested calls are decided by the dispatcher process, never by the gateway that makes them.

A gateway is the operator's code, but it must not be able to claim another
module's identity, drop its level ceiling or pick another repository for its
nested calls. The runner hands the gateway one end of a socket; the parent
builds the request from the route it launched. These gateways try every
in-process lever (rewriting the runtime context) and write forged, malformed
and oversized messages on the socket itself.
"""

from __future__ import annotations

import json
import textwrap
import threading
from pathlib import Path

import pytest

from boring_dispatch.records import ExecLimits, RouteRequest
from boring_dispatch.repository.repository import Repository
from kits.cases import RepositorySpec, _write
from kits.mcp import _module, gateway_module

GATEWAY = textwrap.dedent(
    """
    import json, os, socket, struct
    from pathlib import Path
    from boring_dispatch import gateway
    from boring_dispatch.process import context as gateway_context
    from boring_dispatch._value import replace
    from boring_dispatch.errors import DispatchError


    def outcome(call):
        try:
            result = call()
        except DispatchError as error:
            return error.code
        return f"exit {result.exit_code}: {result.stdout.strip()}"


    def raw(frame):
        # Talk to the broker directly, bypassing dispatch().
        sock = socket.socket(fileno=gateway.runtime_context().broker_fd)
        try:
            sock.sendall(frame)
            size = struct.unpack(">I", sock.recv(4, socket.MSG_WAITALL))[0]
            reply = json.loads(sock.recv(size, socket.MSG_WAITALL))
        finally:
            sock.detach()
        return reply["error"]["code"] if "error" in reply else f"exit {reply['exit_code']}"


    def message(payload):
        data = json.dumps(payload).encode()
        return struct.pack(">I", len(data)) + data


    class Probe(gateway.ArgvInterface):
        def run(self, argv):
            mode, target = argv
            call = lambda: self.dispatch(target, version=1)
            if mode == "rewrite":
                context = gateway.runtime_context()
                gateway_context._CONTEXT[0] = replace(
                    context, module_id="other", source_id="other", level=None,
                    config_path=Path("/nonexistent/officina.toml"),
                    repository_root=Path("/nonexistent"),
                )
                seen = [outcome(call)]
            elif mode == "forge":
                seen = [raw(message({"interface": target, "version": 1, "caller": "other",
                                     "max_level": None, "host": True})),
                        outcome(call)]
            elif mode == "garbage":
                seen = [raw(struct.pack(">I", 8) + b"not json"),
                        raw(message(["a", "list"])),
                        raw(message({"interface": target, "version": True})),
                        raw(message({"interface": target, "stdin": "***"})),
                        outcome(call)]
            elif mode == "chain":
                seen = [outcome(lambda: self.dispatch(
                    "tools.interface.probe", version=1, positionals=["rewrite", target]))]
            elif mode == "oversized":
                seen = [raw(struct.pack(">I", 2**31)), outcome(call)]
            else:
                seen = [outcome(call)]
            print(json.dumps(seen))
            return 0


    class Hello(gateway.ArgvInterface):
        def run(self, argv):
            print("hello")
            return 0
    """
)
#: export name -> (entry class, derived level, admitted callers; None = every module)
EXPORTS: dict[str, tuple[str, int, list[str] | None]] = {
    "probe": ("Probe", 0, None),
    "hello": ("Hello", 0, None),
    "target-2": ("Hello", 2, None),
}
#: In module ``vault``: the same gateway file, one export that admits ``other`` only.
VAULT_EXPORT = "vault.interface.only-other"


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tools, source = gateway_module("tools", EXPORTS, skill=True)
    vault, vault_source = gateway_module(
        "vault", {"only-other": ("Hello", 0, ["other"])}, skill=False
    )
    spec = RepositorySpec(
        roots=("skills",),
        modules={"tools": tools, "vault": vault, "other": _module("other", skill=False)},
        sources={"tools.source.main": source, "vault.source.main": vault_source},
        files={"skills/tools/main.py": GATEWAY, "skills/vault/main.py": GATEWAY},
    )
    return _write(spec, tmp_path_factory.mktemp("broker"))


def _probe(config: Path, mode: str, target: str) -> list[str]:
    interface = VAULT_EXPORT if target == "only-other" else f"tools.interface.{target}"
    request = RouteRequest(caller="tools", target="tools.interface.probe", argv=(mode, interface))
    result = Repository.open(config).invoke(request, limits=ExecLimits(timeout_s=60.0))
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    assert isinstance(seen, list)
    return seen


@pytest.mark.parametrize(
    ("target", "decision"),
    [
        ("hello", "exit 0: hello"),
        ("target-2", "dispatcher.security_level_mismatch"),
        ("only-other", "dispatcher.unauthorized_caller"),
    ],
)
def test_rewriting_the_runtime_context_changes_no_nested_decision(
    config: Path, target: str, decision: str
) -> None:
    assert _probe(config, "plain", target) == [decision]
    assert _probe(config, "rewrite", target) == [decision]


@pytest.mark.parametrize("target", ["target-2", "only-other", "hello"])
def test_a_forged_request_claiming_a_caller_or_level_is_refused_and_grants_nothing(
    config: Path, target: str
) -> None:
    forged, honest = _probe(config, "forge", target)
    assert forged == "dispatcher.invalid_request"
    assert honest == _probe(config, "plain", target)[0]


@pytest.mark.parametrize(
    ("target", "decision"),
    [
        ("hello", "exit 0: hello"),
        ("target-2", "dispatcher.security_level_mismatch"),
        ("only-other", "dispatcher.unauthorized_caller"),
    ],
)
def test_a_nested_gateways_own_nested_calls_are_brokered_the_same_way(
    config: Path, target: str, decision: str
) -> None:
    assert _probe(config, "chain", target) == [f"exit 0: {json.dumps([decision])}"]


def test_malformed_broker_messages_get_an_error_reply_and_the_broker_keeps_serving(
    config: Path,
) -> None:
    assert _probe(config, "garbage", "hello") == [
        "dispatcher.invalid_request",
        "dispatcher.invalid_request",
        "dispatcher.invalid_request",
        "dispatcher.invalid_request",
        "exit 0: hello",
    ]


def test_an_oversized_broker_message_gets_an_error_reply_and_ends_the_broker(
    config: Path,
) -> None:
    assert _probe(config, "oversized", "hello") == [
        "dispatcher.invalid_request",
        "dispatcher.runtime_misconfigured",
    ]


def _open_fds() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


def test_the_broker_thread_and_its_descriptors_end_with_the_child(config: Path) -> None:
    _probe(config, "plain", "hello")  # warm-up: lazily opened descriptors (none expected)
    fds, threads = _open_fds(), threading.active_count()
    for mode in ("plain", "garbage", "oversized", "forge", "chain"):
        _probe(config, mode, "hello")
    assert _open_fds() == fds
    assert threading.active_count() == threads
    assert not [t for t in threading.enumerate() if t.name == "gateway-broker"]
