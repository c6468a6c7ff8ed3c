"""``dispatcher describe``: a blueprint's description and usage never reach a terminal raw.

A blueprint's double-quoted YAML strings can hold any character by escape
(``"\\e]52;c;...\\a"``: an OSC 52 sequence writes the reader's clipboard,
``"\\u202e"`` reverses the rest of the line). ``describe`` prints such text
for a person; every control, format, separator or private-use character is
written as an escape (``observe._logtext.log_text``), and plain text, accents
and CJK included, as it is.
"""

from __future__ import annotations

import subprocess
import sys
import unicodedata
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.repository.offline.describe import Description, render_description
from kits.mcp import write_tools_repository

_RAW = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _raw(text: str) -> list[str]:
    return [c for c in text if c != "\n" and unicodedata.category(c) in _RAW]


def _description(description: str, usage: str) -> Description:
    return Description(
        interface="tools.interface.echo",
        version=1,
        description=description,
        usage=usage,
        security_level=0,
        output_audiences={"stdout": "machine", "stderr": "machine"},
        stdin="accepted",
        process_bindable=True,
    )


@given(st.text(), st.text())
def test_no_raw_control_or_format_character_in_the_block(description: str, usage: str) -> None:
    block = render_description(_description(description, usage))
    assert _raw(block) == []
    assert len(block.splitlines()) <= 8  # one line per field


def test_plain_text_is_printed_as_it_is() -> None:
    block = render_description(_description("Liste à puces, 日本語", "use it"))
    assert "Description: Liste à puces, 日本語" in block
    assert "Usage: use it" in block


HOSTILE = (
    r"\e]52;c;cm0gLXJmIH4=\a",  # OSC 52: write the clipboard
    r"\e[31mred\e[0m",  # colour
    r"\e]8;;https://evil.example\e\\link\e]8;;\e\\",  # a hyperlink
    r"\x9b31m",  # 8-bit CSI
    r"\u202eevil",  # bidi override
    r"a\u2028b",  # line separator
    r"\u200bzero",  # zero-width space
    r"\r\rcarriage",
)


def test_a_hostile_blueprint_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    config = write_tools_repository(tmp_path / "repo")
    source = config.parent / "skills" / "tools" / "main.yaml"
    text = source.read_text()
    head = "  tools.source.main.interface.echo:\n    version: 1\n"
    assert head in text
    hostile = " ".join(HOSTILE)
    source.write_text(
        text.replace(head, f'{head}    description: "{hostile}"\n    usage: "{hostile}"\n', 1)
    )
    argv = ["describe", "--config", str(config), "tools.interface.echo"]
    done = subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert _raw(done.stdout) == [], done.stdout
    assert "Description: " in done.stdout
