"""``ace``'s search: every option played out in many deals drawn from its belief.

For each of ``samples`` deals (:func:`bots.ace_belief.sample_hands`: the other hands from the
belief, the rest of the unseen cards shuffled) every option is applied with the engine and the
round played to its end by a playout policy in every seat (:func:`playout`), each seat deciding
from its own view of that deal. The option with the most wins (in twelfths, shared wins split) is
played. Every option is played out from the same deals (common random numbers), and options that
leave the same state in a deal (a Guard's guesses that miss) share its playout.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    END_NONE,
    EVENT_WIDTH,
    MAX_ACTIONS,
    PRINCESS,
    S_END,
    S_TURN,
    STATE_SIZE,
    V_SEAT,
    VIEW_SIZE,
)
from arena.engine.rules import apply_action, legal_actions
from arena.engine.view import seat_view
from bots.ace_belief import sample_hands
from bots.dp import dp_policy
from bots.greedy import greedy_policy
from bots.montecarlo import group_options
from bots.playout import policy_view, win_units
from bots.random_player import random_policy
from bots.strategic import strategic_policy

__all__ = [
    "PLAYOUT_DP",
    "PLAYOUT_GREEDY",
    "PLAYOUT_RANDOM",
    "PLAYOUT_STRATEGIC",
    "option_wins",
    "playout",
]

#: Playout policies, played by every seat: the ``random`` bot, the ``strategic`` bot, the
#: ``greedy`` bot, or the ``dp`` bot (its table is the ``table`` argument; ``huibers`` only).
PLAYOUT_RANDOM = 0
PLAYOUT_STRATEGIC = 1
PLAYOUT_GREEDY = 2
PLAYOUT_DP = 3

_NO_PARAMS = np.zeros(0, dtype=np.float64)
_NO_TABLE = np.zeros(0, dtype=np.int16)


@njit(cache=True)
def playout(
    state: np.ndarray, rng: np.ndarray, kind: int, table: np.ndarray, view: np.ndarray,
    acts: np.ndarray, ev: np.ndarray,
) -> None:  # fmt: skip
    """Play the round in ``state`` to its end, every seat playing the policy ``kind`` (one of
    the ``PLAYOUT_*`` constants; ``table``: the ``dp`` bot's table) from its own view."""
    while state[S_END] == END_NONE:
        seat = state[S_TURN]
        n = legal_actions(state, acts)
        if kind == PLAYOUT_STRATEGIC:
            seat_view(state, seat, view)
            action = strategic_policy(view, acts, n, rng, _NO_PARAMS, _NO_TABLE)
        elif kind == PLAYOUT_DP:
            seat_view(state, seat, view)
            action = dp_policy(view, acts, n, rng, _NO_PARAMS, table)
        elif kind == PLAYOUT_GREEDY:
            seat_view(state, seat, view)
            action = greedy_policy(view, acts, n, rng, _NO_PARAMS, _NO_TABLE)
        else:
            policy_view(state, seat, view)
            action = random_policy(view, acts, n, rng, _NO_PARAMS, _NO_TABLE)
        apply_action(state, action, ev)


@njit(cache=True)
def option_wins(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    likelihood: np.ndarray,
    rng: np.ndarray,
    samples: int,
    kind: int,
    table: np.ndarray,
    wins: np.ndarray,
) -> int:
    """Play every option among ``legal[:nlegal]`` out in ``samples`` deals drawn from the belief
    ``likelihood`` (:mod:`bots.ace_belief`), each by the playout policy ``kind`` (``table``:
    the ``dp`` bot's, for :data:`PLAYOUT_DP`), and return the index of the one with the most wins;
    ``wins[i]`` gets option ``i``'s wins in twelfths, -1 for the Princess while another card can
    be played. Ties go to the first option in the engine's order."""
    seat = view[V_SEAT]
    has_other = False
    for i in range(nlegal):
        if legal[i] & 15 != PRINCESS:
            has_other = True
    base = np.empty(STATE_SIZE, dtype=np.int32)
    after = np.empty((nlegal, STATE_SIZE), dtype=np.int32)
    group = np.empty(nlegal, dtype=np.int64)
    leader = np.empty(nlegal, dtype=np.int64)
    result = np.empty(nlegal, dtype=np.int64)
    slots = np.empty(16, dtype=np.int64)
    cards = np.empty(16, dtype=np.int32)
    pool = np.zeros(9, dtype=np.int64)
    weights = np.zeros(9, dtype=np.float64)
    pview = np.zeros(VIEW_SIZE, dtype=np.int32)
    acts = np.empty(MAX_ACTIONS, dtype=np.int32)
    ev = np.empty((0, EVENT_WIDTH), dtype=np.int32)
    active = np.empty(nlegal, dtype=np.bool_)
    for i in range(nlegal):
        active[i] = not (has_other and legal[i] & 15 == PRINCESS)
        wins[i] = 0 if active[i] else -1
    for _ in range(samples):
        sample_hands(view, likelihood, rng, base, slots, cards, pool, weights)
        ngroups = group_options(base, legal, nlegal, active, after, group, leader, ev)
        for q in range(ngroups):
            state = after[leader[q]]
            playout(state, rng, kind, table, pview, acts, ev)
            result[q] = win_units(state, seat)
        for i in range(nlegal):
            if active[i]:
                wins[i] += result[group[i]]
    best = -1
    for i in range(nlegal):
        if wins[i] >= 0 and (best < 0 or wins[i] > wins[best]):
            best = i
    return best
