from __future__ import annotations

import pytest

from examples import demo_fixtures


def test_the_fixture_demo_records_replays_fails_on_a_change_and_deploys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert demo_fixtures.main() == 0
    out = capsys.readouterr().out
    assert out.count("(exit 0)") == 2
    assert out.count("(exit 1)") == 1
    assert '"difference": "observation", "line": 1' in out
    assert "Loaded back from the rows: ('finish', 'get_job', 'lookup_invoice')" in out
