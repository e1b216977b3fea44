"""The line-delimited JSON protocol between the referee and a bot host (``docs/protocol.md``).

One message is one JSON object on one line, with a ``type``. The referee speaks first only after
the host's ``hello``; ``act`` gets exactly one answer, ``start`` and ``quit`` none. Both sides
use the helpers here, so the wire format is written in one place.
"""

from __future__ import annotations

from typing import Any

import orjson

from arena.errors import ArenaError

#: Bumped whenever a message changes shape; the referee refuses a host that speaks another.
PROTOCOL_VERSION = 1

# Host -> referee.
HELLO = "hello"  # {"protocol", "bot", "plugin", "pid"}: the host is up and its bot is built
ACTION = "action"  # {"action": "Guard->1:Priest"}: answer to "act"
ERROR = "error"  # {"kind": "crash"|"setup", "message"}: the bot failed (any request)
LISTING = "listing"  # {"bots": [...], "error": str|None}: answer of ``--list``

# Referee -> host.
START = "start"  # {"seat", "players", "variant", "seed"}: a new round begins (no answer)
ACT = "act"  # {"view", "legal", "events", "tokens", "round"}: the seat's view; answer "action"
QUIT = "quit"  # the host exits


class ProtocolError(ArenaError):
    """A line that is not a protocol message."""


def encode(message_type: str, /, **fields: Any) -> bytes:
    """One message of type ``message_type`` as a line of bytes."""
    fields["type"] = message_type
    return orjson.dumps(fields, option=orjson.OPT_APPEND_NEWLINE)


def decode(line: bytes) -> dict[str, Any]:
    """The message on ``line``; raises :class:`ProtocolError` if it is not one."""
    try:
        message = orjson.loads(line)
    except ValueError as exc:
        shown = line[:80].decode("utf-8", "replace").rstrip()
        raise ProtocolError(f"not JSON ({exc}): {shown!r}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError(f"not a message (a JSON object with a 'type'): {message!r:.80}")
    return message
