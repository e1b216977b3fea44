"""One round played by action index: the engine's state with the buffers and kernels that deal,
step and observe it for the learning environments.

Each step is one kernel call that checks the action against the engine's legal actions, applies
it, and builds the next seat's view, observation vector and mask, so that the Python work per
step stays small (docs/rl.md gives the figures).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    EVENT_WIDTH,
    MAX_ACTIONS,
    N_CARDS,
    S_END,
    S_NPLAYERS,
    S_TURN,
    S_WINNERS,
    STATE_SIZE,
    VIEW_SIZE,
)
from arena.engine.rng import new_rng, shuffle
from arena.engine.rules import EVENTS_PER_CALL, apply_action, new_round, standard_deck
from arena.engine.view import seat_view
from arena.errors import ArenaError, GameOverError, IllegalActionError, InvalidActionError
from arena.game.actions import Action
from arena.game.cards import Card
from arena.game.deck import check_deck
from arena.game.events import END_REASONS, Event
from arena.game.variants import Variant
from arena.rl.encoding import (
    N_ACTIONS,
    OBSERVATION_SIZE,
    _encode_view,
    _legal_mask,
    _packed_action,
    index_action,
)

#: What :func:`_step` returns once the round is over.
OVER = -1
#: What :func:`_step` returns for an action that is not legal.
REFUSED = -2


@njit(cache=True)
def _observe(
    state: np.ndarray,
    seat: int,
    view: np.ndarray,
    acts: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
) -> None:
    """Write ``seat``'s observation vector and action mask into ``obs`` and ``mask``."""
    seat_view(state, seat, view)
    _encode_view(view, obs)
    _legal_mask(state, seat, acts, mask)


@njit(cache=True)
def _deal(
    state: np.ndarray,
    deck: np.ndarray,
    rng: np.ndarray,
    shuffled: bool,
    nplayers: int,
    variant: int,
    first: int,
    ev: np.ndarray,
    view: np.ndarray,
    acts: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
) -> int:
    """Start a round from ``deck`` (shuffled first from ``rng`` when ``shuffled``) and observe
    the seat to move; return the events written."""
    if shuffled:
        shuffle(rng, deck, 0, N_CARDS)
    count = new_round(state, deck, nplayers, variant, first, ev)
    _observe(state, state[S_TURN], view, acts, obs, mask)
    return count


@njit(cache=True)
def _step(
    state: np.ndarray,
    index: int,
    ev: np.ndarray,
    count: np.ndarray,
    view: np.ndarray,
    acts: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
) -> int:
    """Play action ``index`` for the seat to move, writing its events into ``ev`` and their
    number into ``count[0]``; return the next seat to move, its view observed into ``obs`` and
    ``mask``, or :data:`OVER` once the round is over, or :data:`REFUSED` (nothing changed) if the
    action is not legal now."""
    seat = state[S_TURN]
    packed = _packed_action(index, seat, state[S_NPLAYERS])
    k = _legal_mask(state, seat, acts, mask)
    for i in range(k):
        if acts[i] == packed:
            count[0] = apply_action(state, packed, ev)
            if state[S_END] != 0:
                return OVER
            _observe(state, state[S_TURN], view, acts, obs, mask)
            return state[S_TURN]
    return REFUSED


@njit(cache=True)
def _observe_all(
    state: np.ndarray, view: np.ndarray, acts: np.ndarray, obs: np.ndarray, mask: np.ndarray
) -> None:
    """Write every seat's observation vector and mask into the rows of ``obs`` and ``mask``."""
    for seat in range(state[S_NPLAYERS]):
        _observe(state, seat, view, acts, obs[seat], mask[seat])


def round_rewards(winners: Sequence[int], players: int) -> list[float]:
    """Each seat's reward for a round won by ``winners``: +1 to a sole winner and -1/(players-1)
    to each other seat; winners of a shared round split the win. The rewards sum to 0, and are
    +1/-1 with two players (0 each for a shared round)."""
    k = len(winners)
    return [
        (players * (1.0 / k if s in winners else 0.0) - 1.0) / (players - 1) for s in range(players)
    ]


