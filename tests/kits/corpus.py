"""The famulus corpus as test data: its exports, and a minimal argv each pattern accepts.

Blueprints are read with ``yaml.safe_load`` directly (test code only), so tests
that use this kit do not depend on the loader under test.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest
import yaml

from boring_dispatch.records import ModuleRecord, SourceRecord
from kits.cases import corpus_config


@dataclass(frozen=True, slots=True)
class Export:
    export_id: str
    module: ModuleRecord
    source: SourceRecord
    interface: Mapping[str, object]

    @property
    def binding(self) -> Mapping[str, object]:
        value = self.interface.get("process_binding")
        return value if isinstance(value, Mapping) else {}


_PARSED: dict[Path, dict[str, object]] = {}


def _load(path: Path) -> dict[str, object]:
    if path not in _PARSED:  # several exports share one source blueprint
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert isinstance(data, dict)
        _PARSED[path] = data
    return _PARSED[path]


def corpus_exports() -> dict[str, Export]:
    root = corpus_config("famulus").parent
    out: dict[str, Export] = {}
    for configured in ("skills", "src/officina"):
        for blueprint in sorted((root / configured).rglob("blueprint.yaml")):
            data = _load(blueprint)
            module = ModuleRecord(
                module_id=str(data["id"]),
                root=blueprint.parent,
                configured_root=root / configured,
                version=int(str(data["version"])),
                data=data,
            )
            exports = data["exports"]
            sources = data["sources"]
            assert isinstance(exports, dict)
            assert isinstance(sources, dict)
            for export_id, export in exports.items():
                source_interface = export["source_interface"]
                source_id = source_interface.rpartition(".interface.")[0]
                source_data = _load(blueprint.parent / sources[source_id]["blueprint"]["path"])
                source = SourceRecord(
                    source_id=source_id,
                    module=module,
                    version=int(str(source_data["version"])),
                    gateway_path=source_data["gateway"]["path"],  # type: ignore[index]
                    data=source_data,
                )
                interfaces = source_data["interfaces"]
                assert isinstance(interfaces, dict)
                out[export_id] = Export(export_id, module, source, interfaces[source_interface])
    return out


EXPORTS: Final = corpus_exports()
BINDABLE: Final = {
    export_id: export
    for export_id, export in sorted(EXPORTS.items())
    if export.binding.get("kind") == "process"
}
PATTERN_MODE: Final = {k: v for k, v in BINDABLE.items() if "patterns" in v.binding}


#: Values for regexes the generic candidates below do not satisfy.
VALUE_OVERRIDES: Final = {
    r"^[0-9a-f]{40}$": "0" * 40,
    r"^[0-9a-fA-F]{40,64}$": "a" * 40,
    r"^[0-9a-f]{6}$": "abcdef",
    r"^\[.+\]$": "[1]",
    r"^/.+$": "/x",
}
GENERIC_VALUES: Final = ("x", "1", "2026-01-02", "a-b")

#: Exports whose every pattern requires a secret or credential argument's flag in argv.
#: We refuse secrets in argv (they belong on stdin), so these never compile.
SECRET_IN_ARGV: Final = frozenset(
    {
        "connect-google._rtx.interface.install-client",
        "email-client._rtx.interface.accounts-setup-oauth",
    }
)

#: Patterns no argv can match: they require a flag their own allowed_flags omit.
UNSATISFIABLE: Final = {
    ("list-manager._rtx.interface.cloud-create-entry", "stdin-mode"),
    ("list-manager._rtx.interface.cloud-update", "stdin-mode"),
}


def value_for(regex: str, *, full: bool) -> str:
    """A value the regex accepts: an override, a generic value, or a word it names."""
    words: list[str] = re.findall(r"[a-z][a-z-]*[a-z]", regex)
    candidates = [
        VALUE_OVERRIDES.get(regex, ""),
        *GENERIC_VALUES,
        *words,
        *(w + "/x" for w in words),
    ]
    for candidate in candidates:
        found = re.fullmatch(regex, candidate) if full else re.match(regex, candidate)
        if candidate and found:
            return candidate
    pytest.fail(f"add a VALUE_OVERRIDES entry for {regex!r}")


def minimal_argv(pattern: Mapping[str, object]) -> list[str]:
    """Minimum positionals (matching positional_patterns), then every required flag."""
    flag_patterns = pattern.get("flag_patterns", {})
    positional_patterns = pattern.get("positional_patterns", {})
    assert isinstance(flag_patterns, dict)
    assert isinstance(positional_patterns, dict)
    indexes = {int(key): regex for key, regex in positional_patterns.items()}
    count = max([int(str(pattern.get("min_positionals", 0))), *(i + 1 for i in indexes)])
    argv = [value_for(indexes[i], full=False) if i in indexes else f"p{i}" for i in range(count)]
    required = pattern.get("required_flags", [])
    assert isinstance(required, list)
    for flag in required:
        argv += (
            [flag, value_for(flag_patterns[flag], full=True)] if flag in flag_patterns else [flag]
        )
    return argv
