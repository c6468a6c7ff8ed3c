"""Every malformed MCP message gets exactly one JSON-RPC error response, never silence.

Findings: duplicate JSON keys were last-wins on the MCP wire (the table
refuses them); a 1000-deep message, a ``\\ud800`` escape, bytes that are not
UTF-8, or an id that is a float or a huge integer got no response at all, so
the client waited forever. Now each line is strict JSON, checked before it is
built: a refusal is -32700 (not JSON / not UTF-8 / lone surrogate) or -32600
(not an acceptable message), with the message's id when it can be recovered
and is valid, else ``null``. Ids are strings or integers of at most 2**53 - 1
in magnitude (JSON-RPC: ids are strings or numbers and SHOULD NOT be
fractional); any other id is refused with id ``null``. A malformed *response*
is dropped (a response is never answered). After every refusal the server
still answers, and nothing else was written in between.

Each test drives a real ``dispatcher mcp --registry`` process over real pipes.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kits.gateways import wait_until
from kits.mcpwire import RawServer, write_hostile_table

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
MAX_ID: Final = 2**53 - 1
_IDS: Final = itertools.count(1000)


@pytest.fixture(scope="module")
def table_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("table")
    write_hostile_table(directory)
    return directory


@pytest.fixture(scope="module")
def server(table_dir: Path) -> Iterator[RawServer]:
    with RawServer(["mcp", "--registry", "hostile_table:TABLE"], cwd=table_dir) as raw:
        raw.initialize()
        yield raw


def expect_refusal(
    server: RawServer, line: bytes, code: int | set[int], request_id: object
) -> None:
    """One error response with ``code`` (or one of them) and ``request_id``; then a ping answer."""
    server.send(line)
    answer = server.receive()
    assert answer.get("id", "missing") == request_id, (line[:200], answer)
    codes = code if isinstance(code, set) else {code}
    assert answer.get("error", {}).get("code") in codes, (line[:200], answer)
    assert set(answer) == {"jsonrpc", "id", "error"}
    assert isinstance(answer["error"]["message"], str)
    server.ping(next(_IDS))


def expect_silence(server: RawServer, line: bytes) -> None:
    """No answer for this line: the next one the server writes answers the ping after it."""
    server.send(line)
    server.ping(next(_IDS))


def ping(request_id: object, **extra: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "ping", **extra}


# --------------------------------------------------------------------------- #
# Duplicate keys


def _dumps_with_duplicate(value: object, target: int, counter: list[int]) -> str:
    """JSON text of ``value`` where the ``target``-th object (in document order) repeats a key."""
    if isinstance(value, dict):
        index = counter[0]
        counter[0] += 1
        members = [
            f"{json.dumps(key)}:{_dumps_with_duplicate(member, target, counter)}"
            for key, member in value.items()
        ]
        if index == target:
            key = next(iter(value), "k")
            members.append(f"{json.dumps(key)}:0")
            if len(members) == 1:
                members.append(f"{json.dumps(key)}:1")
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dumps_with_duplicate(item, target, counter) for item in value) + "]"
    return json.dumps(value)


def _objects(value: object) -> int:
    if isinstance(value, dict):
        return 1 + sum(_objects(member) for member in value.values())
    if isinstance(value, list):
        return sum(_objects(item) for item in value)
    return 0


@given(
    arguments=st.dictionaries(
        st.sampled_from(["text", "a", "id", "method"]),
        st.recursive(
            st.integers() | st.text(max_size=5),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner),
            max_leaves=6,
        ),
        max_size=3,
    ),
    data=st.data(),
)
def test_a_duplicate_key_anywhere_is_an_invalid_request_with_the_id(
    server: RawServer, arguments: dict[str, object], data: st.DataObject
) -> None:
    request_id = next(_IDS)
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": arguments},
    }
    # Object 0 is the envelope: its duplicate is checked below, with the id itself.
    target = data.draw(st.integers(1, _objects(message) - 1))
    line = _dumps_with_duplicate(message, target, [0]).encode()
    expect_refusal(server, line, INVALID_REQUEST, request_id)


@pytest.mark.parametrize(
    ("line", "request_id"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/list"}', 7),
        (b'{"jsonrpc":"2.0","jsonrpc":"2.0","id":"r","method":"ping"}', "r"),
        (b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{},"params":{}}', 7),
        (b'{"jsonrpc":"2.0","id":2,"id":3,"method":"ping"}', None),  # which id? neither
        (b'{"jsonrpc":"2.0","id":3,"id":3,"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","method":"notifications/x","method":"y"}', None),
    ],
)
def test_a_duplicate_key_in_the_envelope_is_an_invalid_request(
    server: RawServer, line: bytes, request_id: object
) -> None:
    expect_refusal(server, line, INVALID_REQUEST, request_id)


# --------------------------------------------------------------------------- #
# Nesting


def _nested(depth: int, kind: str, *, closed: bool = True) -> str:
    opening = {"list": "[", "dict": '{"a":', "mixed": '[{"a":'}[kind]
    closing = {"list": "]", "dict": "}", "mixed": "}]"}[kind]
    levels = depth if kind != "mixed" else depth // 2
    return opening * levels + "0" + (closing * levels if closed else "")


@pytest.mark.parametrize("depth", [70, 100, 1000, 100_000])
@pytest.mark.parametrize("kind", ["list", "dict", "mixed"])
@pytest.mark.parametrize("closed", [True, False], ids=["closed", "unclosed"])
def test_deep_nesting_is_refused_with_the_id(
    server: RawServer, depth: int, kind: str, closed: bool
) -> None:
    request_id = next(_IDS)
    head = f'{{"jsonrpc":"2.0","id":{request_id},"method":"ping","params":{{"x":'
    line = (head + _nested(depth, kind, closed=closed) + ("}}" if closed else "")).encode()
    # Unclosed, it is not JSON either: whichever is found first is the reason.
    codes = {INVALID_REQUEST} if closed else {INVALID_REQUEST, PARSE_ERROR}
    expect_refusal(server, line, codes, request_id)


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_deep_nesting_of_the_message_itself_is_refused_with_id_null(
    server: RawServer, depth: int
) -> None:
    expect_refusal(server, _nested(depth, "list").encode(), INVALID_REQUEST, None)


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 10_000, "[{,:" * 100_000, '\\"[' * 1000])
def test_brackets_inside_strings_are_not_nesting(server: RawServer, text: str) -> None:
    request_id = next(_IDS)
    answer = server.request(ping(request_id, params={"x": text}))
    assert answer == {"jsonrpc": "2.0", "id": request_id, "result": {}}


def test_nesting_within_the_cap_is_served(server: RawServer) -> None:
    request_id = next(_IDS)
    answer = server.request(ping(request_id, params={"x": json.loads(_nested(60, "list"))}))
    assert answer == {"jsonrpc": "2.0", "id": request_id, "result": {}}


# --------------------------------------------------------------------------- #
# Text that is not Unicode

LONE_ESCAPES: Final = [r"\ud800", r"\udfff", r"\udbff\u0041", r"\ude00\ud83d", r"a\udce9b"]


@pytest.mark.parametrize("escape", LONE_ESCAPES)
@pytest.mark.parametrize("where", ["method", "key", "value", "arguments"])
def test_a_lone_surrogate_escape_is_a_parse_error_with_the_id(
    server: RawServer, escape: str, where: str
) -> None:
    request_id = next(_IDS)
    body = {
        "method": f'"method":"ping{escape}"',
        "key": f'"method":"ping","params":{{"{escape}":1}}',
        "value": f'"method":"ping","params":{{"x":["{escape}"]}}',
        "arguments": (
            f'"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{escape}"}}}}'
        ),
    }[where]
    line = f'{{"jsonrpc":"2.0","id":{request_id},{body}}}'.encode()
    expect_refusal(server, line, PARSE_ERROR, request_id)


@pytest.mark.parametrize("escape", LONE_ESCAPES)
def test_a_lone_surrogate_in_the_id_is_refused_with_id_null(server: RawServer, escape: str) -> None:
    line = f'{{"jsonrpc":"2.0","id":"{escape}","method":"ping"}}'.encode()
    expect_refusal(server, line, INVALID_REQUEST, None)


def test_a_valid_surrogate_pair_escape_is_served(server: RawServer) -> None:
    request_id = next(_IDS)
    line = (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"ping","params":{{"x":"\\ud83d\\ude00"}}}}'
    )
    server.send(line.encode())
    assert server.receive() == {"jsonrpc": "2.0", "id": request_id, "result": {}}


@pytest.mark.parametrize(
    "raw",
    [b"\xff", b"\xfe\xff", b"\xed\xa0\x80", b"\xc0\xaf", b"\xe2\x82", b"\xf4\x90\x80\x80", b"\x80"],
)
@pytest.mark.parametrize("where", ["value", "key", "outside"])
def test_bytes_that_are_not_utf8_are_a_parse_error_with_the_id(
    server: RawServer, raw: bytes, where: str
) -> None:
    request_id = next(_IDS)
    head = f'{{"jsonrpc":"2.0","id":{request_id},"method":"ping","params":'.encode()
    body = {
        "value": b'{"x":"' + raw + b'"}}',
        "key": b'{"' + raw + b'":1}}',
        "outside": b"{}" + raw + b"}",
    }[where]
    expect_refusal(server, head + body, PARSE_ERROR, request_id)


# --------------------------------------------------------------------------- #
# Text that is not JSON, JSON that is not a message


@pytest.mark.parametrize(
    "tail",
    [
        "",  # cut short
        ',"params":{',
        ',"params":{"x":NaN}}',
        ',"params":{"x":Infinity}}',
        ',"params":{"x":-Infinity}}',
        ',"params":{"x":1e400}}',
        ',"params":{"x":-1e999}}',
        ',"params":{"x":' + "9" * 5000 + "}}",
        ',"params":{"x":01}}',
        ',"params":{"x":[1,]}}',
        ",\"params\":{'x':1}}",
        "}}",
        "} trailing",
        ',"params":{"x":"\x01"}}',
    ],
)
def test_text_that_is_not_json_is_a_parse_error_with_the_id_from_the_head(
    server: RawServer, tail: str
) -> None:
    request_id = next(_IDS)
    line = f'{{"jsonrpc":"2.0","id":{request_id},"method":"ping"{tail}'.encode()
    expect_refusal(server, line, PARSE_ERROR, request_id)


@pytest.mark.parametrize(
    "line",
    [b"garbage", b"{", b"}", b'{"a":}', b"\x00", b'{"method":"ping","id":1', b"'x'", b"nul"],
)
def test_text_that_is_not_json_without_a_readable_id_is_a_parse_error_with_id_null(
    server: RawServer, line: bytes
) -> None:
    expect_refusal(server, line, PARSE_ERROR, None)


@pytest.mark.parametrize(
    "line",
    [
        b"[]",
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',  # a batch
        b'"ping"',
        b"1",
        b"null",
        b"true",
    ],
)
def test_json_that_is_not_an_object_is_an_invalid_request_with_id_null(
    server: RawServer, line: bytes
) -> None:
    expect_refusal(server, line, INVALID_REQUEST, None)


@pytest.mark.parametrize(
    "envelope",
    [
        {"method": "ping"},
        {"jsonrpc": "1.0", "method": "ping"},
        {"jsonrpc": 2, "method": "ping"},
        {"jsonrpc": "2.0", "method": 5},
        {"jsonrpc": "2.0", "method": None},
        {"jsonrpc": "2.0", "method": "ping", "params": []},
        {"jsonrpc": "2.0", "method": "ping", "params": "x"},
        {"jsonrpc": "2.0"},
    ],
)
@pytest.mark.parametrize("with_id", [True, False])
def test_json_that_is_not_a_jsonrpc_message_is_an_invalid_request(
    server: RawServer, envelope: dict[str, object], with_id: bool
) -> None:
    request_id = next(_IDS) if with_id else None
    message = {**envelope, "id": request_id} if with_id else envelope
    expect_refusal(server, json.dumps(message).encode(), INVALID_REQUEST, request_id)


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"result":{},"result":{}}',
        b'{"jsonrpc":"2.0","id":1.5,"result":{}}',
        b'{"jsonrpc":"2.0","id":1,"error":"x"}',
        b'{"jsonrpc":"2.0","id":true,"error":{"code":1,"message":"m"}}',
        b'{"jsonrpc":"2.0","id":1,"result":["\\ud800"]}',
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
        b'{"jsonrpc":"2.0","id":99,"result":{}}',  # valid, for no request of ours
        b"",
        b"   ",
    ],
)
def test_a_response_or_a_blank_line_is_never_answered(server: RawServer, line: bytes) -> None:
    expect_silence(server, line)


# --------------------------------------------------------------------------- #
# Ids


@pytest.mark.parametrize(
    "raw_id",
    [
        str(2**53),
        str(-(2**53)),
        str(2**64),
        "1" + "0" * 30,
        "1e3",
        "1.0",
        "1.5",
        "-0.5",
        "0.0",
        "-0.0",
        "true",
        "false",
        "null",
        "{}",
        "[]",
        "[1]",
        '{"id":1}',
    ],
)
def test_an_id_that_is_not_a_string_or_a_safe_integer_is_refused_with_id_null(
    server: RawServer, raw_id: str
) -> None:
    line = f'{{"jsonrpc":"2.0","id":{raw_id},"method":"ping"}}'.encode()
    expect_refusal(server, line, INVALID_REQUEST, None)


@pytest.mark.parametrize(
    "request_id",
    [0, 1, -1, MAX_ID, -MAX_ID, "", "a", "7", " 7 ", "x" * 1000, "\u65e5\u672c", "\U0001f600"],
)
def test_a_string_or_safe_integer_id_is_echoed(server: RawServer, request_id: object) -> None:
    assert server.request(ping(request_id)) == {"jsonrpc": "2.0", "id": request_id, "result": {}}


@given(
    st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
)
def test_the_id_rule_over_integers_and_floats(server: RawServer, number: float) -> None:
    line = json.dumps(ping(0)).replace('"id": 0', f'"id": {json.dumps(number)}').encode()
    server.send(line)
    answer = server.receive()
    if isinstance(number, int) and abs(number) <= MAX_ID:
        assert answer == {"jsonrpc": "2.0", "id": number, "result": {}}
    else:
        assert answer["id"] is None
        assert answer["error"]["code"] == INVALID_REQUEST


def test_an_id_still_in_progress_is_refused_and_the_first_call_is_not_disturbed(
    table_dir: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "started"
    with RawServer(["mcp", "--registry", "hostile_table:TABLE"], cwd=table_dir) as raw:
        raw.initialize()
        call = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "block", "arguments": {"marker": str(marker)}},
        }
        raw.send_json(call)
        assert wait_until(marker.exists, timeout_s=30.0)
        for same in (5, "5"):  # the SDK treats "5" and 5 as one id
            again = {**call, "id": same, "params": {"name": "echo", "arguments": {"text": "x"}}}
            answer = raw.request(again)
            assert answer["id"] == same
            assert answer["error"]["code"] == INVALID_REQUEST
        raw.ping(6)


def test_a_handler_cannot_read_or_write_the_wire(server: RawServer) -> None:
    request_id = next(_IDS)
    # The next request is already in the pipe when the handler reads its stdin.
    server.send_json(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "noisy"}}
    )
    server.send_json(ping(request_id + 1))
    answers = {answer["id"]: answer for answer in (server.receive(), server.receive())}
    assert answers[request_id]["result"]["structuredContent"]["result"] == {
        "ok": True,
        "result": {"stdin": "", "raw": ""},
    }
    assert answers[request_id + 1] == {"jsonrpc": "2.0", "id": request_id + 1, "result": {}}
