"""What a setup refusal carries beside a ``RouteError``: a mixin of :mod:`boring_dispatch.errors`.

Kept apart so that the exception tree stays one readable page; only
``errors.SetupRefusal`` uses it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import ClassVar, Self


__all__ = ["SetupFacts"]


class SetupFacts:
    """The setup facts of a refusal and how they are shown.

    ``call_path`` holds interface IDs outer to inner (each process boundary
    prepends its own: :meth:`within`); ``setup``, ``version`` and ``reason``
    (``absent``, ``changed``, ``failed``, ``invalidated``) name the setup at
    issue; ``flow_id`` is the active flow of ``setup_busy``, the only thing it
    shows; ``interface_version`` is the refused interface's resolved version.
    """

    code: ClassVar[str]
    #: True for ``setup_busy``: only the flow ID is shown.
    busy: ClassVar[bool] = False
    call_path: tuple[str, ...] = ()
    setup: str = ""
    version: int = 0
    reason: str = ""
    flow_id: str = ""
    interface_version: int = 0

    def with_facts(  # noqa: PLR0913 - one value per fact
        self,
        *,
        call_path: tuple[str, ...] = (),
        setup: str = "",
        version: int = 0,
        reason: str = "",
        flow_id: str = "",
        interface_version: int = 0,
    ) -> Self:
        """Set the facts (once, where the refusal is raised); returns the refusal."""
        self.call_path = call_path
        self.setup = setup
        self.version = version
        self.reason = reason
        self.flow_id = flow_id
        self.interface_version = interface_version
        return self

    def within(self, outer_interface: str) -> None:
        """Prepend the interface of the process this refusal crosses."""
        self.call_path = (outer_interface, *self.call_path)

    def status(self) -> dict[str, object]:
        """The ``dispatcher.setup`` object, without a manager continuation."""
        if self.busy:
            return {"status": "setup_busy", "flow_id": self.flow_id}
        payload: dict[str, object] = {"status": self.code.removeprefix("dispatcher.")}
        payload["setup"] = self.setup
        if self.code == "dispatcher.setup_required":
            payload.update(version=self.version, reason=self.reason)
        payload["call_path"] = list(self.call_path)
        return payload
