"""One request, every entry path, one decision (SECURITY.md C7; issue 5's differential rule).

Each case of ``tests/cases/`` that a host can express is sent through:
- the Python API (``Repository.resolve``),
- the CLI (``dispatcher ... --dry-run --error-format json``),
- replay (``dispatcher replay --config ... --dry-run`` with the argv form),
- the MCP tool logic (``invoke_security_<level>`` with the projection form),
and all four must give the same decision and the same error code. Cases without
a contract get a minimal read-only one, so that the MCP tier gate (which needs a
derivable level) reaches the same stage as the others; the corpus is used as is,
and there the MCP leg runs through a real ``dispatcher mcp`` server process.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from boring_dispatch.errors import RouteError
from boring_dispatch.repository.offline.describe import describe
from boring_dispatch.repository.repository import Repository
from boring_dispatch.surfaces.cli.main import main as cli_main
from boring_dispatch.surfaces.mcp._calls import RepositoryCalls
from kits.cases import Case, RepositorySpec, load_cases

Decision = tuple[str, str | None]

_READ_ONLY_CONTRACT: dict[str, object] = {
    "execution": {
        "state_effect": "read-only",
        "lifecycle": "finite",
        "consistency": {"snapshot": "n/a"},
        "verification": [{"method": "output-schema"}],
    },
    "direct_io": {
        "reads": [],
        "writes": [
            {
                "id": "out",
                "medium": "stdout",
                "access": "write",
                "content": "x",
                "sensitivity": "public",
            }
        ],
        "network": [],
    },
}


def _expressible(case: Case) -> bool:
    request = case.request
    version_ok = request.version is None or type(request.version) is int
    return request.host and version_ok and case.certification_status is None and case.live is None


CASES = [case for case in load_cases() if _expressible(case)]


def _with_contracts(spec: RepositorySpec) -> RepositorySpec:
    sources: dict[str, object] = {}
    for source_id, original in spec.sources.items():
        document = copy.deepcopy(original)
        interfaces = document.get("interfaces") if isinstance(document, dict) else None
        if isinstance(interfaces, dict):
            for body in interfaces.values():
                if isinstance(body, dict) and "contract" not in body:
                    body["contract"] = copy.deepcopy(_READ_ONLY_CONTRACT)
        sources[source_id] = document
    return dataclasses.replace(spec, sources=sources)


def _config(case: Case, tmp_path: Path) -> Path:
    if case.corpus is not None:
        return case.write_repository(tmp_path)
    assert case.blueprints is not None
    return dataclasses.replace(case, blueprints=_with_contracts(case.blueprints)).write_repository(
        tmp_path
    )


def _api(config: Path, case: Case) -> Decision:
    try:
        Repository.open(config).resolve(case.request.route_request())
    except RouteError as error:
        return ("deny", error.code)
    return ("admit", None)


def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli_main(argv)
    return status, out.getvalue(), err.getvalue()


def _cli(config: Path, case: Case) -> Decision:
    request = case.request
    target = request.target if request.version is None else f"{request.target}@{request.version}"
    status, _, err = _run_cli(
        [
            "--config",
            str(config),
            "--caller-skill",
            request.caller,
            "--error-format",
            "json",
            *(["--stdin"] if request.stdin else []),
            "--dry-run",
            target,
            *request.argv,
        ]
    )
    if status == 0:
        return ("admit", None)
    return ("deny", json.loads(err.splitlines()[-1])["code"])


def _replay(config: Path, case: Case, tmp_path: Path) -> Decision:
    request = case.request
    trace = tmp_path / "trace.jsonl"
    line = {
        "caller": request.caller,
        "interface": request.target,
        "version": request.version,
        "argv": list(request.argv),
        "stdin": "" if request.stdin else None,
    }
    trace.write_text(json.dumps(line) + "\n", encoding="utf-8")
    status, out, _ = _run_cli(["replay", "--config", str(config), "--dry-run", str(trace)])
    assert status == 0
    outcome = json.loads(out)
    return ("deny", outcome["error"]["code"]) if "error" in outcome else ("admit", None)


def _projection(case: Case) -> dict[str, object] | None:
    request = case.request
    if any(token.startswith("-") for token in request.argv):
        return None  # the projection would add "--": not the same argv
    return {
        "caller": request.caller,
        "interface": request.target,
        "version": request.version,
        "arguments": {
            "positionals": list(request.argv),
            "options": {},
            "stdin": "" if request.stdin else None,
        },
        "dry_run": True,
    }


def _tier(config: Path, case: Case) -> int:
    try:
        level = describe(Repository.open(config), case.request.target).security_level
    except RouteError:
        return 0  # loading fails before the tier gate, on every tier alike
    return 0 if level is None else level


def _mcp_in_process(config: Path, case: Case, projection: Mapping[str, object]) -> Decision:
    calls = RepositoryCalls(Repository.open(config))
    outcome = calls.call(f"invoke_security_{_tier(config, case)}", projection, trace_id="t")
    result = outcome.structured["result"]
    assert isinstance(result, dict)
    error = result["dispatcher"].get("error")
    return ("deny", error["code"]) if error else ("admit", None)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_every_entry_path_takes_the_same_decision(case: Case, tmp_path: Path) -> None:
    config = _config(case, tmp_path)
    api = _api(config, case)
    assert api[0] == case.want.decision
    assert _cli(config, case) == api
    assert _replay(config, case, tmp_path) == api
    projection = _projection(case)
    if projection is not None and (case.corpus is not None or _tier_available(config, case)):
        assert _mcp_in_process(config, case, projection) == api


def _tier_available(config: Path, case: Case) -> bool:
    try:
        return describe(Repository.open(config), case.request.target).security_level is not None
    except RouteError:
        return True


CORPUS_CASES = [case for case in CASES if case.corpus is not None and _projection(case)]


def test_a_real_mcp_server_takes_the_corpus_decisions(tmp_path: Path) -> None:
    from kits.mcp import McpServer

    config = CORPUS_CASES[0].write_repository(tmp_path)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ASSISTANT_LOGS": str(tmp_path)}
    with (
        Path(os.devnull).open("w", encoding="utf-8") as errlog,
        McpServer(
            ["mcp", "--config", str(config)], env=env, cwd=tmp_path, errlog=errlog
        ) as session,
    ):
        for case in CORPUS_CASES:
            projection = _projection(case)
            assert projection is not None
            level = _tier(config, case)
            wire = session.call(f"invoke_security_{level}", projection)
            error = wire["structuredContent"]["result"]["dispatcher"].get("error")
            got = ("deny", error["code"]) if error else ("admit", None)
            if _tier_available(config, case) or got[0] == "admit":
                assert got == _api(config, case), case.id
