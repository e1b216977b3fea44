"""``Game``: one round of Love Letter, a typed face over the engine's kernels."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arena.engine import layout as L
from arena.engine.rules import (
    EVENTS_PER_CALL,
    apply_action,
    forfeit,
    legal_actions,
    new_round,
)
from arena.engine.view import seat_view
from arena.errors import GameOverError, IllegalActionError, UnknownVariantError
from arena.game.actions import Action
from arena.game.cards import Card
from arena.game.deck import check_deck, shuffled_deck
from arena.game.events import END_REASONS, Event
from arena.game.observation import Observation
from arena.game.variants import Variant


class Game:
    """One round between ``players`` seats, dealt from ``deck`` (top card first).

    Without a deck, the cards are shuffled from ``seed``. ``first`` is the seat that moves first.
    The round keeps the full event log (:attr:`events`, each event tagged with who may see it) and
    the actions played (:attr:`actions`).
    """

    def __init__(
        self,
        players: int = 2,
        variant: Variant | str = "classic",
        deck: Sequence[Card | int] | None = None,
        seed: int = 0,
        first: int = 0,
    ) -> None:
        self.variant = Variant.get(variant)
        self.variant.check_players(players)
        if not 0 <= first < players:
            raise UnknownVariantError(f"first seat {first} is not one of the {players} seats")
        self.players = players
        self.deck: tuple[Card, ...] = (
            shuffled_deck(seed, self.variant)
            if deck is None
            else check_deck([Card(int(c)) for c in deck], self.variant)
        )
        self.first = first
        self.state = np.zeros(L.STATE_SIZE, dtype=np.int32)
        self._ev = np.zeros((EVENTS_PER_CALL, L.EVENT_WIDTH), dtype=np.int32)
        self._acts = np.zeros(L.MAX_ACTIONS, dtype=np.int32)
        self.events: list[Event] = []
        #: The engine's raw event rows, parallel to :attr:`events` (kind, seat, target, card,
        #: value, visibility mask).
        self.rows: list[list[int]] = []
        self.actions: list[tuple[int, Action]] = []
        deck_arr = np.array([int(c) for c in self.deck], dtype=np.int32)
        self._log(new_round(self.state, deck_arr, players, self.variant.code, first, self._ev))

    def _log(self, count: int) -> list[Event]:
        if count > EVENTS_PER_CALL:  # pragma: no cover - the engine's bound is fixed
            raise RuntimeError(f"engine wrote {count} events, more than {EVENTS_PER_CALL}")
        rows = self._ev[:count].tolist()
        new = [Event.from_row(row, self.players) for row in rows]
        self.rows.extend(rows)
        self.events.extend(new)
        return new

    # --- state ------------------------------------------------------------------------------

    @property
    def turn(self) -> int:
        """The seat to move."""
        return int(self.state[L.S_TURN])

    @property
    def over(self) -> bool:
        """Whether the round has ended."""
        return bool(self.state[L.S_END] != L.END_NONE)

    @property
    def winners(self) -> tuple[int, ...]:
        """The winning seats once the round is over (more than one: a shared win)."""
        mask = int(self.state[L.S_WINNERS])
        return tuple(s for s in range(self.players) if mask >> s & 1)

    @property
    def end_reason(self) -> str | None:
        """``"last_standing"`` or ``"deck_empty"`` once over, else ``None``."""
        return END_REASONS.get(int(self.state[L.S_END]))

    @property
    def alive(self) -> tuple[bool, ...]:
        """Which seats are still in the round."""
        return tuple(bool(self.state[L.S_ALIVE + s]) for s in range(self.players))

    def hand(self, seat: int) -> tuple[Card, ...]:
        """The true hand of ``seat`` (for referees and replays, never for bots)."""
        h = L.S_HAND + 2 * seat
        return tuple(Card(int(c)) for c in self.state[h : h + 2] if c)

    def legal_actions(self) -> list[Action]:
        """The legal actions of the seat to move, in the engine's order."""
        return [Action.from_int(a) for a in self.legal_packed()]

    def legal_packed(self) -> list[int]:
        """The legal actions of the seat to move in the engine's packed form, in order."""
        k = legal_actions(self.state, self._acts)
        return self._acts[:k].tolist()

    def view(self, seat: int) -> np.ndarray:
        """The engine's view array for ``seat``."""
        view = np.zeros(L.VIEW_SIZE, dtype=np.int32)
        seat_view(self.state, seat, view)
        return view

    def observation(self, seat: int, tokens: tuple[int, ...] = (), round: int = 1) -> Observation:
        """What ``seat`` may know now, with its legal actions when it is to move."""
        legal = self.legal_actions() if not self.over and seat == self.turn else []
        events = tuple(e for e in self.events if e.visible(seat))
        return Observation.from_view(self.view(seat), legal, events, tokens, round)

    # --- moves ------------------------------------------------------------------------------

    def play(self, action: Action | str) -> list[Event]:
        """Play ``action`` for the seat to move and return the events it caused.

        Raises :class:`~arena.errors.InvalidActionError` for a string that does not parse and
        :class:`~arena.errors.IllegalActionError` for an action the rules do not allow now.
        """
        if self.over:
            raise GameOverError("the round is over")
        act = Action.from_str(action) if isinstance(action, str) else action
        packed = act.to_int()
        allowed = self.legal_packed()
        if packed not in allowed:
            legal = ", ".join(str(Action.from_int(a)) for a in allowed)
            raise IllegalActionError(
                f"{act} is not legal for seat {self.turn} now (legal: {legal})"
            )
        self.actions.append((self.turn, act))
        return self._log(apply_action(self.state, packed, self._ev))

    def forfeit(self, seat: int) -> list[Event]:
        """Knock ``seat`` out of the round for a fault; play goes on without it."""
        if self.over:
            raise GameOverError("the round is over")
        return self._log(forfeit(self.state, seat, self._ev))
