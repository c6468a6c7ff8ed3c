"""Bind: compile a source interface's process binding against the caller's argv.

:func:`compile_binding` implements BLUEPRINTS-V6 sections 6.1-6.4 and
:func:`python_target` section 6.5. Both are pure functions over the parsed
blueprint; every refusal is :class:`~boring_dispatch.errors.ResolutionFailed`,
never a traceback, and its ``reason`` (:data:`~boring_dispatch.repository._shapes.RefusalReason`)
names the check that refused.

Before anything else the caller's argv is checked as data: a list of strings,
at most :data:`MAX_ARGV_TOKENS` tokens, each valid UTF-8 (no lone
surrogates), without NUL, at most :data:`MAX_TOKEN_BYTES` bytes, and
:data:`MAX_ARGV_BYTES` bytes in all. The compiled command is checked the same
way, so blueprint-supplied prefixes and defaults obey the same caps.

No argv token has a special meaning (ARCHITECTURE 3.4): upstream's
``--route-smoke`` shortcut does not exist here.
"""

from __future__ import annotations

import keyword
from collections.abc import Mapping, Sequence

from boring_dispatch._limits import MAX_ARGV_BYTES, MAX_ARGV_TOKENS, MAX_TOKEN_BYTES, argv_problem
from boring_dispatch.errors import ResolutionFailed
from boring_dispatch.records import CompiledBinding, ModuleRecord, PythonTarget, SourceRecord
from boring_dispatch.repository import ids
from boring_dispatch.repository._shapes import BindingRefused, one_of, string_list
from boring_dispatch.repository.bind._argtypes import SECRET_SENSITIVITIES, is_secret
from boring_dispatch.repository.bind._patterns import match_patterns, patterns_take_stdin

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

    from boring_dispatch.repository._reasons import RefusalReason

__all__ = [
    "MAX_ARGV_BYTES",
    "MAX_ARGV_TOKENS",
    "MAX_TOKEN_BYTES",
    "compile_binding",
    "python_target",
    "secret_arguments",
    "stdin_rule",
]


_BINDING_KEYS: Final = frozenset(
    {
        "kind",
        "entry",
        "args_prefix",
        "patterns",
        "arguments",
        "fixed",
        "outputs",
        "outcomes",
        "cancellation",
        "stop",
    }
)


def compile_binding(
    interface: Mapping[str, object],
    *,
    interface_id: str,
    argv: Sequence[str],
    stdin: bool,
) -> CompiledBinding:
    """Compile the process binding of one source interface.

    Pattern mode (``patterns`` present) passes the caller's argv through
    unchanged after exactly one pattern accepted it; argument mode builds a
    typed, deterministically ordered argv. Either way the command starts with
    ``args_prefix``.

    Args:
        interface: the source interface mapping (with ``process_binding``).
        interface_id: the requested export ID, used in messages only.
        argv: the caller's gateway arguments.
        stdin: whether the caller asks to send stdin.

    Returns:
        The command (``args_prefix`` + compiled arguments), the matched pattern
        name (``""`` in argument mode), the stdin decision and the entry.

    Raises:
        ResolutionFailed: ``cannot compile <id>: <reason>``. Refused: an argv
            that is not a list of strings or breaks the token caps, NUL bytes,
            lone surrogates, a ``stdin`` that is not a bool, an interface that
            is not process-bindable, unknown binding keys, any malformed
            pattern, layout or type (including invalid or unsafe regexes), no
            or several matching patterns, a value of the wrong type, a
            secret argument not bound as stdin.
    """
    try:
        return _compile(interface, argv, stdin)
    except BindingRefused as refusal:
        message = f"cannot compile {_id_text(interface_id)}: {refusal}"
        raise _failure(message, interface_id, refusal.reason) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError):
        # A safety net only: the property tests drive _compile directly to keep it unused.
        message = f"cannot compile {_id_text(interface_id)}: malformed process binding"
        raise _failure(message, interface_id, "safety_net") from None


