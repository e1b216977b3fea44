"""Actions: which card a seat plays, at whom, and what a Guard names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from arena.errors import InvalidActionError, InvalidCardError
from arena.game.cards import Card

_TARGETED = frozenset({Card.GUARD, Card.PRIEST, Card.BARON, Card.PRINCE, Card.KING})
_PATTERN = re.compile(r"\s*([A-Za-z]+|\d)\s*(?:->\s*(\d+)\s*(?::\s*([A-Za-z]+|\d))?)?\s*", re.ASCII)

#: Longest string :meth:`Action.from_str` reads; a longer one is not an action.
MAX_ACTION_TEXT = 64


@dataclass(frozen=True, order=True)
class Action:
    """A card played, with its target seat and the card a Guard names.

    ``str(action)`` and :meth:`from_str` round-trip: ``Guard->1:Priest`` (Guard at seat 1 naming
    the Priest), ``Prince->0``, ``Handmaid``. A targeted card written without a target is played
    without effect, which the rules allow only when every other player is protected.
    """

    card: Card
    target: int | None = None
    guess: Card | None = None

    def __post_init__(self) -> None:
        if self.target is not None and not 0 <= self.target <= 3:
            raise InvalidActionError(f"target seat {self.target} is not a seat (0 to 3)")
        if self.target is not None and self.card not in _TARGETED:
            raise InvalidActionError(f"{self.card} takes no target")
        if self.guess is not None:
            if self.card != Card.GUARD or self.target is None:
                raise InvalidActionError("only a Guard played at a seat names a card")
            if self.guess == Card.GUARD:
                raise InvalidActionError("a Guard cannot name the Guard")
        elif self.card == Card.GUARD and self.target is not None:
            raise InvalidActionError(
                "a Guard played at a seat must name a card, e.g. Guard->1:Priest"
            )

    def __str__(self) -> str:
        return _text(self)

    def _str(self) -> str:
        text = str(self.card)
        if self.target is not None:
            text += f"->{self.target}"
        if self.guess is not None:
            text += f":{self.guess}"
        return text

    @classmethod
    def from_str(cls, text: str) -> Action:
        """Parse ``Card[->seat[:Card]]``; cards by name or value, ASCII only.

        Raises :class:`~arena.errors.InvalidActionError` for anything else, whatever it is
        (a string longer than :data:`MAX_ACTION_TEXT` characters is not read at all).
        """
        if not isinstance(text, str):
            raise InvalidActionError(f"an action is a string, not {type(text).__name__}")
        if len(text) > MAX_ACTION_TEXT:
            raise InvalidActionError(
                f"an action string of {len(text)} characters (at most {MAX_ACTION_TEXT}): "
                f"{text[:40]!r}..."
            )
        return _parse(text)

    @classmethod
    def _parse(cls, text: str) -> Action:
        m = _PATTERN.fullmatch(text)
        if not m:
            raise InvalidActionError(
                f"cannot parse action {text!r} (expected e.g. Guard->1:Priest)"
            )
        try:
            card = Card.parse(m.group(1))
            guess = Card.parse(m.group(3)) if m.group(3) else None
        except InvalidCardError as exc:
            raise InvalidActionError(f"cannot parse action {text!r}: {exc}") from None
        target = int(m.group(2)) if m.group(2) is not None else None
        return cls(card, target, guess)

    def to_int(self) -> int:
        """The engine's packed form of this action."""
        target = -1 if self.target is None else self.target
        return int(self.card) | ((target + 1) << 4) | (int(self.guess or 0) << 8)

    @classmethod
    def from_int(cls, packed: int) -> Action:
        """The action the engine packed as ``packed``."""
        return _unpack(packed)

    @classmethod
    def _from_int(cls, packed: int) -> Action:
        card = Card(packed & 15)
        target = ((packed >> 4) & 7) - 1
        guess = (packed >> 8) & 15
        return cls(card, None if target < 0 else target, Card(guess) if guess else None)


@lru_cache(maxsize=4096)
def _unpack(packed: int) -> Action:
    return Action._from_int(packed)


@lru_cache(maxsize=4096)
def _parse(text: str) -> Action:
    return Action._parse(text)


@lru_cache(maxsize=4096)
def _text(action: Action) -> str:
    return action._str()
