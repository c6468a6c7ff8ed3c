"""Frozen value objects passed between the stages of the repository pipeline.

Each stage receives these and returns new ones; none is mutated. They are
:func:`~boring_dispatch._value.value` classes (frozen and slotted like
``@dataclass(frozen=True, slots=True)``, but created without compiling code at
import, which the CLI's start-up pays for). The Python table has its own small
types in :mod:`boring_dispatch.registry`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from boring_dispatch._value import value

__all__ = [
    "AUDIENCES",
    "AdmittedPolicy",
    "CompiledBinding",
    "ExecLimits",
    "ExecutionResult",
    "ModuleRecord",
    "PythonTarget",
    "RepositoryConfig",
    "Route",
    "RouteRequest",
    "RouteWarning",
    "SourceRecord",
]

#: The valid output audiences, in the order the seed lists them.
AUDIENCES = ("machine", "human", "both")


@value
class RepositoryConfig:
    """A validated ``officina.toml`` (BLUEPRINTS-V6 section 1)."""

    #: Absolute, lexical (never resolved) path of the configuration file.
    config_path: Path
    #: The configuration file's directory.
    repository_root: Path
    #: Absolute lexical paths of ``modules.roots``, in configured order.
    module_roots: tuple[Path, ...]
    feedback_email: str | None = None
    feedback_github_repo: str | None = None


@value
class ModuleRecord:
    """One loaded and checked module blueprint (BLUEPRINTS-V6 section 2.5)."""

    module_id: str
    #: Directory holding ``blueprint.yaml``: the module root and the child's cwd.
    root: Path
    #: The configured root this module's top-level segment was found in.
    configured_root: Path
    version: int
    #: The whole parsed blueprint (a strict-YAML mapping of plain data).
    data: Mapping[str, object]


@value
class SourceRecord:
    """One loaded and checked behavioral-source blueprint (section 4)."""

    source_id: str
    #: The module that owns the source (the terminal module of the route).
    module: ModuleRecord
    version: int
    #: ``gateway.path`` as authored (POSIX, relative to the module root).
    gateway_path: str
    data: Mapping[str, object]


@value
class RouteRequest:
    """One request to a repository, from any client (CLI, MCP, replay, a gateway)."""

    #: Canonical module ID of the caller.
    caller: str
    #: Export ID ``<module>.interface.<name>``, without a ``@N`` pin.
    target: str
    #: Pinned interface version, or ``None`` for "whatever the source declares".
    version: int | None = None
    #: The gateway argument vector supplied by the caller.
    argv: tuple[str, ...] = ()
    #: Whether the caller asks to send stdin to the gateway.
    sends_stdin: bool = False
    #: The call comes from a host (CLI, MCP, replay): the caller must be a discoverable
    #: top-level skill. Nested calls from a gateway set False.
    from_host: bool = True
    #: When set (MCP tools), the derived security level must equal this tier.
    tier: int | None = None
    #: When set (nested calls), the derived level may not exceed it: the level of
    #: the route that makes the call, so a level-0 gateway cannot reach level 2.
    max_level: int | None = None
    #: The setup flow a call belongs to (MCP ``setup_flow_id``, or a nested call of a
    #: gateway running inside a flow): the gate takes the exact-flow path.
    setup_flow_id: str | None = None


@value
class CompiledBinding:
    """The process binding of one interface, compiled against the caller's argv."""

    #: The gateway argv: ``args_prefix`` plus the compiled arguments.
    command: tuple[str, ...]
    #: Matched pattern name; ``""`` in argument mode.
    pattern: str
    #: The stdin decision (section 6.4): requested and accepted by the binding.
    takes_stdin: bool
    #: ``process_binding.entry``: the class the runner instantiates.
    entry: str


@value
class PythonTarget:
    """How the runner finds the gateway (section 6.5)."""

    gateway_path: str
    process_entry: str
    logical_package: str
    logical_entrypoint: str


@value
class RouteWarning:
    """An advisory diagnostic (certification); never grants or denies."""

    code: str
    message: str
    subject: str | None = None

    def to_dict(self) -> dict[str, str]:
        out = {"code": self.code, "message": self.message}
        if self.subject is not None:
            out["subject"] = self.subject
        return out


