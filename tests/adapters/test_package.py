"""The adapters are imported only when used: a table never loads a framework."""

from __future__ import annotations

import pytest

from kits.plain_env import isolated_json

FRAMEWORKS = ("pydantic_ai", "agents", "langchain_core", "langgraph", "openai")


def _frameworks_after(code: str) -> list[str]:
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    loaded = isolated_json(probe)
    return sorted({m.split(".")[0] for m in loaded} & set(FRAMEWORKS))


@pytest.mark.parametrize(
    "code",
    [
        "import boring_dispatch",
        "import boring_dispatch.adapters",
        (
            "from boring_dispatch import Injected, Registry, Tool, ToolSpec\n"
            "def f(x: int) -> int:\n    return x\n"
            "Registry({'f': Tool(f, description='F.')}).tool_specs()"
        ),
    ],
)
def test_no_framework_is_loaded_until_its_adapter_is(code: str) -> None:
    assert _frameworks_after(code) == []


@pytest.mark.parametrize(
    ("module", "framework"),
    [
        ("pydantic_ai", "pydantic_ai"),
        ("openai_agents", "agents"),
        ("langchain", "langchain_core"),
    ],
)
def test_each_adapter_loads_its_own_framework(module: str, framework: str) -> None:
    assert framework in _frameworks_after(f"import boring_dispatch.adapters.{module}")
