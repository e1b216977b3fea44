"""The typed Python face over the engine: cards, actions, events, observations, variants, a round
(:class:`Game`) and a match of rounds (:class:`Match`).

What a bot needs (actions, cards, events, observations, variants) imports without numba; what runs
the engine (:class:`Game`, :class:`Match`, the deck functions) is imported on first use, so that a
bot host of a pure-Python bot starts without compiling or loading any kernel.

May import: arena.engine, arena.errors, arena.seeds.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from arena.game.actions import Action
from arena.game.cards import Card
from arena.game.events import Event, EventKind
from arena.game.observation import Observation
from arena.game.variants import VARIANTS, Variant

if TYPE_CHECKING:
    from arena.game.deck import check_deck, parse_deck, shuffled_deck
    from arena.game.match import Match
    from arena.game.round import Game

#: Names imported on first use, and their modules.
_LAZY = {
    "Game": "arena.game.round",
    "Match": "arena.game.match",
    "check_deck": "arena.game.deck",
    "parse_deck": "arena.game.deck",
    "shuffled_deck": "arena.game.deck",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'arena.game' has no attribute {name!r}")


__all__ = [
    "VARIANTS",
    "Action",
    "Card",
    "Event",
    "EventKind",
    "Game",
    "Match",
    "Observation",
    "Variant",
    "check_deck",
    "parse_deck",
    "shuffled_deck",
]
