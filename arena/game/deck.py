"""Deck orders: parsing, validation against a variant's cards, and seeded shuffles."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from arena.engine.rng import new_rng, shuffle
from arena.errors import InvalidCardError, InvalidDeckError
from arena.game.cards import Card
from arena.game.variants import Variant


def check_deck(cards: Sequence[Card], variant: Variant | str = "classic") -> tuple[Card, ...]:
    """Return ``cards`` as a tuple if they are an ordering of the variant's 16 cards.

    Raises :class:`InvalidDeckError` naming what is missing or extra otherwise.
    """
    deck = Variant.get(variant).cards
    if sorted(cards) == list(deck):
        return tuple(_CARDS[c] for c in cards)
    got = Counter(cards)
    want = Counter(deck)
    if got != want or len(cards) != len(deck):
        extra = got - want
        missing = want - got
        parts = []
        if len(cards) != len(deck):
            parts.append(f"{len(cards)} cards instead of {len(deck)}")
        if extra:
            parts.append("too many " + ", ".join(f"{c}" for c in sorted(extra)))
        if missing:
            parts.append("too few " + ", ".join(f"{c}" for c in sorted(missing)))
        raise InvalidDeckError("not a deck of the variant's cards: " + "; ".join(parts))
    return tuple(Card(c) for c in cards)


def parse_deck(
    text: str | Iterable[str | int], variant: Variant | str = "classic"
) -> tuple[Card, ...]:
    """Parse a deck, top card first, from ``"8,1,1,..."``, card names, or a sequence of either."""
    items: Iterable[str | int]
    if isinstance(text, str):
        items = [w for w in text.replace(",", " ").split() if w]
    else:
        items = text
    try:
        cards = [Card.parse(item) for item in items]
    except InvalidCardError as exc:
        raise InvalidDeckError(f"bad deck: {exc}") from None
    return check_deck(cards, variant)


def shuffled_deck(seed: int, variant: Variant | str = "classic") -> tuple[Card, ...]:
    """The variant's cards in an order determined by ``seed``."""
    values = np.array(Variant.get(variant).cards, dtype=np.int32)
    shuffle(new_rng(seed), values, 0, len(values))
    return tuple([_CARDS[v] for v in values.tolist()])


_CARDS: tuple[Card, ...] = (Card.GUARD, *Card)  # by value; index 0 is never a card
