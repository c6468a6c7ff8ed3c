"""Every live repository call leaves exactly one audit record, and none holds argv/stdin/output.

Real repositories on disk (kits.mcp, kits.setup_repo), real gateways in real
children, a real JSON-lines file read back with ``read_records``. A secret-looking
value is planted in the argv, the stdin and (through the echo gateway) the
output of every call; it must never reach the audit file.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from boring_dispatch import Repository, RouteRequest
from boring_dispatch.errors import InterfaceNotFound, RouteError
from boring_dispatch.observe.audit import JsonLinesAuditSink, read_records
from boring_dispatch.observe.repository_audit import RepositoryAuditEvent
from boring_dispatch.records import ExecLimits
from boring_dispatch.repository._audit import launch_outcome, refusal_outcome, streaming_outcome
from kits.mcp import CALLER, write_tools_repository
from kits.setup_repo import write_setup_repository

SECRET = "sk-live-AUDIT-CANARY-93f1"
#: Every key of a repository record's line, and nothing else.
KEYS = {
    "time",
    "kind",
    "caller",
    "nested",
    "interface",
    "version",
    "outcome",
    "exit_code",
    "duration_ms",
    "trace_id",
    "security_level",
}
TRACE = "a" * 32


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_tools_repository(tmp_path / "repo")


def _request(name: str, *argv: str, caller: str = CALLER, version: int | None = 1) -> RouteRequest:
    return RouteRequest(
        caller=caller,
        target=f"tools.interface.{name}",
        version=version,
        argv=(*argv, SECRET),
        sends_stdin=True,
    )


def _records(path: Path) -> list[dict[str, object]]:
    found = read_records(path)
    assert found.skipped == ()
    return [record for _, record in found.records]


def _well_formed(record: dict[str, object]) -> None:
    assert set(record) == KEYS
    assert record["kind"] == "repository_call"
    assert isinstance(record["duration_ms"], float | int)
    assert record["duration_ms"] >= 0
    assert isinstance(record["nested"], bool)


# name, argv before the secret, expected outcome, expected exit code, limits
CASES = [
    ("echo", (), "ok", 0, None),
    ("fail", (), "exit_nonzero", 3, None),
    ("raise", (), "exit_nonzero", 1, None),
    ("sleep", ("/dev/null",), "timeout", None, ExecLimits(timeout_s=0.5)),
    ("echo", (), "output_truncated", None, ExecLimits(max_output_bytes=16)),
    ("echo", (), "dispatcher.runtime_misconfigured", None, ExecLimits(timeout_s=-1.0)),
    ("no-such-interface", (), "dispatcher.interface_not_found", None, None),
    ("private", (), "dispatcher.unauthorized_caller", None, None),
    ("echo", ("--name", "UPPER"), "dispatcher.resolution_failed", None, None),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_each_call_leaves_one_record_without_argv_stdin_or_output(
    config: Path,
    tmp_path: Path,
    case: tuple[str, tuple[str, ...], str, int | None, ExecLimits | None],
) -> None:
    name, argv, outcome, exit_code, limits = case
    path = tmp_path / "audit.jsonl"
    with JsonLinesAuditSink(path) as sink:
        repository = Repository.open(config, ledger=str(tmp_path / "ledger"), audit=(sink,))
        request = _request(name, *argv)
        stdin = SECRET.encode()
        if outcome.startswith("dispatcher."):
            with pytest.raises(RouteError) as raised:
                repository.invoke(request, stdin=stdin, limits=limits, trace_id=TRACE)
            assert raised.value.code == outcome
        else:
            result = repository.invoke(request, stdin=stdin, limits=limits, trace_id=TRACE)
            if outcome == "ok":
                assert SECRET in result.stdout  # the output held it
    (record,) = _records(path)
    _well_formed(record)
    assert record["outcome"] == outcome
    assert record["caller"] == CALLER
    assert record["nested"] is False
    assert record["interface"] == f"tools.interface.{name}"
    assert record["version"] == 1
    assert record["trace_id"] == TRACE
    if outcome.startswith("dispatcher."):
        assert record["exit_code"] is None
    if outcome == "dispatcher.runtime_misconfigured":  # refused at launch: the route is known
        assert record["security_level"] == 0
    elif outcome.startswith("dispatcher."):
        assert record["security_level"] is None
    else:
        assert record["security_level"] == 0
        if exit_code is not None:
            assert record["exit_code"] == exit_code
    text = path.read_text(encoding="ascii")
    assert SECRET not in text
    assert "UPPER" not in text


@pytest.mark.parametrize(
    ("exit_code", "timed_out", "truncated", "expected"),
    [
        (0, False, False, ("ok", 0)),
        (0, False, True, ("output_truncated", 0)),
        (-9, False, True, ("output_truncated", -9)),
        (2, False, False, ("exit_nonzero", 2)),
        (-9, False, False, ("killed", -9)),
        (-9, True, False, ("timeout", -9)),
        (None, False, False, ("dispatcher.launch_failed", None)),
    ],
)
def test_every_gateway_ending_has_its_code(
    exit_code: int | None, timed_out: bool, truncated: bool, expected: tuple[str, int | None]
) -> None:
    assert launch_outcome(exit_code, timed_out=timed_out, truncated=truncated) == expected


def test_a_streamed_124_is_a_timeout_only_after_the_whole_timeout() -> None:
    assert streaming_outcome(124, 1.2, 1.0) == ("timeout", None)
    assert streaming_outcome(124, 0.2, 1.0) == ("exit_nonzero", 124)
    assert streaming_outcome(137, 0.2, 1.0) == ("exit_nonzero", 137)
    assert streaming_outcome(0, 5.0, 1.0) == ("ok", 0)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (InterfaceNotFound(SECRET), "dispatcher.interface_not_found"),
        (RuntimeError(SECRET), "dispatcher.internal_error"),
        (KeyboardInterrupt(), "interrupted"),
    ],
)
def test_a_raised_call_is_recorded_by_its_code_never_its_text(
    error: BaseException, code: str
) -> None:
    assert refusal_outcome(error) == code


def test_a_nested_call_leaves_its_own_record_and_the_outer_one(
    config: Path, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    with JsonLinesAuditSink(path) as sink:
        repository = Repository.open(config, ledger=str(tmp_path / "ledger"), audit=(sink,))
        result = repository.invoke(_request("nested"), stdin=SECRET.encode(), trace_id=TRACE)
    assert result.exit_code == 0
    inner, outer = _records(path)  # the inner call ends first
    for record in (inner, outer):
        _well_formed(record)
        assert record["outcome"] == "ok"
        assert record["trace_id"] == TRACE
    assert inner["nested"] is True
    assert inner["caller"] == "tools"  # the calling module, decided by the parent
    assert inner["interface"] == "tools.interface.streams-both"
    assert outer["nested"] is False
    assert outer["caller"] == CALLER
    assert outer["interface"] == "tools.interface.nested"
    assert SECRET not in path.read_text(encoding="ascii")


def test_a_setup_refusal_is_recorded_with_its_code(tmp_path: Path) -> None:
    config = write_setup_repository(tmp_path / "repo")
    path = tmp_path / "audit.jsonl"
    with JsonLinesAuditSink(path) as sink:
        repository = Repository.open(config, ledger=str(tmp_path / "ledger"), audit=(sink,))
        for target, argv in (("app.interface.read", (SECRET,)), ("plain.interface.nest", ())):
            request = RouteRequest(caller=CALLER, target=target, version=1, argv=argv)
            with pytest.raises(RouteError) as raised:
                repository.invoke(request)
            assert raised.value.code == "dispatcher.setup_required"
    direct, via_nested = _records(path)[0], _records(path)[1:]
    assert direct["outcome"] == "dispatcher.setup_required"
    assert direct["interface"] == "app.interface.read"
    # The nested refusal is recorded as the gateway's call, then as the outer call's outcome.
    assert [(r["interface"], r["nested"], r["outcome"]) for r in via_nested] == [
        ("app.interface.read", True, "dispatcher.setup_required"),
        ("plain.interface.nest", False, "dispatcher.setup_required"),
    ]
    assert SECRET not in path.read_text(encoding="ascii")


@pytest.mark.parametrize(
    "target",
    [
        "x" * 5000,
        'tools.interface.echo\n{"outcome": "ok"}',
        "__import__('os').system('id')",
        "tools.interface.\u202eohce",
        "",
    ],
)
def test_a_requested_name_is_recorded_as_cut_text_never_evaluated(
    config: Path, tmp_path: Path, target: str
) -> None:
    path = tmp_path / "audit.jsonl"
    with JsonLinesAuditSink(path) as sink:
        repository = Repository.open(config, ledger=str(tmp_path / "ledger"), audit=(sink,))
        with pytest.raises(RouteError):
            repository.invoke(RouteRequest(caller=CALLER, target=target, argv=(SECRET,)))
    (record,) = _records(path)
    _well_formed(record)
    assert record["interface"] == target[:128]
    assert str(record["outcome"]).startswith("dispatcher.")
    assert path.read_bytes().count(b"\n") == 1


def test_a_dry_run_is_not_recorded(config: Path, tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with JsonLinesAuditSink(path) as sink:
        repository = Repository.open(config, audit=(sink,))
        repository.dry_run(_request("echo"))
        with pytest.raises(RouteError):
            repository.dry_run(_request("no-such-interface"))
    assert path.read_bytes() == b""


# --------------------------------------------------------------------------- #
# Failing sinks: the table's rule


class Flaky:
    """Fails ``failures`` records in a row (as a full disk would), then keeps events."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.events: list[RepositoryAuditEvent] = []

    def record(self, event: RepositoryAuditEvent) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise OSError(errno.ENOSPC, f"No space left on device {SECRET}")
        self.events.append(event)


