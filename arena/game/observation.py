"""The Observation: everything one seat may know at one moment, and nothing else."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from arena.engine import layout as L
from arena.game.actions import Action
from arena.game.cards import Card
from arena.game.events import END_REASONS, Event
from arena.game.variants import VARIANTS, Variant

if TYPE_CHECKING:  # numpy is imported where a view array is made, not by a bot's host
    import numpy as np

    from arena.game.history import Play

_END_CODES = {name: code for code, name in END_REASONS.items()}
_VARIANT_NAMES = {v.code: v.name for v in VARIANTS.values()}


_CARDS: tuple[Card | None, ...] = (None, *Card)
_CARD: dict[int, Card] = {int(c): c for c in Card}


def _card_or_none(value: int) -> Card | None:
    return _CARDS[value]


@dataclass(frozen=True)
class Observation:
    """One seat's view of a round, as the referee sends it to that seat's bot.

    Built from the engine's per-seat view (:func:`arena.engine.view.seat_view`), so it holds
    exactly what the seat knows: its own hand, every public fact, and what it was shown privately.
    ``legal_actions`` lists what the seat may play now (empty when it is not its turn), so a bot
    needs no rules code. :meth:`to_view` gives back the engine's view array for numba policies.
    """

    variant: str
    players: int
    seat: int
    turn: int
    hand: tuple[Card, ...]
    legal_actions: tuple[Action, ...]
    alive: tuple[bool, ...]
    protected: tuple[bool, ...]
    discard_totals: tuple[int, ...]
    pile: tuple[tuple[int, Card], ...]
    face_up: tuple[Card, ...]
    deck_size: int
    set_aside_taken: bool
    known: tuple[Card | None, ...]
    known_by: tuple[Card | None, ...]
    unseen: tuple[int, ...]
    end_reason: str | None = None
    winners: tuple[int, ...] = ()
    events: tuple[Event, ...] = field(default=(), repr=False)
    tokens: tuple[int, ...] = ()
    round: int = 1

    # --- convenience ------------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        """Whether the round is over."""
        return self.end_reason is not None

    def discards(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` discarded (played, lost to a Prince, shown when out), in order."""
        return tuple(card for s, card in self.pile if s == seat)

    def unseen_count(self, card: Card | int) -> int:
        """Copies of ``card`` this seat has seen nowhere (they may be in hands, deck or aside)."""
        return self.unseen[int(card) - 1]

    @property
    def opponents(self) -> tuple[int, ...]:
        """The other seats still in the round."""
        return tuple(s for s in range(self.players) if s != self.seat and self.alive[s])

    # --- engine view ------------------------------------------------------------------------

    @classmethod
    def from_view(
        cls,
        view: np.ndarray | Sequence[int],
        legal: Sequence[Action] = (),
        events: Sequence[Event] = (),
        tokens: Sequence[int] = (),
        round: int = 1,
    ) -> Observation:
        """Build an observation from an engine view (the array or its list of ints) and what
        the referee adds: the legal actions, the events the seat may see, tokens, round number."""
        v = view.tolist() if hasattr(view, "tolist") else view  # a numpy array, or a list
        n = v[L.V_NPLAYERS]
        card = _CARDS
        alive = L.V_ALIVE
        prot = L.V_PROT
        known = L.V_KNOWN
        known_by = L.V_KNOWN_BY
        npile = v[L.V_NPILE]
        winners = v[L.V_WINNERS]
        # The fields in order, set without the frozen dataclass's per-field __setattr__ (this
        # runs for every move of every bot).
        observation = object.__new__(cls)
        observation.__dict__.update(
            zip(
                _FIELD_NAMES,
                (
                    _VARIANT_NAMES[v[L.V_VARIANT]],
                    n,
                    v[L.V_SEAT],
                    v[L.V_TURN],
                    tuple([card[c] for c in v[L.V_HAND : L.V_HAND + 2] if c]),
                    tuple(legal),
                    tuple([x != 0 for x in v[alive : alive + n]]),
                    tuple([x != 0 for x in v[prot : prot + n]]),
                    tuple(v[L.V_DTOTAL : L.V_DTOTAL + n]),
                    tuple([(p >> 4, card[p & 15]) for p in v[L.V_PILE : L.V_PILE + npile]]),
                    tuple([card[c] for c in v[L.V_FACEUP : L.V_FACEUP + v[L.V_NFACEUP]]]),
                    v[L.V_DECK_SIZE],
                    v[L.V_ASIDE_TAKEN] != 0,
                    tuple([card[c] for c in v[known : known + n]]),
                    tuple([card[c] for c in v[known_by : known_by + n]]),
                    tuple(v[L.V_UNSEEN + 1 : L.V_UNSEEN + 9]),
                    END_REASONS.get(v[L.V_END]),
                    tuple([s for s in range(n) if winners >> s & 1]),
                    tuple(events),
                    tuple(tokens),
                    round,
                ),
                strict=True,
            )
        )
        return observation

    def to_view(self) -> np.ndarray:
        """The engine view array this observation was built from."""
        import numpy as np

        view = np.zeros(L.VIEW_SIZE, dtype=np.int32)
        n = self.players
        view[L.V_SEAT] = self.seat
        view[L.V_NPLAYERS] = n
        view[L.V_VARIANT] = Variant.get(self.variant).code
        view[L.V_TURN] = self.turn
        view[L.V_DECK_SIZE] = self.deck_size
        view[L.V_END] = _END_CODES.get(self.end_reason or "", 0)
        view[L.V_WINNERS] = sum(1 << s for s in self.winners)
        view[L.V_NFACEUP] = len(self.face_up)
        view[L.V_NPILE] = len(self.pile)
        view[L.V_ASIDE_TAKEN] = int(self.set_aside_taken)
        for i, card in enumerate(self.hand):
            view[L.V_HAND + i] = int(card)
        for s in range(n):
            view[L.V_ALIVE + s] = int(self.alive[s])
            view[L.V_PROT + s] = int(self.protected[s])
            view[L.V_DTOTAL + s] = self.discard_totals[s]
            view[L.V_KNOWN + s] = int(self.known[s] or 0)
            view[L.V_KNOWN_BY + s] = int(self.known_by[s] or 0)
        for i, card in enumerate(self.face_up):
            view[L.V_FACEUP + i] = int(card)
        for i, (s, card) in enumerate(self.pile):
            view[L.V_PILE + i] = s * 16 + int(card)
        from arena.engine.view import unseen_from_view  # a kernel: numba only when needed

        unseen_from_view(view)
        return view

    def legal_packed(self) -> np.ndarray:
        """The legal actions in the engine's packed form, in order."""
        import numpy as np

        return np.array([a.to_int() for a in self.legal_actions], dtype=np.int32)

    # --- JSON -------------------------------------------------------------------------------

    def history(self) -> tuple[Play, ...]:
        """The round's plays so far as this seat saw them, in order, each with its target,
        guess and what came of it (:mod:`arena.game.history`)."""
        from arena.game.history import history

        return history(self.events)

    def to_json(self, events: bool = True) -> dict[str, Any]:
        """A JSON-ready dict (cards as their values, actions as strings); without ``events``
        the ``events`` entry is left out (the host protocol sends only new events)."""
        data = {
            "variant": self.variant,
            "players": self.players,
            "seat": self.seat,
            "turn": self.turn,
            "hand": [int(c) for c in self.hand],
            "legal_actions": [str(a) for a in self.legal_actions],
            "alive": list(self.alive),
            "protected": list(self.protected),
            "discard_totals": list(self.discard_totals),
            "pile": [[s, int(c)] for s, c in self.pile],
            "face_up": [int(c) for c in self.face_up],
            "deck_size": self.deck_size,
            "set_aside_taken": self.set_aside_taken,
            "known": [int(c) if c else None for c in self.known],
            "known_by": [int(c) if c else None for c in self.known_by],
            "unseen": list(self.unseen),
            "end_reason": self.end_reason,
            "winners": list(self.winners),
            "tokens": list(self.tokens),
            "round": self.round,
        }
        if events:
            data["events"] = [e.to_json() for e in self.events]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any] | str) -> Observation:
        """The inverse of :meth:`to_json` (accepts the dict or its JSON text)."""
        d = json.loads(data) if isinstance(data, str) else data
        return cls(
            variant=d["variant"],
            players=d["players"],
            seat=d["seat"],
            turn=d["turn"],
            hand=tuple(Card(c) for c in d["hand"]),
            legal_actions=tuple(Action.from_str(a) for a in d["legal_actions"]),
            alive=tuple(bool(x) for x in d["alive"]),
            protected=tuple(bool(x) for x in d["protected"]),
            discard_totals=tuple(int(x) for x in d["discard_totals"]),
            pile=tuple((int(s), Card(c)) for s, c in d["pile"]),
            face_up=tuple(Card(c) for c in d["face_up"]),
            deck_size=int(d["deck_size"]),
            set_aside_taken=bool(d["set_aside_taken"]),
            known=tuple(_card_or_none(c or 0) for c in d["known"]),
            known_by=tuple(_card_or_none(c or 0) for c in d["known_by"]),
            unseen=tuple(int(x) for x in d["unseen"]),
            end_reason=d.get("end_reason"),
            winners=tuple(int(s) for s in d.get("winners", ())),
            events=tuple(Event.from_json(e) for e in d.get("events", ())),
            tokens=tuple(int(t) for t in d.get("tokens", ())),
            round=int(d.get("round", 1)),
        )


_FIELD_NAMES = tuple(f.name for f in fields(Observation))
