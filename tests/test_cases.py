"""Golden route cases (``tests/cases/*.yaml``) through the real pipeline.

Each case's repository is written to a temporary directory (or, for corpus
cases, the real corpus is read in place) and the request goes through
``Repository.open(config).resolve(...)``: real files, real loader, real
authorization and binding. Expectations about crossed gates and consulted
filters, which a ``Route`` does not carry, are checked by running the
authorization stage again over the same files with the real loader.
Live cases launch the gateway through ``Repository.invoke``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from boring_dispatch.errors import ResolutionFailed, RouteError
from boring_dispatch.records import Route
from boring_dispatch.repository.repository import Repository, dry_run_payload
from kits.cases import Case, CaseFileError, load_cases

CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = case.write_repository(tmp_path / "repository")
    repository = Repository.open(config)
    request = case.request.route_request()
    if case.live is not None:
        for name, value in case.live.env.items():
            monkeypatch.setenv(name, value.replace("{repository}", str(config.parent)))
        result = repository.invoke(request)
        _check_run(case, result)
        return
    try:
        route = repository.resolve(request, certification_status=case.certification_status)
    except RouteError as error:
        _check_denial(case, error)
        return
    assert case.want.decision == "admit", f"admitted; want {case.want.error_code}: {case.note}"
    _check_route(case, route, config)


def _check_denial(case: Case, error: RouteError) -> None:
    assert case.want.decision == "deny", f"refused with {error.code}: {error.message}"
    assert error.code == case.want.error_code, error.message
    if case.want.message is not None:
        assert error.message == case.want.message
    if isinstance(error, ResolutionFailed):
        assert error.reason == case.want.reason, error.message
    if error.code == "dispatcher.unauthorized_caller":
        assert error.interface_id == case.request.target
        assert error.caller_module_id == case.request.caller


def _check_route(case: Case, route: Route, config: Path) -> None:
    wanted = dict(case.want.fields)
    actual: dict[str, object] = {
        "command": list(route.binding.command),
        "pattern": route.binding.pattern,
        "stdin": route.binding.takes_stdin,
        "implementing_source_id": route.implementing_source_id,
        "script_interface": route.source_interface_id,
        "target_module_id": route.target_module_id,
        "cwd": route.cwd.relative_to(config.parent).as_posix(),
        "warnings": [warning.code for warning in route.warnings],
    }
    # The route carries the explanation of the decision, and the dry run shows it.
    actual["crossed_gates"] = list(route.crossed_gates)
    actual["filters"] = [f"{p.kind}:{p.owner_module_id}" for p in route.policies]
    shown = dry_run_payload(route)["authorization"]
    assert isinstance(shown, dict)
    assert shown["crossed_gates"] == actual["crossed_gates"]
    assert [f"{p['kind']}:{p['owner']}" for p in shown["policies"]] == actual["filters"]
    assert shown["immediate_caller"] == route.immediate_caller
    assert all(
        p["admitted_by"] in {"self", "all_modules", "allowed_callers"} for p in shown["policies"]
    )
    for key, value in wanted.items():
        assert actual[key] == value, f"{key}: {case.note}"


def _check_run(case: Case, result: object) -> None:
    from boring_dispatch.records import ExecutionResult

    assert isinstance(result, ExecutionResult)
    wanted = case.want.fields
    if "exit_code" in wanted:
        assert result.exit_code == wanted["exit_code"], result.stderr
    if wanted.get("exit_code_nonzero"):
        assert result.exit_code != 0
    if "stdout" in wanted:
        assert result.stdout == wanted["stdout"]
    if "stderr" in wanted:
        assert result.stderr == wanted["stderr"]
    if "stdout_excludes" in wanted:
        excluded = wanted["stdout_excludes"]
        assert isinstance(excluded, str)
        assert excluded not in result.stdout
        assert excluded not in result.stderr


# --------------------------------------------------------------------------- #
# The case files themselves


def test_case_ids_are_unique_and_every_case_says_why() -> None:
    assert len({case.id for case in CASES}) == len(CASES)
    assert all(case.note and case.source for case in CASES)


def test_a_case_file_with_an_unknown_key_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text(
        "corpus: famulus\ncases:\n- {id: a, note: n, source: s, wnat: {decision: admit},\n"
        "   request: {caller: a, target: a.interface.b, host: true}}\n",
        encoding="utf-8",
    )
    with pytest.raises(CaseFileError):
        load_cases(tmp_path)


def test_an_edit_of_a_path_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text(
        "fixture: direct-authorization\ncases:\n"
        "- id: a\n  note: n\n  source: s\n"
        "  edits: [{module: root, at: [namespace_exports, alpah, access], set: {}}]\n"
        "  request: {caller: root, target: root.alpha.leaf.interface.execute, host: true}\n"
        "  want: {decision: admit}\n",
        encoding="utf-8",
    )
    with pytest.raises(CaseFileError):
        load_cases(tmp_path)
