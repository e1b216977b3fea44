"""Events: what happened in a round, each tagged with the seats allowed to see it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from arena.engine import layout as L
from arena.game.cards import Card


class EventKind(IntEnum):
    """Kinds of event, with the engine's codes."""

    DEALT = L.EV_DEALT
    FACE_UP = L.EV_FACE_UP
    TURN = L.EV_TURN
    DRAW = L.EV_DRAW
    PLAY = L.EV_PLAY
    NO_EFFECT = L.EV_NO_EFFECT
    GUARD_MISS = L.EV_GUARD_MISS
    PRIEST_SEE = L.EV_PRIEST_SEE
    BARON_SHOW = L.EV_BARON_SHOW
    BARON_TIE = L.EV_BARON_TIE
    PROTECTED = L.EV_PROTECTED
    DISCARD = L.EV_DISCARD
    REDRAW = L.EV_REDRAW
    SWAP = L.EV_SWAP
    RECEIVE = L.EV_RECEIVE
    KNOCKOUT = L.EV_KNOCKOUT
    FORFEIT = L.EV_FORFEIT
    SHOWDOWN = L.EV_SHOWDOWN
    ROUND_END = L.EV_ROUND_END


_KINDS = {int(k): k for k in EventKind}
#: Events already made from engine rows, by (row..., players); a few thousand at most.
_FROM_ROW: dict[tuple[int, ...], Event] = {}
#: Most distinct events :meth:`Event.from_json` keeps (a round has a few thousand possible).
FROM_JSON_CACHE = 1 << 16
_FROM_JSON: dict[tuple[Any, ...], Event] = {}
END_REASONS = {L.END_LAST_STANDING: "last_standing", L.END_DECK_EMPTY: "deck_empty"}


def _card(value: int) -> str:
    return str(Card(value)) if value else "nothing"


