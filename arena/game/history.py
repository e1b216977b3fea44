"""A round's history as one seat saw it: the plays in order with what came of each.

Built from the events the seat may see (:attr:`arena.game.Observation.events`), so a bot need not
walk the events itself: ``observation.history()`` gives every card played so far, its target and
Guard guess, whether the guess missed, the Priest's and the Baron's results where this seat saw
them, the card a Prince made its target discard, who was knocked out, and more.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from arena.game.cards import Card
from arena.game.events import Event, EventKind


@dataclass(frozen=True)
class Play:
    """One card played, and what came of it as the seat that asked saw it.

    ``target`` and ``guess`` are the play's (``None`` where there is none). ``no_effect``: every
    other player was protected. ``missed``: a Guard's guess that missed (the target does not hold
    ``guess``). ``seen``: the card a Priest showed its player (only that player sees it).
    ``shown``: the cards a Baron compared, the player's and the target's (seen by the two, and
    by everyone in a game of two); ``tie`` when they were equal. ``discarded``: the card a
    Prince made its target discard (public), and ``redrew_set_aside`` when the target's
    replacement was the set-aside card. ``swapped``: a King swapped hands. ``knocked_out``: the
    seats this play knocked out, with the cards they showed.
    """

    seat: int
    card: Card
    target: int | None = None
    guess: Card | None = None
    no_effect: bool = False
    missed: bool = False
    seen: Card | None = None
    shown: tuple[Card, Card] | None = None
    tie: bool = False
    discarded: Card | None = None
    redrew_set_aside: bool = False
    swapped: bool = False
    knocked_out: tuple[tuple[int, Card], ...] = ()


def history(events: Iterable[Event]) -> tuple[Play, ...]:
    """The plays of the round in order, from the events one seat sees (see :class:`Play`)."""
    plays: list[Play] = []
    open_play = False  # the events since the last play are its effects
    for event in events:
        kind = event.kind
        if kind == EventKind.PLAY:
            assert event.seat is not None
            guess = Card(event.value) if event.card == Card.GUARD and event.value else None
            plays.append(Play(event.seat, Card(event.card), event.target, guess))
            open_play = True
            continue
        if kind in (EventKind.TURN, EventKind.FORFEIT, EventKind.SHOWDOWN):
            open_play = False
        if not open_play:
            continue
        last = plays[-1]
        if kind == EventKind.NO_EFFECT:
            last = replace(last, no_effect=True)
        elif kind == EventKind.GUARD_MISS:
            last = replace(last, missed=True)
        elif kind == EventKind.PRIEST_SEE:
            last = replace(last, seen=Card(event.card))
        elif kind == EventKind.BARON_SHOW:
            last = replace(last, shown=(Card(event.card), Card(event.value)))
        elif kind == EventKind.BARON_TIE:
            last = replace(last, tie=True)
        elif kind == EventKind.DISCARD:
            last = replace(last, discarded=Card(event.card))
        elif kind == EventKind.REDRAW:
            last = replace(last, redrew_set_aside=bool(event.value))
        elif kind == EventKind.SWAP:
            last = replace(last, swapped=True)
        elif kind == EventKind.KNOCKOUT and event.seat is not None:
            last = replace(last, knocked_out=(*last.knocked_out, (event.seat, Card(event.card))))
        plays[-1] = last
    return tuple(plays)
