"""The typed Python face over the engine: cards, actions, events, observations, variants, a round
(:class:`Game`) and a match of rounds (:class:`Match`)."""

from arena.game.actions import Action
from arena.game.cards import Card
from arena.game.deck import check_deck, parse_deck, shuffled_deck
from arena.game.events import Event, EventKind
from arena.game.match import Match
from arena.game.observation import Observation
from arena.game.round import Game
from arena.game.variants import VARIANTS, Variant

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
