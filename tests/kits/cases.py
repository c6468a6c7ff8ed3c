"""Data-driven route cases (``tests/cases/*.yaml``): loading, and writing their repositories.

One loader for every consumer: the parametrized runner (``tests/test_cases.py``)
and any differential test that replays the same cases through another entry
path (CLI, replay, MCP). A consumer calls :func:`load_cases`, then, per case,
:meth:`Case.write_repository` and :meth:`CaseRequest.route_request`.

Case file schema (unknown keys are errors, so a typo cannot silently pass)::

    fixture: <name>          # tests/cases/fixtures/<name>.yaml   } exactly one,
    corpus: famulus          # a real repository, used read-only  } or neither
    blueprints: {...}        # an inline repository (same shape as a fixture)
    cases:
      - id: unique-slug
        note: what the case shows and why the outcome follows
        source: where the expectation comes from (e.g. "BLUEPRINTS-V6 5.6 #7")
        edits: [...]         # fixture/blueprints only; applied in order
        request: {caller, target, host, version?, argv?, stdin?}
        certification_status: {node-id: state}   # optional
        live: {env: {NAME: value}}                # optional; "{repository}" is replaced
        want:
          decision: admit | deny
          error_code: dispatcher.<name>           # required iff deny
          message: exact text                     # only where the message is the contract
          reason: <RefusalReason>                 # required iff dispatcher.resolution_failed
          command, pattern, stdin, crossed_gates, filters ("<kind>:<owner>"),
          warnings (codes, in order), implementing_source_id, script_interface,
          target_module_id, cwd (POSIX, relative to the repository root)
          exit_code | exit_code_nonzero, stdout, stderr, stdout_excludes  # live only

A repository (fixture file or inline ``blueprints``)::

    roots: [skills]                       # officina.toml modules.roots
    modules: {<module-id>: <blueprint>}   # <roots[0]>/<a>/<b>/blueprint.yaml
    sources: {<source-id>: <blueprint>}   # at the owner's locator path
    files: {<repo-relative path>: text}   # gateways and helpers

Each source's ``gateway.path`` gets an empty file unless ``files`` names it.
An edit changes one document::

    {module: <id> | source: <id>, at: [key, ...], set: <value>}   # at: [] = the whole document
    {module: <id> | source: <id>, at: [key, ...], remove: true}
    {file: <repo-relative path>, set: <text>}

Every intermediate key of ``at`` must exist, so an edit cannot miss its target.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Final

import yaml

from boring_dispatch.records import RouteRequest
from boring_dispatch.repository._shapes import REFUSAL_REASONS

__all__ = [
    "CASES_DIR",
    "Case",
    "CaseRequest",
    "LiveSpec",
    "RepositorySpec",
    "Want",
    "corpus_config",
    "load_cases",
]

CASES_DIR: Final = Path(__file__).parent.parent / "cases"
FIXTURES_DIR: Final = CASES_DIR / "fixtures"

#: Where each named corpus may live, first existing wins. The environment
#: variable ``BORING_DISPATCH_CORPUS_<NAME>`` (upper case) overrides.
_CORPUS_CANDIDATES: Final = {
    "famulus": (Path(__file__).parent.parent / "corpus" / "famulus",),
}

_FILE_KEYS: Final = frozenset({"fixture", "corpus", "blueprints", "cases"})
_CASE_KEYS: Final = frozenset(
    {"id", "note", "source", "edits", "request", "certification_status", "live", "want"}
)
_REQUEST_KEYS: Final = frozenset({"caller", "target", "host", "version", "argv", "stdin"})
_REPOSITORY_KEYS: Final = frozenset({"roots", "modules", "sources", "files"})
_WANT_KEYS: Final = frozenset(
    {
        "decision",
        "error_code",
        "message",
        "reason",
        "command",
        "pattern",
        "stdin",
        "crossed_gates",
        "filters",
        "warnings",
        "implementing_source_id",
        "script_interface",
        "target_module_id",
        "cwd",
        "exit_code",
        "exit_code_nonzero",
        "stdout",
        "stderr",
        "stdout_excludes",
    }
)
_LIVE_WANT_KEYS: Final = frozenset(
    {"exit_code", "exit_code_nonzero", "stdout", "stderr", "stdout_excludes"}
)


class CaseFileError(Exception):
    """A case file does not follow the schema above."""


@dataclass(frozen=True, slots=True)
class RepositorySpec:
    """The files of one case repository, after its edits."""

    roots: tuple[str, ...]
    modules: Mapping[str, object]
    sources: Mapping[str, object]
    files: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class CaseRequest:
    caller: str
    target: str
    #: Host mode (a discoverable top-level skill) or a nested call.
    host: bool
    #: As written in the case: ``None``, an int, or a deliberately wrong value (``true``).
    version: object = None
    argv: tuple[str, ...] = ()
    stdin: bool = False

    def route_request(self) -> RouteRequest:
        # A wrong-typed pin (`true`) is passed through on purpose: the pipeline must refuse it.
        version: int | None = self.version  # type: ignore[assignment]
        return RouteRequest(
            caller=self.caller,
            target=self.target,
            version=version,
            argv=self.argv,
            sends_stdin=self.stdin,
            from_host=self.host,
        )


@dataclass(frozen=True, slots=True)
class Want:
    decision: str
    error_code: str | None = None
    message: str | None = None
    #: The internal bind-stage reason (``ResolutionFailed.reason``) of a resolution_failed denial.
    reason: str | None = None
    #: Every other expectation, by key (see the module docstring).
    fields: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LiveSpec:
    #: Environment variables of the dispatcher process; ``{repository}`` is replaced.
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    #: The case file, relative to ``tests/cases``.
    file: str
    note: str
    source: str
    request: CaseRequest
    want: Want
    blueprints: RepositorySpec | None = None
    corpus: str | None = None
    certification_status: Mapping[str, object] | None = None
    live: LiveSpec | None = None

    def write_repository(self, directory: Path) -> Path:
        """Write this case's repository under ``directory``; return its ``officina.toml``.

        A corpus case writes nothing and returns the corpus configuration path.
        """
        if self.corpus is not None:
            return corpus_config(self.corpus)
        assert self.blueprints is not None
        return _write(self.blueprints, directory)


def load_cases(directory: Path = CASES_DIR) -> list[Case]:
    """Every case of every ``*.yaml`` file in ``directory`` (not recursive), sorted by file."""
    cases: list[Case] = []
    for path in sorted(directory.glob("*.yaml")):
        cases.extend(_load_file(path))
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise CaseFileError(f"duplicate case id {case.id!r}")
        seen.add(case.id)
    return cases


def corpus_config(name: str) -> Path:
    """The ``officina.toml`` of a named corpus.

    Raises:
        CaseFileError: the corpus is unknown or not present on this machine.
    """
    override = os.environ.get(f"BORING_DISPATCH_CORPUS_{name.upper()}")
    candidates = (Path(override),) if override else _CORPUS_CANDIDATES.get(name, ())
    for candidate in candidates:
        if (candidate / "officina.toml").is_file():
            return candidate / "officina.toml"
    raise CaseFileError(f"corpus {name!r} not found in {[str(c) for c in candidates]}")


# --------------------------------------------------------------------------- #
# Reading


def _load_file(path: Path) -> list[Case]:
    where = path.name
    document = _mapping(yaml.safe_load(path.read_text(encoding="utf-8")), where, _FILE_KEYS)
    bases = [key for key in ("fixture", "corpus", "blueprints") if key in document]
    if len(bases) > 1:
        raise CaseFileError(f"{where}: give at most one of fixture, corpus, blueprints")
    base: dict[str, object] | None = None
    if "fixture" in document:
        fixture = FIXTURES_DIR / f"{_string(document['fixture'], where)}.yaml"
        base = _mapping(yaml.safe_load(fixture.read_text(encoding="utf-8")), fixture.name)
    elif "blueprints" in document:
        base = _mapping(document["blueprints"], where)
    corpus = _string(document["corpus"], where) if "corpus" in document else None
    entries = document.get("cases")
    if not isinstance(entries, list) or not entries:
        raise CaseFileError(f"{where}: cases must be a non-empty list")
    return [_load_case(entry, where, base, corpus) for entry in entries]


def _load_case(
    entry: object, where: str, base: dict[str, object] | None, corpus: str | None
) -> Case:
    raw = _mapping(entry, where, _CASE_KEYS)
    case_id = _string(raw.get("id"), f"{where}: id")
    here = f"{where}:{case_id}"
    for key in ("note", "source", "request", "want"):
        if key not in raw:
            raise CaseFileError(f"{here}: missing {key}")
    edits = raw.get("edits", [])
    if not isinstance(edits, list) or (edits and base is None):
        raise CaseFileError(f"{here}: edits need a fixture or blueprints and must be a list")
    blueprints = None
    if base is not None:
        repository = copy.deepcopy(base)
        for edit in edits:
            _apply_edit(repository, edit, here)
        blueprints = _repository(repository, here)
    live = None
    if "live" in raw:
        live_raw = _mapping(raw["live"], f"{here}: live", frozenset({"env"}))
        env = _mapping(live_raw.get("env", {}), f"{here}: live.env")
        live = LiveSpec({str(k): _string(v, f"{here}: live.env") for k, v in env.items()})
    status = raw.get("certification_status")
    if status is not None:
        status = _mapping(status, f"{here}: certification_status")
    want = _want(raw["want"], here, live=live is not None)
    return Case(
        id=case_id,
        file=where,
        note=_string(raw["note"], here),
        source=_string(raw["source"], here),
        request=_request(raw["request"], here),
        want=want,
        blueprints=blueprints,
        corpus=corpus,
        certification_status=status,
        live=live,
    )


def _request(value: object, here: str) -> CaseRequest:
    raw = _mapping(value, f"{here}: request", _REQUEST_KEYS)
    for key in ("caller", "target", "host"):
        if key not in raw:
            raise CaseFileError(f"{here}: request.{key} is required")
    argv = raw.get("argv", [])
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise CaseFileError(f"{here}: request.argv must be a list of strings")
    host, stdin = raw["host"], raw.get("stdin", False)
    if not isinstance(host, bool) or not isinstance(stdin, bool):
        raise CaseFileError(f"{here}: request.host and request.stdin must be booleans")
    return CaseRequest(
        caller=_string(raw["caller"], here),
        target=_string(raw["target"], here),
        host=host,
        version=raw.get("version"),
        argv=tuple(argv),
        stdin=stdin,
    )


def _want(value: object, here: str, *, live: bool) -> Want:
    raw = _mapping(value, f"{here}: want", _WANT_KEYS)
    decision = raw.get("decision")
    if decision not in ("admit", "deny"):
        raise CaseFileError(f"{here}: want.decision must be admit or deny")
    error_code = raw.get("error_code")
    if (decision == "deny") != isinstance(error_code, str):
        raise CaseFileError(f"{here}: want.error_code is required for deny, only for deny")
    if not live and _LIVE_WANT_KEYS & raw.keys():
        raise CaseFileError(f"{here}: exit_code/stdout/stderr expectations need live")
    message = raw.get("message")
    if message is not None and not isinstance(message, str):
        raise CaseFileError(f"{here}: want.message must be a string")
    reason = raw.get("reason")
    if (error_code == "dispatcher.resolution_failed") != (reason in REFUSAL_REASONS):
        raise CaseFileError(
            f"{here}: want.reason (a refusal reason) is required iff resolution_failed"
        )
    own = ("decision", "error_code", "message", "reason")
    rest = {k: v for k, v in raw.items() if k not in own}
    return Want(
        str(decision),
        error_code if isinstance(error_code, str) else None,
        message,
        str(reason) if reason is not None else None,
        rest,
    )


def _repository(raw: dict[str, object], here: str) -> RepositorySpec:
    _mapping(raw, here, _REPOSITORY_KEYS)
    roots = raw.get("roots")
    if not isinstance(roots, list) or not roots or not all(isinstance(r, str) for r in roots):
        raise CaseFileError(f"{here}: roots must be a non-empty list of strings")
    files = _mapping(raw.get("files", {}), f"{here}: files")
    return RepositorySpec(
        roots=tuple(roots),
        modules=_mapping(raw.get("modules", {}), f"{here}: modules"),
        sources=_mapping(raw.get("sources", {}), f"{here}: sources"),
        files={str(k): _string(v, f"{here}: files") for k, v in files.items()},
    )


def _apply_edit(repository: dict[str, object], edit: object, here: str) -> None:
    raw = _mapping(
        edit, f"{here}: edit", frozenset({"module", "source", "file", "at", "set", "remove"})
    )
    if ("set" in raw) == bool(raw.get("remove")):
        raise CaseFileError(f"{here}: an edit has exactly one of set or remove: true")
    if "file" in raw:
        files = repository.setdefault("files", {})
        assert isinstance(files, dict)
        files[_string(raw["file"], here)] = _string(raw.get("set"), f"{here}: file edit")
        return
    kind = "modules" if "module" in raw else "sources"
    key = _string(raw.get("module", raw.get("source")), f"{here}: edit target")
    documents = repository.setdefault(kind, {})
    assert isinstance(documents, dict)
    path = raw.get("at", [])
    if not isinstance(path, list) or not all(isinstance(p, str) for p in path):
        raise CaseFileError(f"{here}: edit.at must be a list of keys")
    if not path:
        if raw.get("remove"):
            documents.pop(key)
        else:
            documents[key] = raw["set"]
        return
    node = documents.get(key)
    for step in path[:-1]:
        if not isinstance(node, dict) or step not in node:
            raise CaseFileError(f"{here}: edit path {[key, *path]} does not exist")
        node = node[step]
    if not isinstance(node, dict):
        raise CaseFileError(f"{here}: edit path {[key, *path]} does not end in a mapping")
    if raw.get("remove"):
        if path[-1] not in node:
            raise CaseFileError(f"{here}: nothing to remove at {[key, *path]}")
        del node[path[-1]]
    else:
        node[path[-1]] = raw["set"]


def _mapping(value: object, where: str, allowed: frozenset[str] | None = None) -> dict[str, object]:
    if not isinstance(value, dict):
        raise CaseFileError(f"{where}: expected a mapping")
    if allowed is not None and not set(value) <= allowed:
        raise CaseFileError(f"{where}: unknown keys {sorted(map(str, set(value) - allowed))}")
    return value


def _string(value: object, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise CaseFileError(f"{where}: expected a non-empty string")
    return value


# --------------------------------------------------------------------------- #
# Writing


class _PlainDumper(yaml.SafeDumper):
    """Never emit anchors or aliases: the dispatcher's strict loader refuses them."""

    def ignore_aliases(self, data: object) -> bool:  # noqa: ARG002 (the override's signature)
        return True


