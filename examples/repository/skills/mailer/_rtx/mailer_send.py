"""Gateway of ``mailer._rtx``: a pretend sender and the account check of the setup step."""

from __future__ import annotations

from boring_dispatch.gateway import ArgvInterface


class Send(ArgvInterface):
    """Print the message that would be sent."""

    def run(self, argv: list[str]) -> int:
        print("sent: " + " ".join(argv))
        return 0


class CheckAccount(ArgvInterface):
    """The account check the Markdown setup step asks for."""

    def run(self, argv: list[str]) -> int:  # noqa: ARG002 - takes no arguments
        print("account: ok")
        return 0
