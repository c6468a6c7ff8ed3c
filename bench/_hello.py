"""A one-module blueprint repository whose only export prints ``hello`` (for the live benches).

The module ``hello`` is a discoverable top-level skill, so it can call its own
export ``hello.interface.say`` from the CLI and over MCP. The interface reads
nothing and writes only stdout, so its derived security level is 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

CALLER: Final = "hello"
TARGET: Final = "hello.interface.say"

_FILES: Final = {
    "officina.toml": 'schema_version = 1\n\n[modules]\nroots = ["skills"]\n',
    "skills/hello/blueprint.yaml": """\
schema_version: 6
node_type: module
id: hello
version: 1
maturity: experimental
description: Says hello.
gateway:
  path: hello.py
  language: Python>=3.11
content:
- hello\\.py
discovery:
  mechanism: skill
sources:
  hello.source.greet:
    blueprint:
      base: module-root
      path: blueprints/greet.yaml
children: {}
namespace_exports: {}
exports:
  hello.interface.say:
    source_interface: hello.source.greet.interface.say
    access:
      allow_all_modules: false
      allowed_callers: []
""",
    "skills/hello/blueprints/greet.yaml": """\
schema_version: 6
node_type: behavioral_source
id: hello.source.greet
version: 1
maturity: experimental
description: Prints hello.
gateway:
  path: hello.py
  language: Python>=3.11
content:
- hello\\.py
interfaces:
  hello.source.greet.interface.say:
    version: 1
    description: Print hello.
    usage: ""
    contract:
      direct_io:
        network: []
        reads: []
        writes:
        - id: greeting
          medium: stdout
      execution:
        state_effect: read-only
    process_binding:
      kind: process
      entry: Say
""",
    "skills/hello/hello.py": """\
from boring_dispatch.gateway import ArgvInterface


class Say(ArgvInterface):
    def run(self, argv: list[str]) -> int:
        print("hello")
        return 0
""",
}


def write_hello_repository(base: Path) -> Path:
    """Write the repository under ``base`` and return its ``officina.toml`` path."""
    for relative, text in _FILES.items():
        path = base / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return base / "officina.toml"