def _dump(document: object) -> str:
    return yaml.dump(document, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True)


def _write(spec: RepositorySpec, directory: Path) -> Path:
    roots_toml = ", ".join(f'"{root}"' for root in spec.roots)
    for root in spec.roots:
        (directory / root).mkdir(parents=True, exist_ok=True)
    module_dirs: dict[str, Path] = {}
    for module_id, document in spec.modules.items():
        module_dir = directory / spec.roots[0] / Path(*module_id.split("."))
        module_dir.mkdir(parents=True, exist_ok=True)
        module_dirs[module_id] = module_dir
        text = document if isinstance(document, str) else _dump(document)
        (module_dir / "blueprint.yaml").write_text(text, encoding="utf-8")
    for source_id, document in spec.sources.items():
        owner, _, name = source_id.rpartition(".source.")
        module_dir = module_dirs[owner]
        relative = _locator_path(spec.modules.get(owner), source_id) or f"blueprints/{name}.yaml"
        target = module_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        text = document if isinstance(document, str) else _dump(document)
        target.write_text(text, encoding="utf-8")
        gateway = _safe_relative(_dig(document, "gateway", "path"))
        if gateway is not None:
            (module_dir / gateway).parent.mkdir(parents=True, exist_ok=True)
            (module_dir / gateway).touch()
    for relative_file, text in spec.files.items():
        path = directory / PurePosixPath(relative_file)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    config = directory / "officina.toml"
    config.write_text(f"schema_version = 1\n\n[modules]\nroots = [{roots_toml}]\n", "utf-8")
    return config


def _locator_path(module: object, source_id: str) -> str | None:
    return _safe_relative(_dig(module, "sources", source_id, "blueprint", "path"))


def _dig(document: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(document, dict):
            return None
        document = document.get(key)
    return document


def _safe_relative(value: object) -> str | None:
    """A path the test may create: relative POSIX, no empty, ``.`` or ``..`` parts."""
    if not isinstance(value, str) or not value or value.startswith("/") or "\\" in value:
        return None
    if any(part in ("", ".", "..") for part in value.split("/")):
        return None
    return value
