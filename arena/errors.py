"""The exception hierarchy: every error the arena raises on purpose is an :class:`ArenaError`.

The command line turns any ``ArenaError`` into a one-line message and exit code 2. Messages often
carry text a bot or a plugin wrote (a fault, a plugin's import error); :func:`printable` is how
such text is shown, everywhere: on a terminal, in a stored record, in a report.
"""

from __future__ import annotations


class ArenaError(Exception):
    """Base class of the arena's own errors (bad input, faults, misuse)."""


class InvalidActionError(ArenaError, ValueError):
    """An action string that does not parse."""


class IllegalActionError(ArenaError, ValueError):
    """A well-formed action that the rules do not allow in the current position."""


class InvalidDeckError(ArenaError, ValueError):
    """A deck that is not an ordering of the variant's cards."""


class InvalidCardError(ArenaError, ValueError):
    """A card name or value that is not a Love Letter card."""


class UnknownVariantError(ArenaError, ValueError):
    """A variant name that is not defined, or a player count the variant does not allow."""


class UnknownBotError(ArenaError, LookupError):
    """A bot name that no installed plugin registers."""


class GameOverError(ArenaError):
    """An action was asked of a round that has already ended."""


class BotError(ArenaError):
    """A bot failed to answer properly; ``kind`` names the fault recorded for it."""

    kind = "error"


class BotTimeoutError(BotError):
    """The bot did not answer within its move time limit."""

    kind = "timeout"


class BotCrashedError(BotError):
    """The bot raised an exception or its process died."""

    kind = "crash"


class BotExitedError(BotError):
    """The bot's host process ended (it exited, was killed, or ran out of memory)."""

    kind = "exited"


class BotLimitError(BotError):
    """The bot went over a limit the kernel enforces on it as a whole (memory with its scratch
    space, processes)."""

    kind = "limit"


class MemoryShortageError(BotError):
    """The kernel killed the bot's host for memory while the bot was under its own limit: the
    machine, or the arena's share of it, ran short. Not the bot's fault: it does not count
    towards disqualification, and a tournament plays the game again."""

    kind = "shortage"


class BotProtocolError(BotError):
    """The bot's host broke the protocol (a line that is not a message, the wrong message)."""

    kind = "protocol"


class BotDisqualifiedError(BotError):
    """The bot had too many faults earlier in the run; its games are forfeits."""

    kind = "disqualified"


def printable(text: str, limit: int | None = None, keep: str = "") -> str:
    """``text`` safe to show on a terminal: every character that is not printable is written
    as its Python escape, so that it is seen and never acted on. That is every control
    character (``ESC`` as ``\\x1b``, so no clear-screen, window-title or clipboard-writing
    escape sequence reaches a terminal; tab ``\\t``, newline ``\\n``, carriage return
    ``\\r``, so one string stays one line and cannot overwrite another) and Unicode's invisible
    format and separator characters (a right-to-left override as ``\\u202e``). Ordinary spaces
    and every visible character, of any script, are kept.

    ``keep`` lists control characters to leave as they are (a bot's log keeps its ``"\\n\\t"``).
    With ``limit``, the result is cut to at most that many characters, the last being ``…``.
    """
    if not text.isprintable():
        text = "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in text)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return text
