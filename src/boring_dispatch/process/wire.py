"""The nested-call wire between a gateway and its parent's broker.

Each message is a 4-byte big-endian length and that many bytes of UTF-8 JSON.
Both sides use these functions: the gateway API in the child
(:mod:`boring_dispatch.process.child.interface`) and the broker in the parent
(:mod:`boring_dispatch.process._broker`).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from typing import Final

__all__ = ["MessageTooLarge", "read_message", "write_message"]

_HEADER_BYTES: Final = 4  # big-endian length


class MessageTooLarge(Exception):
    """The announced length is over the cap: the stream is unusable after it."""


def write_message(sock: socket.socket, payload: Mapping[str, object]) -> None:
    """Send one length-prefixed JSON message."""
    data = json.dumps(payload, ensure_ascii=False, allow_nan=False).encode("utf-8")
    sock.sendall(len(data).to_bytes(_HEADER_BYTES, "big") + data)


def read_message(sock: socket.socket, cap: int) -> bytes | None:
    """Receive one message body; ``None`` on a clean EOF before a header.

    Raises:
        MessageTooLarge: the announced length exceeds ``cap``.
        OSError: the socket failed, or EOF came inside a message.
    """
    header = _read_exact(sock, _HEADER_BYTES, eof_ok=True)
    if header is None:
        return None
    size = int.from_bytes(header, "big")
    if size > cap:
        raise MessageTooLarge
    return _read_exact(sock, size, eof_ok=False) or b""


def _read_exact(sock: socket.socket, size: int, *, eof_ok: bool) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 16))
        if not chunk:
            if eof_ok and not chunks:
                return None
            raise ConnectionError("end of stream inside a message")
        chunks += chunk
    return bytes(chunks)
