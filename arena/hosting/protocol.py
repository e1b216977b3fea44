"""The line-delimited JSON protocol between the referee and a bot host (``docs/protocol.md``).

One message is one JSON object on one line, with a ``type``. The referee speaks first only after
the host's ``hello``; ``act`` gets exactly one answer, ``start`` and ``quit`` none. Both sides
use the helpers here, so the wire format is written in one place.
"""

from __future__ import annotations

import reprlib
from typing import Any

import orjson

from arena.errors import ArenaError

#: Bumped whenever a message changes shape; the referee refuses a host that speaks another.
PROTOCOL_VERSION = 2

#: Longest line (without its newline), in bytes, that a side reads; a longer one breaks the
#: protocol.
MAX_LINE_BYTES = 1 << 20

# Host -> referee.
HELLO = "hello"  # {"protocol", "bot", "plugin", "pid"}: the host is up and its bot is built
READY = "ready"  # {"nonce", "pid"}: answer to "fresh": a fresh process serves the bot
ACTION = "action"  # {"action": "Guard->1:Priest", "nonce"}: answer to "act"
ERROR = "error"  # {"kind": "crash"|"setup"|"protocol", "message", "nonce"}: the bot failed
LISTING = "listing"  # {"bots": [...], "error": str|None}: answer of ``--list``

# Referee -> host.
FRESH = "fresh"  # {"nonce"}: serve from a fresh process, forked from the one that said hello
START = "start"  # {"seat", "players", "variant", "seed"}: a new round begins (no answer)
ACT = "act"  # {"view", "legal", "events", "tokens", "round", "nonce"}: answer "action"
QUIT = "quit"  # the host exits


class ProtocolError(ArenaError):
    """A line that is not a protocol message."""


def encode(message_type: str, /, **fields: Any) -> bytes:
    """One message of type ``message_type`` as a line of bytes."""
    fields["type"] = message_type
    return orjson.dumps(fields, option=orjson.OPT_APPEND_NEWLINE)


#: The fields the referee reads of each host message, with their types; a message of one of
#: these types without them, or with a value of another type, breaks the protocol.
FIELDS: dict[str, dict[str, type]] = {
    HELLO: {"protocol": int},
    READY: {"nonce": int, "pid": int},
    ACTION: {"action": str, "nonce": int},
    ERROR: {"kind": str, "message": str},
}

_shown = reprlib.Repr()
_shown.maxlevel = 3
_shown.maxstring = 80
_shown.maxother = 80
_shown.maxlong = 40


def describe(value: Any) -> str:
    """A short rendering of a decoded JSON value for an error message, whatever its size or
    depth (it never recurses past a few levels)."""
    return _shown.repr(value)


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def decode(line: bytes, limit: int = MAX_LINE_BYTES) -> dict[str, Any]:
    """The message on ``line``; raises :class:`ProtocolError` if it is not one.

    A message is a JSON object with a string ``type``, no longer than ``limit`` bytes
    (:data:`MAX_LINE_BYTES`; a plugin's listing has a limit of its own,
    :class:`arena.hosting.catalog.ListingLimits`); a message of a type in :data:`FIELDS` must
    carry those fields with those types.
    """
    if len(line) > limit:
        raise ProtocolError(f"a line of {len(line)} bytes (at most {limit})")
    try:
        message = orjson.loads(line)
    except ValueError as exc:
        shown = line[:80].decode("utf-8", "replace").rstrip()
        raise ProtocolError(f"not JSON ({exc}): {shown!r}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError(f"not a message (a JSON object with a 'type'): {describe(message)}")
    for name, kind in FIELDS.get(message["type"], {}).items():
        value = message.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ProtocolError(
                f"{message['type']!r} message whose {name!r} is {_type_name(value)}, "
                f"not {kind.__name__}: {describe(value)}"
            )
    return message
