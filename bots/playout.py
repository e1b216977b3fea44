"""Rollouts: a round played to its end by the ``random`` reference bot in every seat.

The search bots evaluate a position by playing it out with the engine's kernels. Each move is the
``random`` bot's choice (Huibers 2016, 3.1.1; :func:`bots.random_player.random_policy`, the same
compiled function the bot plays with, not a copy): the forced Countess, never the Princess when
there is another card, otherwise either card with equal chance, a random guess from Priest to
Princess, a Prince at a random opponent or itself with equal chance.

Speed: ``random_policy`` reads only the seat, the player count, the hand, and which seats are in
the round and protected. A rollout writes just those fields into a small view buffer
(:func:`policy_view`) instead of building the seat's whole view with ``seat_view`` for every
move, and gives the engine an empty event buffer (the engine then writes no events).
``tests/test_determinize.py`` checks that the policy chooses the same action from this view as
from the full one.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    END_NONE,
    EVENT_WIDTH,
    MAX_ACTIONS,
    S_ALIVE,
    S_END,
    S_HAND,
    S_NPLAYERS,
    S_PROT,
    S_TURN,
    S_WINNERS,
    V_ALIVE,
    V_HAND,
    V_NPLAYERS,
    V_PROT,
    V_SEAT,
    VIEW_SIZE,
)
from arena.engine.rules import apply_action, legal_actions
from bots.random_player import random_policy

__all__ = [
    "policy_view",
    "random_move",
    "random_playout",
    "random_playout_with",
    "share",
    "win_units",
]

#: The random policy's parameters (it has none) and table (it reads none).
_NO_PARAMS = np.zeros(0, dtype=np.float64)
_NO_TABLE = np.zeros(0, dtype=np.int16)

#: A sole win in :func:`win_units` (the least common multiple of 1..4 shares).
WIN_UNITS = 12


@njit(cache=True)
def share(state: np.ndarray, seat: int) -> float:
    """``seat``'s share of an ended round: 1 for a sole win, 1/k for a win shared by k seats,
    0 for a loss."""
    w = state[S_WINNERS]
    if (w >> seat) & 1 == 0:
        return 0.0
    k = 0
    while w != 0:
        k += w & 1
        w >>= 1
    return 1.0 / k


@njit(cache=True)
def win_units(state: np.ndarray, seat: int) -> int:
    """``seat``'s share of an ended round in twelfths (:data:`WIN_UNITS` for a sole win, 6, 4 or
    3 for a win shared by 2, 3 or 4 seats, 0 for a loss): exact integers for tallies."""
    w = state[S_WINNERS]
    if (w >> seat) & 1 == 0:
        return 0
    k = 0
    while w != 0:
        k += w & 1
        w >>= 1
    return WIN_UNITS // k


@njit(cache=True)
def policy_view(state: np.ndarray, seat: int, view: np.ndarray) -> None:
    """Write into ``view`` the fields of ``seat``'s view that the random policy reads: the seat,
    the player count, its hand, and which seats are in the round and protected. (The other fields
    are left as they are; this is not a seat's view.)"""
    n = state[S_NPLAYERS]
    view[V_SEAT] = seat
    view[V_NPLAYERS] = n
    view[V_HAND] = state[S_HAND + 2 * seat]
    view[V_HAND + 1] = state[S_HAND + 2 * seat + 1]
    for s in range(n):
        view[V_ALIVE + s] = state[S_ALIVE + s]
        view[V_PROT + s] = state[S_PROT + s]


@njit(cache=True)
def random_move(state: np.ndarray, rng: np.ndarray, view: np.ndarray, acts: np.ndarray) -> int:
    """The random bot's action for the seat to move in the running round ``state``; ``view``
    (:data:`VIEW_SIZE` ints) and ``acts`` (:data:`MAX_ACTIONS` ints) are scratch buffers."""
    seat = state[S_TURN]
    k = legal_actions(state, acts)
    policy_view(state, seat, view)
    return random_policy(view, acts, k, rng, _NO_PARAMS, _NO_TABLE)


@njit(cache=True)
def random_playout_with(
    state: np.ndarray,
    rng: np.ndarray,
    seat: int,
    view: np.ndarray,
    acts: np.ndarray,
    ev: np.ndarray,
) -> float:
    """:func:`random_playout` with caller-owned scratch buffers (no allocation): ``view`` of
    :data:`VIEW_SIZE` ints, ``acts`` of :data:`MAX_ACTIONS` ints, ``ev`` an event buffer (best
    empty: ``(0, EVENT_WIDTH)``)."""
    # random_move's body, inlined by hand: a rollout spends most of its time here.
    while state[S_END] == END_NONE:
        k = legal_actions(state, acts)
        policy_view(state, state[S_TURN], view)
        apply_action(state, random_policy(view, acts, k, rng, _NO_PARAMS, _NO_TABLE), ev)
    return share(state, seat)


@njit(cache=True)
def random_playout(state: np.ndarray, rng: np.ndarray, seat: int) -> float:
    """Play the round in ``state`` (modified in place) to its end with every seat playing like
    the ``random`` bot; return ``seat``'s share of the result (:func:`share`)."""
    view = np.zeros(VIEW_SIZE, dtype=np.int32)
    acts = np.empty(MAX_ACTIONS, dtype=np.int32)
    ev = np.empty((0, EVENT_WIDTH), dtype=np.int32)
    return random_playout_with(state, rng, seat, view, acts, ev)
