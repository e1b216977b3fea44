"""Small numba helpers that read a seat's view array (:mod:`arena.engine.view`) for the policies."""

from __future__ import annotations

import numpy as np
from numba import njit

from arena.engine.layout import (
    GUARD,
    PRINCESS,
    V_ALIVE,
    V_HAND,
    V_NPLAYERS,
    V_PROT,
    V_SEAT,
    V_UNSEEN,
)
from arena.engine.rng import rand_below


@njit(cache=True)
def action_card(action: int) -> int:
    """The card a packed action plays."""
    return action & 15


@njit(cache=True)
def action_target(action: int) -> int:
    """The seat a packed action targets (-1: none)."""
    return ((action >> 4) & 7) - 1


@njit(cache=True)
def action_guess(action: int) -> int:
    """The card a packed action's Guard names (0: none)."""
    return (action >> 8) & 15


@njit(cache=True)
def targetable(view: np.ndarray, seat: int) -> bool:
    """Whether another seat ``seat`` can be targeted (in the round, not protected)."""
    return view[V_ALIVE + seat] != 0 and view[V_PROT + seat] == 0 and seat != view[V_SEAT]


@njit(cache=True)
def other_card(view: np.ndarray, card: int) -> int:
    """The card in hand besides one copy of ``card`` (0 if the hand holds one card)."""
    if view[V_HAND] == card:
        return view[V_HAND + 1]
    return view[V_HAND]


@njit(cache=True)
def find_action(legal: np.ndarray, nlegal: int, card: int, target: int, guess: int) -> int:
    """The legal action playing ``card`` at ``target`` naming ``guess`` (-2: any target, 0: any
    guess), or -1 if there is none."""
    for i in range(nlegal):
        a = legal[i]
        if action_card(a) != card:
            continue
        if target != -2 and action_target(a) != target:
            continue
        if guess != 0 and action_guess(a) != guess:
            continue
        return a
    return -1


@njit(cache=True)
def most_unseen_guess(view: np.ndarray) -> int:
    """The non-Guard card with the most unseen copies, ties to the lowest value."""
    best = 2
    for v in range(3, PRINCESS + 1):
        if view[V_UNSEEN + v] > view[V_UNSEEN + best]:
            best = v
    return best


@njit(cache=True)
def random_opponent(view: np.ndarray, rng: np.ndarray) -> int:
    """A uniformly chosen other seat that can be targeted, or -1 if none can."""
    n = 0
    for s in range(view[V_NPLAYERS]):
        if targetable(view, s):
            n += 1
    if n == 0:
        return -1
    pick = rand_below(rng, n)
    for s in range(view[V_NPLAYERS]):
        if targetable(view, s):
            if pick == 0:
                return s
            pick -= 1
    return -1


@njit(cache=True)
def plain_play(legal: np.ndarray, nlegal: int, card: int) -> int:
    """The legal action of ``card`` without a target or guess choice to make (the first one)."""
    return find_action(legal, nlegal, card, -2, 0)


# Guard is re-exported for the policies' readability.
__all__ = ["GUARD"]
