"""Named rule sets (variants) and the cards they use."""

from __future__ import annotations

from dataclasses import dataclass

from arena.engine.layout import (
    CARD_COUNT_VALUES,
    FACE_UP_2P_VALUES,
    VARIANT_CLASSIC,
    VARIANT_HUIBERS,
)
from arena.errors import UnknownVariantError
from arena.game.cards import Card


@dataclass(frozen=True)
class Variant:
    """A rule set: its name, engine code, player counts and what it sets aside face up."""

    name: str
    code: int
    min_players: int
    max_players: int
    description: str

    @property
    def cards(self) -> tuple[Card, ...]:
        """The deck in value order."""
        return _STANDARD_CARDS

    def face_up(self, players: int) -> int:
        """How many cards are set aside face up for ``players`` players."""
        return FACE_UP_2P_VALUES[self.code] if players == 2 else 0

    def check_players(self, players: int) -> None:
        """Raise :class:`UnknownVariantError` unless the variant allows ``players`` players."""
        if not self.min_players <= players <= self.max_players:
            span = (
                f"{self.min_players}"
                if self.min_players == self.max_players
                else f"{self.min_players} to {self.max_players}"
            )
            raise UnknownVariantError(f"variant {self.name!r} is for {span} players, not {players}")

    def tokens_to_win(self, players: int) -> int:
        """Tokens that win a match: 7, 5 or 4 for 2, 3 or 4 players."""
        return {2: 7, 3: 5, 4: 4}[players]

    @classmethod
    def by_code(cls, code: int) -> Variant:
        """The variant with the engine code ``code``."""
        for variant in VARIANTS.values():
            if variant.code == code:
                return variant
        raise UnknownVariantError(f"no variant has the engine code {code}")

    @classmethod
    def get(cls, name: str | Variant) -> Variant:
        """The variant called ``name``."""
        if isinstance(name, Variant):
            return name
        try:
            return VARIANTS[name]
        except KeyError:
            known = ", ".join(VARIANTS)
            raise UnknownVariantError(f"unknown variant {name!r} (known: {known})") from None


_STANDARD_CARDS = tuple(Card(v) for v in range(1, 9) for _ in range(CARD_COUNT_VALUES[v]))

CLASSIC = Variant(
    "classic",
    VARIANT_CLASSIC,
    2,
    4,
    "16 cards, 2-4 players; with 2 players 3 more cards are set aside face up",
)
HUIBERS = Variant(
    "huibers",
    VARIANT_HUIBERS,
    2,
    2,
    "the 2-player rules of Huibers 2016: as classic, but no cards set aside face up",
)
VARIANTS: dict[str, Variant] = {v.name: v for v in (CLASSIC, HUIBERS)}