@value
class AdmittedPolicy:
    """One access policy that admitted a call: the explanation a dry run shows."""

    #: ``namespace-route``, ``namespace-interface`` or ``terminal-export``.
    kind: str
    owner_module_id: str
    #: The immediate caller this policy judged.
    caller_module_id: str
    #: ``self`` (the owner calls itself), ``all_modules`` or ``allowed_callers``.
    admitted_by: str

    def to_dict(self) -> dict[str, str]:
        """The dry-run form."""
        return {
            "kind": self.kind,
            "owner": self.owner_module_id,
            "caller": self.caller_module_id,
            "admitted_by": self.admitted_by,
        }


@value
class Route:
    """A resolved, authorized and compiled request: everything needed to launch."""

    caller_module_id: str
    #: The export ID (without pin).
    target: str
    target_module_id: str
    interface_version: int
    implementing_source_id: str
    #: The source-interface ID (``<source>.interface.<name>``).
    source_interface_id: str
    binding: CompiledBinding
    python_target: PythonTarget
    #: Terminal module root: the child's working directory.
    cwd: Path
    repository_root: Path
    config_path: Path
    #: The derived security level, or ``None`` when it is unavailable.
    security_level: int | None
    #: ``{"stdout": audience, "stderr": audience}``.
    output_audiences: Mapping[str, str]
    warnings: tuple[RouteWarning, ...] = ()
    #: The configured module roots (``RepositoryConfig.module_roots``): the runner
    #: removes ``sys.path`` entries that equal, contain or lie inside any of them.
    module_roots: tuple[Path, ...] = ()
    #: Owners of the namespace gates the call crossed, outermost first.
    crossed_gates: tuple[str, ...] = ()
    #: Every policy that admitted the call, and why, in evaluation order.
    policies: tuple[AdmittedPolicy, ...] = ()
    #: The caller the terminal export admitted (the last crossed gate's owner, or the caller).
    immediate_caller: str = ""
    #: The setup flow the call belongs to (its nested calls take the exact-flow path too).
    setup_flow_id: str | None = None


@value
class ExecLimits:
    """Limits of one captured gateway run (the CLI streams and applies the timeout only)."""

    #: Wall-clock seconds before the whole process group is killed.
    timeout_s: float = 60.0
    #: Bytes kept per stream; the child is killed when a stream exceeds it.
    max_output_bytes: int = 1_048_576
    #: Bytes accepted on stdin.
    max_stdin_bytes: int = 4_194_304
    #: Child rlimits, set by the runner before any gateway code runs (``None``: unchanged).
    #: ``RLIMIT_CORE`` is always 0. CPU seconds, open files, bytes per written file,
    #: address space.
    max_cpu_seconds: int | None = None
    max_open_files: int | None = 256
    max_file_bytes: int | None = 1 << 30
    max_memory_bytes: int | None = None
    #: Deepest chain of nested calls (``dispatch``) below the top-level gateway: the
    #: dispatcher refuses a deeper one with ``dispatcher.nested_limit_exceeded`` (0: none).
    max_nested_depth: int = 8
    #: Gateway processes one top-level call may start in all, itself and every nested
    #: call included; the dispatcher refuses the next one the same way.
    max_gateway_processes: int = 64
    #: Run every gateway of the call as this uid and gid (both or neither; the
    #: dispatcher needs the privilege to switch, so in practice it runs as root).
    run_as_uid: int | None = None
    run_as_gid: int | None = None
    #: Start a captured top-level gateway from the clean fork server (Linux), as
    #: ``dispatcher mcp`` does; ``run_as``, nested and streamed launches always spawn.
    fork_server: bool = False


@value
class ExecutionResult:
    """What a captured gateway run produced."""

    #: The child's exit status; negative for a signal; ``None`` if it never started.
    exit_code: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """Exit status 0, nothing truncated, no timeout."""
        return (
            self.exit_code == 0
            and not self.timed_out
            and not (self.stdout_truncated or self.stderr_truncated)
        )

    def to_dict(self) -> dict[str, object]:
        """The outcome as replay prints it and the nested-call broker replies (no timing)."""
        return {
            "exit_code": self.exit_code,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "stdout_truncated": self.stdout_truncated,
            "stderr_truncated": self.stderr_truncated,
            "timed_out": self.timed_out,
        }
