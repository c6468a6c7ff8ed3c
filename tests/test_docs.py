"""The documentation's Python blocks run, and the README's commented outcomes hold.

Every ```python block in README.md and docs/*.md runs as a script in a fresh
interpreter from the project root, and must exit 0. A block preceded by an
``<!-- fragment: why -->`` line is an excerpt: it is only compiled (inside a
method body, where it reads as one). A ``X.dispatch(...)  # code`` line with a
trailing comment naming an observation code is checked to give that code.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^(?P<indent> *)```python\s*$")
_FRAGMENT = re.compile(r"^\s*<!-- fragment: .+ -->\s*$")
_CLAIM = re.compile(r"^(?P<call>\w+\.dispatch\(.*\))\s+# (?P<code>[a-z_]+)\b")
_CODES = {
    "unknown_tool",
    "invalid_arguments",
    "invalid_request",
    "denied",
    "tool_error",
    "internal_error",
    "no_fixture",
}


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    code: str
    fragment: bool

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    found: list[Block] = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").split("\n")
        index = 0
        while index < len(lines):
            fence = _FENCE.match(lines[index])
            if fence is None:
                index += 1
                continue
            previous = next((ln for ln in reversed(lines[:index]) if ln.strip()), "")
            body: list[str] = []
            end = index + 1
            while not lines[end].strip().startswith("```"):
                body.append(lines[end])
                end += 1
            code = textwrap.dedent("\n".join(body))
            found.append(Block(path, index + 1, code, bool(_FRAGMENT.match(previous))))
            index = end + 1
    return found


BLOCKS = blocks()


def test_the_documentation_has_python_blocks_to_check() -> None:
    assert len([b for b in BLOCKS if not b.fragment]) >= 4


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.fragment], ids=lambda b: b.name)
def test_a_fragment_compiles_as_a_method_body(block: Block) -> None:
    wrapped = "class _Gateway:\n    def run(self, args):\n" + textwrap.indent(block.code, " " * 8)
    compile(wrapped, block.name, "exec")


@pytest.mark.parametrize("block", [b for b in BLOCKS if not b.fragment], ids=lambda b: b.name)
def test_a_block_runs_and_its_commented_outcomes_hold(block: Block) -> None:
    checks = []
    for line in block.code.split("\n"):
        claim = _CLAIM.match(line)
        if claim and claim["code"] in _CODES:
            checks.append(f"assert ({claim['call']}).error.code == {claim['code']!r}, {line!r}")
    script = block.code + "\n" + "\n".join(checks) + "\n"
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"{block.name}\n{done.stderr}"


def test_the_readme_block_checks_its_claims() -> None:
    readme = next(b for b in BLOCKS if b.path.name == "README.md" and not b.fragment)
    claims = [ln for ln in readme.code.split("\n") if _CLAIM.match(ln)]
    assert len(claims) >= 2
