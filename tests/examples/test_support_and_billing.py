from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from boring_dispatch import Registry
from boring_dispatch.errors import UnknownTool
from boring_dispatch.observe.redact import PLACEHOLDER
from boring_dispatch.registry.spec import load_registry
from boring_dispatch.testing import CapturingSink, assert_golden

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "support_and_billing"


@pytest.fixture(autouse=True)
def _repo_root_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))


def support() -> Registry:
    return load_registry("examples.support_and_billing.support:SUPPORT")


def billing() -> Registry:
    return load_registry("examples.support_and_billing.billing:BILLING")


def test_each_surface_matches_its_golden_file() -> None:
    assert_golden(support(), EXAMPLE / "support.golden")
    assert_golden(billing(), EXAMPLE / "billing.golden")


def test_the_golden_files_are_sorted_one_name_per_line() -> None:
    for golden in ("support.golden", "billing.golden"):
        names = [
            line
            for line in (EXAMPLE / golden).read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")
        ]
        assert names == sorted(set(names))


def test_surfaces_share_handlers_but_not_the_enabled_set() -> None:
    assert support().tools["finish"].handler is billing().tools["finish"].handler
    assert "refund" not in support().names()
    assert "get_job" not in billing().names()
    assert support().dispatch("refund", {"invoice_id": "INV-1001"}).code == "unknown_tool"


def test_a_session_can_shrink_support_but_never_grow_it() -> None:
    session = support().restrict({"get_job", "finish"})
    assert session.names() == ("finish", "get_job")
    with pytest.raises(UnknownTool):
        support().restrict({"get_job", "refund"})
    with pytest.raises(UnknownTool):
        session.restrict({"lookup_invoice"})
    assert support().names() == ("finish", "get_job", "lookup_invoice")


def test_billing_refunds_and_never_writes_the_token() -> None:
    sink = CapturingSink()
    table = billing()
    audited = Registry(
        {name: table.tools[name] for name in table.names()}, name="billing", sinks=[sink]
    )
    args = {"invoice_id": "INV-1001", "amount_cents": 500, "api_token": "tok_fixture_only"}
    assert audited.dispatch("refund", args).result == {
        "invoice_id": "INV-1001",
        "refunded_cents": 500,
    }
    refused = audited.dispatch("refund", {**args, "amount_cents": 10**6})
    assert refused.code == "tool_error"
    assert [event.args["api_token"] for event in sink.events] == [PLACEHOLDER] * 2  # type: ignore[index]


def test_the_live_box_tells_the_essay_story(capsys: pytest.CaptureFixture[str]) -> None:
    live_box = importlib.import_module("examples.live_box")
    assert live_box.main() == 0
    out = capsys.readouterr().out
    assert '"code":"unknown_tool"' in out
    assert "bound names: finish, get_job" in out
    assert "handler ran: False" in out
    [in_observation] = re.findall(r'"correlation_id":"([0-9A-Z]{26})"', out)
    [in_log] = re.findall(r"server log: .*correlation_id=([0-9A-Z]{26})", out)
    assert in_observation == in_log
    assert "KeyError: 99" in out
