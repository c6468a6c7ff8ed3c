"""Every process-bindable export of the famulus corpus dry-runs through the whole pipeline.

For each export the caller is its owning top-level skill when that skill is a
discoverable host; otherwise the first module its policies name that a request
can come from (a host skill, or a nested caller such as ``recurring-tasks._rtx``
for library modules that only code children may call). The compiled answers must
be the documented ones: command = args_prefix + argv (pattern mode), cwd = the
terminal module root, the implementing source and the entry of the blueprint.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from boring_dispatch.errors import ResolutionFailed, UnauthorizedCaller
from boring_dispatch.records import Route, RouteRequest
from boring_dispatch.repository.repository import Repository
from kits.cases import corpus_config
from kits.corpus import BINDABLE, SECRET_IN_ARGV, UNSATISFIABLE, Export, minimal_argv

CONFIG = corpus_config("famulus")
#: Argument-mode exports take typed arguments rather than a pattern (BLUEPRINTS-V6 6.3).
ARGUMENT_MODE_ARGV = {
    "wakeup.interface.auto-policy": ("on",),
    "wakeup.interface.infer-schedule": (),
    "wakeup.interface.explicit-schedule": ("claude", "s", "5h"),
}


def _argv(export_id: str, export: Export) -> tuple[str, ...]:
    if export_id in ARGUMENT_MODE_ARGV:
        return ARGUMENT_MODE_ARGV[export_id]
    patterns = export.binding["patterns"]
    assert isinstance(patterns, list)
    for index, pattern in enumerate(patterns):
        name = pattern.get("name", f"pattern_{index}")
        if (export_id, name) not in UNSATISFIABLE:
            return tuple(minimal_argv(pattern))
    raise AssertionError(f"{export_id} has no satisfiable pattern")


def _callers(export_id: str, export: Export) -> Iterator[tuple[str, bool]]:
    """Candidate (caller, host) pairs, the owning skill first."""
    owner = export.module.module_id.split(".")[0]
    yield owner, True
    access = export.module.data["exports"][export_id]["access"]  # type: ignore[index]
    for caller in access.get("allowed_callers", []):
        if not caller.startswith("."):
            yield caller, "." not in caller
            yield caller, False
    yield "llm-wakeup", True  # any discoverable skill, for public library exports


def _resolve(export_id: str, export: Export) -> Route:
    repository = Repository.open(CONFIG)
    argv = _argv(export_id, export)
    refusals = []
    for caller, host in _callers(export_id, export):
        request = RouteRequest(caller=caller, target=export_id, argv=argv, from_host=host)
        try:
            return repository.resolve(request)
        except UnauthorizedCaller as error:
            refusals.append(error.code)
        except Exception as error:  # a host-caller refusal: try the next candidate
            if getattr(error, "code", "") != "dispatcher.host_caller_invalid":
                raise
    raise AssertionError(f"no candidate caller admitted {export_id}: {refusals}")


def test_an_export_that_needs_a_secret_in_argv_is_refused() -> None:
    for export_id in sorted(SECRET_IN_ARGV):
        with pytest.raises(ResolutionFailed) as caught:
            _resolve(export_id, BINDABLE[export_id])
        assert "must travel on stdin" in caught.value.message
        assert caught.value.reason == "secret_in_argv"


@pytest.mark.parametrize("export_id", sorted(set(BINDABLE) - SECRET_IN_ARGV))
def test_every_process_bindable_export_dry_runs_for_its_owner(export_id: str) -> None:
    export = BINDABLE[export_id]
    route = _resolve(export_id, export)
    binding = export.binding
    argv = _argv(export_id, export)
    if export_id not in ARGUMENT_MODE_ARGV:
        prefix = binding.get("args_prefix", [])
        assert isinstance(prefix, list)
        assert route.binding.command == (*prefix, *argv)
    assert route.binding.entry == binding["entry"]
    assert route.cwd == export.module.root
    assert route.target_module_id == export.module.module_id
    assert route.implementing_source_id == export.source.source_id
    assert route.python_target.gateway_path == export.source.gateway_path
    assert route.binding.takes_stdin is False
    assert route.security_level in (0, 1, 2)