def _compile(interface: object, argv: object, stdin: object) -> CompiledBinding:
    caller_argv = _checked_argv(argv, "argv", "argv_malformed")
    if not isinstance(stdin, bool):
        raise BindingRefused("stdin must be a boolean", reason="argv_malformed")
    if not isinstance(interface, Mapping):
        raise BindingRefused("interface must be a mapping", reason="binding_malformed")
    binding, entry, prefix = _checked_header(interface)
    if "patterns" in binding:
        _refuse_secret_flags(interface, caller_argv)  # first: its message is the useful one
        pattern = match_patterns(binding, caller_argv, stdin)
        tokens, decision = list(caller_argv), stdin
    else:
        pattern = ""
        # Imported here: argument mode (typed bindings) is rare; pattern mode never needs it.
        from boring_dispatch.repository.bind._arguments import compile_arguments

        tokens, decision = compile_arguments(binding, interface, caller_argv, stdin)
    command = _checked_argv([*prefix, *tokens], "compiled command", "command_malformed")
    return CompiledBinding(command=command, pattern=pattern, takes_stdin=decision, entry=entry)


def _checked_header(
    interface: Mapping[str, object],
) -> tuple[Mapping[str, object], str, tuple[str, ...]]:
    """The process binding, its entry and its ``args_prefix``, checked before either mode.

    Raises:
        BindingRefused: not process-bindable, an unknown key, no entry, a
            malformed ``args_prefix``.
    """
    binding = interface.get("process_binding")
    if not isinstance(binding, Mapping) or binding.get("kind") != "process":
        raise BindingRefused("interface is not process-bindable", reason="not_bindable")
    if any(key not in _BINDING_KEYS for key in binding):
        raise BindingRefused("process binding has an unknown key", reason="binding_malformed")
    entry = binding.get("entry")
    if not isinstance(entry, str) or not entry:
        raise BindingRefused("entry must be a non-empty string", reason="binding_malformed")
    return binding, entry, string_list(binding.get("args_prefix", []), "args_prefix")


def _refuse_secret_flags(interface: Mapping[str, object], argv: tuple[str, ...]) -> None:
    """Pattern mode: a secret or credential argument may not appear as ``--<id>`` in argv.

    Argv is visible in ``/proc/<pid>/cmdline``, so secrets only ever travel on stdin.
    Pattern-mode contracts name arguments by ID; the flag spelling ``--<id>`` is the
    convention every corpus interface follows. Any abbreviation of it (``--i``,
    ``--toke`` for ``--token``, with or without ``=value``) is refused too: an
    argparse-style parser expands an unambiguous prefix to the full flag. A secret
    passed positionally cannot be recognised here: declare such interfaces in
    argument mode with a stdin binding.
    """
    secrets = [f"--{arg_id}" for arg_id in secret_arguments(interface)]
    if not secrets:
        return
    for token in argv:
        if token == "--":  # noqa: S105 - the end-of-options marker, not a password
            return
        name = token.partition("=")[0]
        if len(name) > 2 and name.startswith("--"):
            flag = next((secret for secret in secrets if secret.startswith(name)), None)
            if flag is not None:
                message = f"secret argument {flag} must travel on stdin, not argv"
                raise BindingRefused(message, reason="secret_in_argv")


def _checked_argv(argv: object, what: str, reason: RefusalReason) -> tuple[str, ...]:
    if not isinstance(argv, list | tuple):
        raise BindingRefused(f"{what} must be a list of strings", reason=reason)
    problem = argv_problem(argv, what)
    if problem is not None:
        raise BindingRefused(problem, reason=reason)
    return tuple(argv)


def secret_arguments(interface: Mapping[str, object]) -> tuple[str, ...]:
    """IDs of ``contract.arguments`` that are ``secret`` or ``credential``, sorted.

    An argument counts when its own ``sensitivity`` or any nested type
    sensitivity (``type``, ``element_type``, ``content_type``, ``entry_type``)
    is secret. Used for redaction, so it never raises: malformed parts are
    skipped. In argument mode :func:`compile_binding` guarantees these
    arguments are bound as stdin; in pattern mode it refuses their ``--<id>``
    flags in argv.
    """
    contract = interface.get("contract") if isinstance(interface, Mapping) else None
    arguments = contract.get("arguments") if isinstance(contract, Mapping) else None
    if not isinstance(arguments, Mapping):
        return ()
    found = [
        arg_id
        for arg_id, body in arguments.items()
        if isinstance(arg_id, str)
        and isinstance(body, Mapping)
        and (one_of(body.get("sensitivity"), SECRET_SENSITIVITIES) or is_secret(body.get("type")))
    ]
    return tuple(sorted(found))


