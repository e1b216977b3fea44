"""The cards of Love Letter as an ``IntEnum`` whose values are the card values."""

from __future__ import annotations

from enum import IntEnum

from arena.errors import InvalidCardError

_ALIASES = {"maid": "HANDMAID"}


class Card(IntEnum):
    """A Love Letter card; its value is the card's strength (Guard 1 … Princess 8)."""

    GUARD = 1
    PRIEST = 2
    BARON = 3
    HANDMAID = 4
    PRINCE = 5
    KING = 6
    COUNTESS = 7
    PRINCESS = 8

    def __str__(self) -> str:
        return self.name.capitalize()

    @classmethod
    def parse(cls, text: str | int) -> Card:
        """A card from its name (any case, ``Maid`` allowed) or its value (``3`` or ``"3"``)."""
        if isinstance(text, int) and not isinstance(text, bool):
            if 1 <= text <= 8:
                return cls(text)
            raise InvalidCardError(f"no card has the value {text} (values are 1 to 8)")
        word = str(text).strip()
        if word.isascii() and word.isdigit():
            return cls.parse(int(word))
        key = _ALIASES.get(word.lower(), word.upper())
        try:
            return cls[key]
        except KeyError:
            raise InvalidCardError(f"unknown card {text!r}") from None