class EncodedRound:
    """A round of ``players`` seats under ``variant``, stepped by action index (:mod:`encoding
    <arena.rl.encoding>`), on decks shuffled from :meth:`seed`'s generator or given."""

    def __init__(self, players: int = 2, variant: str | Variant = "classic") -> None:
        self.variant = Variant.get(variant)
        self.variant.check_players(players)
        self.players = players
        self.state = np.zeros(STATE_SIZE, dtype=np.int32)
        self.deck = np.zeros(N_CARDS, dtype=np.int32)
        standard_deck(self.deck)
        self.rng = new_rng(0)
        #: The engine's event rows of the last deal or step (:meth:`last_events` reads them).
        self.ev = np.zeros((EVENTS_PER_CALL, EVENT_WIDTH), dtype=np.int32)
        self._count = np.zeros(1, dtype=np.int64)
        self._view = np.zeros(VIEW_SIZE, dtype=np.int32)
        self._acts = np.zeros(MAX_ACTIONS, dtype=np.int32)

    def seed(self, seed: int) -> None:
        """Seed the generator the decks are shuffled from (and start from the standard order)."""
        self.rng = new_rng(seed)
        standard_deck(self.deck)

    def deal(
        self, deck: Sequence[Card | int] | None = None, first: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Start a round, ``first`` to move, on ``deck`` (top card first) or the next shuffle;
        return the observation and mask of the seat to move."""
        if not 0 <= first < self.players:
            raise ArenaError(f"first seat {first} is not one of the {self.players} seats")
        if deck is not None:
            cards = check_deck([Card(int(c)) for c in deck], self.variant)
            self.deck[:] = [int(c) for c in cards]
        obs = np.empty(OBSERVATION_SIZE, dtype=np.float32)
        mask = np.empty(N_ACTIONS, dtype=np.int8)
        self._count[0] = _deal(
            self.state,
            self.deck,
            self.rng,
            deck is None,
            self.players,
            self.variant.code,
            first,
            self.ev,
            self._view,
            self._acts,
            obs,
            mask,
        )
        return obs, mask

    def step(self, index: int) -> tuple[int, np.ndarray, np.ndarray] | None:
        """Play action ``index`` for the seat to move; return the next seat to move with its
        observation and mask, or ``None`` once the round is over. Raises
        :class:`~arena.errors.IllegalActionError` (the round unchanged) for an action the rules
        do not allow now, and :class:`~arena.errors.GameOverError` once the round is over."""
        if not 0 <= index < N_ACTIONS:  # the kernel reads the action table unchecked
            self._refuse(index)
        obs = np.empty(OBSERVATION_SIZE, dtype=np.float32)
        mask = np.empty(N_ACTIONS, dtype=np.int8)
        following = _step(
            self.state, index, self.ev, self._count, self._view, self._acts, obs, mask
        )
        if following >= 0:
            return following, obs, mask
        if following == REFUSED:
            self._refuse(index)
        return None

    def _refuse(self, index: int) -> None:
        if self.over:
            raise GameOverError("the round is over")
        seat = self.turn
        try:
            said = f"{index} ({index_action(index, seat, self.players)})"
        except InvalidActionError:
            said = str(index)
        names = ", ".join(
            f"{a} ({index_action(int(a), seat, self.players)})"
            for a in np.flatnonzero(self.mask(seat))
        )
        raise IllegalActionError(f"action {said} is not legal for seat {seat} now (legal: {names})")

    def observe(self, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """``seat``'s observation vector and action mask now (new arrays)."""
        obs = np.empty(OBSERVATION_SIZE, dtype=np.float32)
        mask = np.empty(N_ACTIONS, dtype=np.int8)
        _observe(self.state, seat, self._view, self._acts, obs, mask)
        return obs, mask

    def observe_all(self) -> tuple[np.ndarray, np.ndarray]:
        """Every seat's observation vector and action mask now, one row per seat."""
        obs = np.empty((self.players, OBSERVATION_SIZE), dtype=np.float32)
        mask = np.empty((self.players, N_ACTIONS), dtype=np.int8)
        _observe_all(self.state, self._view, self._acts, obs, mask)
        return obs, mask

    def mask(self, seat: int) -> np.ndarray:
        """``seat``'s action mask now."""
        return self.observe(seat)[1]

    def view(self, seat: int) -> np.ndarray:
        """``seat``'s engine view now (a new array)."""
        view = np.zeros(VIEW_SIZE, dtype=np.int32)
        seat_view(self.state, seat, view)
        return view

    @property
    def turn(self) -> int:
        """The seat to move."""
        return int(self.state[S_TURN])

    @property
    def over(self) -> bool:
        """Whether the round has ended."""
        return bool(self.state[S_END])

    @property
    def winners(self) -> tuple[int, ...]:
        """The winning seats once over."""
        w = int(self.state[S_WINNERS])
        return tuple(s for s in range(self.players) if w >> s & 1)

    @property
    def end_reason(self) -> str | None:
        """``"last_standing"`` or ``"deck_empty"`` once over, else ``None``."""
        return END_REASONS.get(int(self.state[S_END]))

    def rewards(self) -> list[float]:
        """Each seat's reward (:func:`round_rewards`) once over, else zeros."""
        if not self.over:
            return [0.0] * self.players
        return round_rewards(self.winners, self.players)

    def last_events(self) -> list[Event]:
        """The events of the last deal or step, each with who may see it."""
        rows = self.ev[: min(int(self._count[0]), EVENTS_PER_CALL)].tolist()
        return [Event.from_row(row, self.players) for row in rows]

    def action(self, index: int) -> Action:
        """The action of index ``index`` for the seat to move."""
        return index_action(index, self.turn, self.players)
