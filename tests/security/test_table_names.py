"""Names that are not in the table never become code: exact dict lookup, nothing else.

The handlers live in a module object that records every attribute access, and
``__import__``, ``eval``, ``exec``, ``compile``, ``getattr``, ``globals``,
``vars`` and ``importlib.import_module`` are replaced by recorders while the
hostile names are dispatched. Nothing may be touched, and ``sys.modules`` may
not change.
"""

from __future__ import annotations

import builtins
import importlib
import json
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch import Registry, Tool
from kits.strategies import HOSTILE_TOOL_NAMES

RAN: list[str] = []
ACCESSED: list[str] = []


class RecordingModule(types.ModuleType):
    """A handlers module that notes every attribute read."""

    def __getattribute__(self, name: str) -> object:
        ACCESSED.append(name)
        return super().__getattribute__(name)


def _get_job(job_id: int) -> dict[str, object]:
    RAN.append("get_job")
    return {"job_id": job_id}


def _finish(answer: str) -> dict[str, object]:
    RAN.append("finish")
    return {"answer": answer}


def _secret_helper() -> str:
    RAN.append("secret_helper")
    return "should never run"


HANDLERS = RecordingModule("handlers")
HANDLERS.__dict__.update(
    get_job=_get_job,
    finish=_finish,
    secret_helper=_secret_helper,
    system=_secret_helper,
    os=types.SimpleNamespace(system=_secret_helper),
)
TABLE = Registry(
    {
        "get_job": Tool(HANDLERS.get_job, description="Look up one job."),  # type: ignore[arg-type]
        "finish": Tool(HANDLERS.finish, description="End the session."),  # type: ignore[arg-type]
    },
    name="names_suite",
)


@contextmanager
def recording_dangerous_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    calls: list[str] = []

    def recorder(label: str, real: Callable[..., object]) -> Callable[..., object]:
        def record(*args: object, **kwargs: object) -> object:
            calls.append(label)
            return real(*args, **kwargs)

        return record

    with monkeypatch.context() as patch:
        for label in ("__import__", "eval", "exec", "compile", "getattr", "globals", "vars"):
            patch.setattr(builtins, label, recorder(label, getattr(builtins, label)))
        patch.setattr(
            importlib, "import_module", recorder("import_module", importlib.import_module)
        )
        calls.clear()  # monkeypatch itself imports while patching
        yield calls


@pytest.mark.parametrize("name", HOSTILE_TOOL_NAMES)
def test_a_hostile_name_is_unknown_tool_and_touches_nothing(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    RAN.clear()
    ACCESSED.clear()
    modules = set(sys.modules)
    request = json.dumps({"name": name, "args": {"job_id": 7, "command": "id"}})
    with recording_dangerous_calls(monkeypatch) as calls:
        direct = TABLE.dispatch(name, {"job_id": 7})
        parsed = TABLE.dispatch_json(request)
        seen = list(calls)
    assert direct.code == "unknown_tool"
    assert parsed.code == "unknown_tool"
    assert seen == []
    assert ACCESSED == []
    assert RAN == []
    assert set(sys.modules) == modules


def test_the_recorders_do_notice_a_lookup_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # The suite above could not fail if the recorders were blind: prove they see.
    ACCESSED.clear()
    with recording_dangerous_calls(monkeypatch) as calls:
        getattr(HANDLERS, "secret_helper")  # noqa: B009 - the access under test
        builtins.eval("1")  # noqa: S307 - the call under test
        importlib.import_module("json")
        import json as again  # noqa: F401 - the import statement under test

        seen = list(calls)
    assert "secret_helper" in ACCESSED
    assert {"__import__", "getattr", "eval", "import_module"} <= set(seen)


def test_known_names_still_work_under_the_recorders(monkeypatch: pytest.MonkeyPatch) -> None:
    RAN.clear()
    with recording_dangerous_calls(monkeypatch):
        assert TABLE.dispatch("get_job", {"job_id": 7}).ok
        assert TABLE.dispatch_json('{"name": "finish", "args": {"answer": "a"}}').ok
    assert RAN == ["get_job", "finish"]


@given(st.text(max_size=40).filter(lambda n: n not in ("get_job", "finish")))
def test_any_other_text_is_unknown_tool(name: str) -> None:
    RAN.clear()
    assert TABLE.dispatch(name, {"job_id": 7}).code == "unknown_tool"
    assert TABLE.dispatch_json(json.dumps({"name": name, "args": {}})).code == "unknown_tool"
    assert RAN == []


@given(st.sampled_from(["get_job", "finish"]), st.sampled_from(["upper", "title", "pad", "nfkc"]))
def test_near_misses_of_bound_names_are_unknown_tool(name: str, change: str) -> None:
    near = {
        "upper": name.upper(),
        "title": name.title(),
        "pad": f"{name}\t",
        "nfkc": "".join(chr(ord(c) + 0xFEE0) if c.isalpha() else c for c in name),
    }[change]
    RAN.clear()
    assert TABLE.dispatch(near, {"job_id": 7}).code == "unknown_tool"
    assert RAN == []


def test_the_unknown_tool_message_never_echoes_more_than_a_short_repr() -> None:
    name = "x" * 5000 + "\n\x1b[31m"
    observation = TABLE.dispatch(name, {})
    assert observation.error is not None
    assert len(observation.error.message) < 100
    assert "\n" not in observation.error.message