def stdin_rule(interface: Mapping[str, object]) -> str:
    """What binding does with stdin for ``interface``: ``"required"``, ``"accepted"`` or
    ``"refused"`` (``dispatcher describe``).

    The same reading as :func:`compile_binding`: pattern mode when the binding
    has ``patterns`` (stdin when some pattern allows it), else argument mode
    (stdin when an argument is bound to it, required when the contract
    requires that argument). A binding the stage would refuse as malformed
    (not process-bindable, an unknown key, no entry, a bad ``args_prefix``,
    malformed patterns or layout) takes no stdin.
    """
    try:
        binding, _, prefix = _checked_header(interface)
        # Every command starts with the prefix: one the stage refuses refuses every call.
        _checked_argv(prefix, "compiled command", "command_malformed")
        if "patterns" in binding:
            return "accepted" if patterns_take_stdin(binding) else "refused"
        from boring_dispatch.repository.bind._layout import check_layout

        callers = check_layout(binding, interface).callers.values()
    except BindingRefused:
        return "refused"
    stdin = [caller for caller in callers if caller.kind == "stdin"]
    if not stdin:
        return "refused"
    return "required" if stdin[0].required else "accepted"


def python_target(module: ModuleRecord, source: SourceRecord, entry: str) -> PythonTarget:
    """How the runner finds the gateway class (BLUEPRINTS-V6 6.5).

    ``logical_package`` is :func:`ids.logical_package` of the terminal module;
    ``logical_entrypoint`` adds the gateway's dotted path without ``.py``
    (``__init__.py`` maps to its package: ``__init__.py`` -> ``<pkg>``,
    ``a/__init__.py`` -> ``<pkg>.a``, ``a/b.py`` -> ``<pkg>.a.b``).

    Raises:
        ResolutionFailed: ``cannot build Python target for <source-id>: ...``.
            Refused: an entry that is not an ASCII Python identifier (dots,
            whitespace, keywords, dunder names); a gateway path that is not a
            relative POSIX path (absolute, backslashes, NUL, empty, ``.`` or
            ``..`` parts), does not end in ``.py``, or has a part that is not
            an ASCII identifier; a source that belongs to another module.
    """
    try:
        return _python_target(module, source, entry)
    except BindingRefused as refusal:
        message = f"cannot build Python target for {_id_text(source.source_id)}: {refusal}"
        raise ResolutionFailed(
            message, target_module_id=module.module_id, reason=refusal.reason
        ) from None


def _python_target(module: ModuleRecord, source: SourceRecord, entry: object) -> PythonTarget:
    if source.module.module_id != module.module_id:
        raise BindingRefused("the source belongs to another module", reason="target_malformed")
    if not isinstance(entry, str) or not _is_identifier(entry) or entry.startswith("__"):
        raise BindingRefused("entry must be a plain Python identifier", reason="target_malformed")
    path = source.gateway_path
    if not isinstance(path, str) or not path.endswith(".py") or "\\" in path or "\x00" in path:
        raise BindingRefused(
            "gateway path must be a relative POSIX path ending in .py", reason="target_malformed"
        )
    parts = path[: -len(".py")].split("/")
    if path.startswith("/") or not all(_is_identifier(part) for part in parts):
        raise BindingRefused(
            "gateway path parts must be Python identifiers", reason="target_malformed"
        )
    if parts[-1] == "__init__":
        parts.pop()
    package = ids.logical_package(module.module_id)
    return PythonTarget(
        gateway_path=path,
        process_entry=entry,
        logical_package=package,
        logical_entrypoint=".".join([package, *parts]),
    )


def _is_identifier(text: str) -> bool:
    """ASCII identifier, not a keyword: no look-alike letters, no dots, no whitespace."""
    # An ASCII text is an identifier exactly when it is ``[A-Za-z_][A-Za-z0-9_]*``.
    return text.isascii() and text.isidentifier() and not keyword.iskeyword(text)


def _failure(message: str, interface_id: object, reason: RefusalReason) -> ResolutionFailed:
    target_module = ""
    if isinstance(interface_id, str) and ids.INTERFACE_MARK in interface_id:
        target_module = interface_id.rpartition(ids.INTERFACE_MARK)[0]
    return ResolutionFailed(message, target_module_id=target_module, reason=reason)


def _id_text(text: object) -> str:
    """A canonical ID as messages name it (validated upstream, so nothing to escape; bounded).

    Not a quoting rule for untrusted values: those go through
    :func:`boring_dispatch._quote.shown`.
    """
    return text[:200] if isinstance(text, str) else "(an invalid id)"