@dataclass(frozen=True)
class Event:
    """One event of a round.

    ``seat`` is the seat the event is about, ``target`` the other seat involved, ``card`` the card
    shown or played, ``value`` a kind-specific number (a Guard's guess, the other seat's card in a
    Baron comparison, a discard total, 1 when a drawn card is the set-aside one, the winners' bit
    mask). ``visible_to`` lists the seats that may see the event; ``None`` means everyone.
    """

    kind: EventKind
    seat: int | None = None
    target: int | None = None
    card: int = 0
    value: int = 0
    visible_to: tuple[int, ...] | None = None

    @property
    def public(self) -> bool:
        """Whether every seat sees this event."""
        return self.visible_to is None

    def visible(self, seat: int) -> bool:
        """Whether ``seat`` may see this event."""
        return self.visible_to is None or seat in self.visible_to

    @property
    def winners(self) -> tuple[int, ...]:
        """For a ``ROUND_END`` event, the winning seats."""
        return tuple(s for s in range(4) if self.value >> s & 1)

    @classmethod
    def from_row(cls, row: Sequence[int], players: int) -> Event:
        """An event from one engine event row (events are immutable, so equal rows share one)."""
        key = (*row[:6], players)
        event = _FROM_ROW.get(key)
        if event is None:
            event = _FROM_ROW[key] = cls._from_row(row, players)
        return event

    @classmethod
    def _from_row(cls, row: Sequence[int], players: int) -> Event:
        kind, seat, target, card, value, vis = row[:6]
        everyone = (1 << players) - 1
        visible = (
            None if vis & everyone == everyone else tuple(s for s in range(players) if vis >> s & 1)
        )
        return cls(
            _KINDS[kind],
            None if seat < 0 else seat,
            None if target < 0 else target,
            card,
            value,
            visible,
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; ``kind`` is the lower-case kind name."""
        return {
            "kind": self.kind.name.lower(),
            "seat": self.seat,
            "target": self.target,
            "card": self.card,
            "value": self.value,
            "visible_to": None if self.visible_to is None else list(self.visible_to),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Event:
        """The inverse of :meth:`to_json` (equal events share one, as in :meth:`from_row`:
        reading stored records is mostly this)."""
        vis = data.get("visible_to")
        try:
            key = (
                data["kind"],
                data.get("seat"),
                data.get("target"),
                data.get("card", 0),
                data.get("value", 0),
                None if vis is None else tuple(vis),
            )
            event = _FROM_JSON.get(key)
        except TypeError:  # a value JSON-shaped but not hashable: build it, and let it fail there
            return cls._from_json(data)
        if event is None:
            event = cls._from_json(data)
            if len(_FROM_JSON) < FROM_JSON_CACHE:
                _FROM_JSON[key] = event
        return event

    @classmethod
    def _from_json(cls, data: dict[str, Any]) -> Event:
        vis = data.get("visible_to")
        return cls(
            EventKind[str(data["kind"]).upper()],
            data.get("seat"),
            data.get("target"),
            int(data.get("card", 0)),
            int(data.get("value", 0)),
            None if vis is None else tuple(int(s) for s in vis),
        )

    def text(self, names: Sequence[str] | None = None) -> str:
        """One readable line describing the event, naming seats by ``names`` when given."""

        def who(seat: int | None) -> str:
            if seat is None:
                return "nobody"
            if names and seat < len(names):
                return f"seat {seat} ({names[seat]})"
            return f"seat {seat}"

        k, s, t, c, v = self.kind, self.seat, self.target, self.card, self.value
        if k == EventKind.DEALT:
            return f"{who(s)} is dealt {_card(c)}"
        if k == EventKind.FACE_UP:
            return f"{_card(c)} is set aside face up"
        if k == EventKind.TURN:
            return f"{who(s)} begins a turn and draws a card"
        if k == EventKind.DRAW:
            return f"{who(s)} draws {_card(c)}" + (" (the set-aside card)" if v else "")
        if k == EventKind.PLAY:
            text = f"{who(s)} plays {_card(c)}"
            if t is not None:
                text += " on itself" if t == s else f" at {who(t)}"
            if v:
                text += f", naming {_card(v)}"
            return text
        if k == EventKind.NO_EFFECT:
            return f"{_card(c)} has no effect: every other player is protected"
        if k == EventKind.GUARD_MISS:
            return f"{who(t)} does not hold {_card(v)}"
        if k == EventKind.PRIEST_SEE:
            return f"{who(s)} sees that {who(t)} holds {_card(c)}"
        if k == EventKind.BARON_SHOW:
            return f"Baron: {who(s)} shows {_card(c)}, {who(t)} shows {_card(v)}"
        if k == EventKind.BARON_TIE:
            return f"Baron: {who(s)} and {who(t)} tie"
        if k == EventKind.PROTECTED:
            return f"{who(s)} is protected until its next turn"
        if k == EventKind.DISCARD:
            return f"{who(s)} discards {_card(c)}"
        if k == EventKind.REDRAW:
            return f"{who(s)} draws a new card" + (" (the set-aside card)" if v else "")
        if k == EventKind.SWAP:
            return f"{who(s)} and {who(t)} swap hands"
        if k == EventKind.RECEIVE:
            return f"{who(s)} receives {_card(c)} from {who(t)}"
        if k == EventKind.KNOCKOUT:
            shown = _card(c) + (f" and {_card(v)}" if v else "")
            return f"{who(s)} is out of the round, showing {shown}"
        if k == EventKind.FORFEIT:
            return f"{who(s)} forfeits the round (fault)"
        if k == EventKind.SHOWDOWN:
            return f"{who(s)} shows {_card(c)} (discards total {v})"
        reason = "only one player is left" if c == L.END_LAST_STANDING else "the deck is empty"
        won = self.winners
        if len(won) == 1:
            return f"round over ({reason}): {who(won[0])} wins"
        return f"round over ({reason}): shared by " + ", ".join(who(w) for w in won)