class ChokesOnNames:
    """Refuses any event that still names its interface (a sink with a narrow format)."""

    def __init__(self) -> None:
        self.events: list[RepositoryAuditEvent] = []

    def record(self, event: RepositoryAuditEvent) -> None:
        if event.interface != "[not recorded]":
            raise TypeError("cannot store this name")
        self.events.append(event)


def test_a_sink_that_refuses_the_full_record_gets_a_minimal_one_and_calls_go_on(
    config: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sink = ChokesOnNames()
    repository = Repository.open(config, ledger=str(tmp_path / "ledger"), audit=(sink,))
    with caplog.at_level(logging.WARNING, logger="boring_dispatch"):
        for _ in range(2):
            assert repository.invoke(_request("echo")).exit_code == 0
        with pytest.raises(RouteError):
            repository.invoke(_request("no-such-interface"))
    assert [e.outcome for e in sink.events] == ["ok", "ok", "dispatcher.interface_not_found"]
    assert all(e.caller == "[not recorded]" and e.version is None for e in sink.events)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert sum("wrote a minimal record" in r.getMessage() for r in caplog.records) == 3
    assert "TypeError" in caplog.text


def test_a_recovered_sink_is_noticed_by_the_refused_calls_record(
    config: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sink = Flaky(failures=2)  # the full record and the minimal record of the first call
    repository = Repository.open(config, ledger=str(tmp_path / "ledger"), audit=(sink,))
    outcomes: list[str] = []
    with caplog.at_level(logging.WARNING, logger="boring_dispatch"):
        for _ in range(4):
            try:
                outcomes.append("ok" if repository.invoke(_request("echo")).ok else "not ok")
            except RouteError as error:
                outcomes.append(error.code)
    assert outcomes == ["ok", "dispatcher.internal_error", "ok", "ok"]
    assert [e.outcome for e in sink.events] == ["dispatcher.internal_error", "ok", "ok"]
    refused = sink.events[0]
    assert refused.exit_code is None  # nothing resolved, nothing launched
    assert refused.security_level is None
    assert SECRET not in caplog.text  # the sink's message is never logged
    lost = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any(m.startswith("audit record lost") for m in lost)
    assert any("repository call refused before resolving" in m for m in lost)


@pytest.fixture
def full_sink(tiny_fs: Path) -> Iterator[JsonLinesAuditSink]:
    """A sink on a regular file of a real filesystem with no space left."""
    sink = JsonLinesAuditSink(tiny_fs / "audit.jsonl")
    filler = os.open(tiny_fs / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with contextlib.suppress(OSError):  # ENOSPC ends the loop
            while os.write(filler, b"x" * 4096):
                pass
    finally:
        os.close(filler)
    yield sink
    sink.close()


@pytest.mark.parametrize("kind", ["full", "closed"])
def test_a_sink_whose_target_cannot_be_written_stops_live_calls_and_says_so(
    kind: str,
    request: pytest.FixtureRequest,
    config: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    if kind == "closed":
        sink = JsonLinesAuditSink(tmp_path / "audit.jsonl")
        sink.close()
    else:
        sink = request.getfixturevalue(f"{kind}_sink")
    other = Flaky(failures=0)
    repository = Repository.open(config, ledger=str(tmp_path / "ledger"), audit=(sink, other))
    marker = tmp_path / "ran"
    with caplog.at_level(logging.WARNING, logger="boring_dispatch"):
        first = repository.invoke(_request("echo"))
        refusals: list[str] = []
        for call in (
            # The sleep gateway writes its first argument's file first: it must not run.
            lambda: repository.invoke(
                _request("sleep", str(marker)), limits=ExecLimits(timeout_s=2)
            ),
            lambda: repository.resolve_live(_request("echo")),
            lambda: repository.run_captured(repository.resolve(_request("echo")), stdin=None),
        ):
            with pytest.raises(RouteError) as raised:
                call()
            refusals.append(raised.value.code)
    # The first call ran before anything could know: answered, and its loss is an ERROR.
    assert first.exit_code == 0
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any(m.startswith("audit record lost") and "outcome=ok" in m for m in errors)
    assert refusals == ["dispatcher.internal_error"] * 3
    assert not marker.exists()
    # The other sink saw every call, refusals included; the dry run resolve() is not a call.
    assert [e.outcome for e in other.events] == ["ok"] + ["dispatcher.internal_error"] * 3
    assert repository.dry_run(_request("echo"))["target"] == "tools.interface.echo"


# --------------------------------------------------------------------------- #
# Malformed sinks are refused when the repository is built (fail closed)


TWICE = ChokesOnNames()


class NoRecord:
    """Has no ``record`` at all."""


class RecordNotCallable:
    record = "not a method"


@pytest.mark.parametrize(
    "audit",
    [
        [object()],
        [None],
        [NoRecord()],
        [RecordNotCallable()],
        [Flaky],  # the class, not a sink
        "path/to/audit.jsonl",  # a path where sinks belong
        "",
        b"x",
        [Flaky(0), object()],
        {"sink": Flaky(0)},  # a mapping: its keys are not sinks
        [TWICE, TWICE],  # one sink given twice would get two records of each call
        [Flaky(0), TWICE, Flaky(0), TWICE],
    ],
    ids=repr,
)
def test_a_malformed_audit_argument_is_refused_before_any_call(
    config: Path, tmp_path: Path, audit: object
) -> None:
    with pytest.raises(RouteError) as raised:
        Repository.open(config, ledger=str(tmp_path / "ledger"), audit=audit)  # type: ignore[arg-type]
    assert raised.value.code == "dispatcher.runtime_misconfigured"
    with pytest.raises(RouteError):
        Repository(config, audit=audit)  # type: ignore[arg-type]


def test_well_formed_sink_collections_are_taken(config: Path, tmp_path: Path) -> None:
    choices: list[list[Flaky | ChokesOnNames]] = [[], [Flaky(0)], [Flaky(0), ChokesOnNames()]]
    for audit in choices:
        for given in (audit, tuple(audit)):
            repository = Repository.open(config, ledger=str(tmp_path / "ledger"), audit=given)
            assert repository.invoke(_request("echo")).exit_code == 0
        for sink in audit:
            assert [e.outcome for e in sink.events] == ["ok", "ok"]


@pytest.mark.parametrize(
    "request_",
    [None, "tools.interface.echo", {"caller": CALLER, "target": "tools.interface.echo"}, 3, b""],
    ids=repr,
)
def test_a_call_with_a_malformed_request_leaves_one_record_and_its_own_error(
    config: Path, tmp_path: Path, request_: object
) -> None:
    plain = Repository.open(config, ledger=str(tmp_path / "ledger"))
    with pytest.raises((AttributeError, RouteError)) as unaudited:
        plain.invoke(request_)  # type: ignore[arg-type]
    sink = Flaky(0)
    audited = Repository.open(config, ledger=str(tmp_path / "ledger"), audit=(sink,))
    with pytest.raises((AttributeError, RouteError)) as raised:
        audited.invoke(request_)  # type: ignore[arg-type]
    # The audit never replaces the error (nor raises one of its own while handling it).
    assert type(raised.value) is type(unaudited.value)
    assert raised.value.__context__ is None
    (event,) = sink.events
    assert event.outcome == refusal_outcome(raised.value)
    assert (event.caller, event.interface, event.version, event.nested) == (None, None, None, False)


@pytest.mark.parametrize("route", [None, "tools.interface.echo", 3, {"target": "x"}], ids=repr)
@pytest.mark.parametrize("launch", ["run_captured", "run_streaming"])
def test_a_launch_of_a_malformed_route_leaves_one_record_and_its_own_error(
    config: Path, tmp_path: Path, route: object, launch: str
) -> None:
    sink = Flaky(0)
    repository = Repository.open(config, ledger=str(tmp_path / "ledger"), audit=(sink,))
    run = repository.run_captured if launch == "run_captured" else repository.run_streaming
    with pytest.raises((AttributeError, TypeError, RouteError)) as raised:
        run(route, stdin=None)  # type: ignore[arg-type]
    assert raised.value.__context__ is None  # the launch's own error, not the audit's
    (event,) = sink.events
    assert event.outcome == refusal_outcome(raised.value)
    assert (event.caller, event.interface, event.version, event.security_level) == (
        None,
        None,
        None,
        None,
    )


@pytest.mark.parametrize(
    ("version", "recorded"),
    [
        (1, 1),
        (2**53 - 1, 2**53 - 1),
        (2**53, None),
        (10**4000, None),
        (-(10**300), None),
        (0, None),
    ],
    ids=lambda v: str(v)[:12],
)
def test_a_requested_version_is_recorded_only_as_a_bounded_number(
    config: Path, tmp_path: Path, version: int, recorded: int | None
) -> None:
    path = tmp_path / "audit.jsonl"
    with JsonLinesAuditSink(path) as sink:
        repository = Repository.open(config, ledger=str(tmp_path / "ledger"), audit=(sink,))
        with contextlib.suppress(RouteError):  # version 1 runs; any other is refused
            repository.invoke(_request("echo", version=version))
    (record,) = _records(path)
    assert record["version"] == recorded
    assert record["interface"] == "tools.interface.echo"  # the whole record, not a minimal one
    assert len(path.read_bytes()) < 1024


@pytest.mark.parametrize(
    ("positionals", "options"),
    [
        ((3,), {}),  # the broker passes any JSON list through: its items are checked here
        ((), {"--x": {"nested": "object"}}),
        ((), {"x": "1", "--x": "2"}),  # two keys, one flag
        (("a",) * 5000, {}),
        ((SECRET, None), {}),
    ],
    ids=["int-positional", "object-option", "flag-twice", "too-many", "none-positional"],
)
def test_a_gateways_malformed_nested_call_leaves_one_refusal_record(
    config: Path, tmp_path: Path, positionals: tuple[object, ...], options: dict[str, object]
) -> None:
    from boring_dispatch.process._broker import NestedCall
    from boring_dispatch.repository.repository import _NestedCalls

    path = tmp_path / "audit.jsonl"
    with JsonLinesAuditSink(path) as sink:
        repository = Repository.open(config, ledger=str(tmp_path / "ledger"), audit=(sink,))
        route = repository.resolve_live(_request("echo"), trace_id=TRACE)  # no record: no launch
        nested = _NestedCalls(repository, route, TRACE)
        call = NestedCall("tools.interface.echo", 1, positionals, options)  # type: ignore[arg-type]
        with pytest.raises(RouteError) as raised:
            nested.invoke(call, None, ExecLimits())
    (record,) = _records(path)
    _well_formed(record)
    assert record["outcome"] == raised.value.code == "dispatcher.invalid_request"
    assert (record["nested"], record["caller"], record["trace_id"]) == (True, "tools", TRACE)
    assert record["interface"] == "tools.interface.echo"
    assert SECRET not in path.read_text(encoding="ascii")
