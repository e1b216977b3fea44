"""What one seat knows of a round: the per-seat view, built from the state by one kernel.

The view is the single definition of a seat's knowledge. The referee's ``Observation`` is made from
it, bots' numba policies read it, and determinization samples hidden states consistent with it.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    CARD_COUNTS,
    N_CARDS,
    S_ALIVE,
    S_ASIDE_TAKEN,
    S_AWARE,
    S_DECK,
    S_DTOTAL,
    S_END,
    S_HAND,
    S_KNOW,
    S_NFACEUP,
    S_NPILE,
    S_NPLAYERS,
    S_PILE,
    S_PROT,
    S_TOP,
    S_TURN,
    S_VARIANT,
    S_WINNERS,
    V_ALIVE,
    V_ASIDE_TAKEN,
    V_DECK_SIZE,
    V_DTOTAL,
    V_END,
    V_FACEUP,
    V_HAND,
    V_KNOWN,
    V_KNOWN_BY,
    V_NFACEUP,
    V_NPILE,
    V_NPLAYERS,
    V_PILE,
    V_PROT,
    V_SEAT,
    V_TURN,
    V_UNSEEN,
    V_VARIANT,
    V_WINNERS,
)
from arena.engine.rules import legal_from


@njit(cache=True)
def seat_view(state: np.ndarray, seat: int, view: np.ndarray) -> None:
    """Fill ``view`` with what ``seat`` knows of ``state``.

    That is: its own hand; every public fact (seats in the round, protections, the discard pile in
    order, discard totals, the face-up cards, the draw pile's size, whether the set-aside card was
    drawn); the cards it knows other seats hold (from a Priest, a Baron tie or a King swap, while
    the holder has not played that card since); which of its own cards each other seat knows; and,
    per value, how many copies it has not seen anywhere.
    """
    # Every slot a reader may look at is written below; slots past the player count, the pile
    # or the face-up cards keep whatever they held (views are often reused buffers).
    n = state[S_NPLAYERS]
    view[V_SEAT] = seat
    view[V_NPLAYERS] = n
    view[V_VARIANT] = state[S_VARIANT]
    view[V_TURN] = state[S_TURN]
    view[V_DECK_SIZE] = N_CARDS - state[S_TOP]
    view[V_END] = state[S_END]
    view[V_WINNERS] = state[S_WINNERS]
    view[V_NFACEUP] = state[S_NFACEUP]
    view[V_NPILE] = state[S_NPILE]
    view[V_ASIDE_TAKEN] = state[S_ASIDE_TAKEN]
    # The unseen counts are made in the same passes (unseen_from_view would take them again).
    for v in range(9):
        view[V_UNSEEN + v] = CARD_COUNTS[v]
    c = state[S_HAND + 2 * seat]
    view[V_HAND] = c
    view[V_UNSEEN + c] -= 1
    c = state[S_HAND + 2 * seat + 1]
    view[V_HAND + 1] = c
    view[V_UNSEEN + c] -= 1
    for s in range(n):
        view[V_ALIVE + s] = state[S_ALIVE + s]
        view[V_PROT + s] = state[S_PROT + s]
        view[V_DTOTAL + s] = state[S_DTOTAL + s]
        c = state[S_KNOW + seat * 4 + s]
        view[V_KNOWN + s] = c
        view[V_UNSEEN + c] -= 1
        view[V_KNOWN_BY + s] = state[S_AWARE + seat * 4 + s]
    for i in range(state[S_NFACEUP]):
        c = state[S_DECK + 1 + i]
        view[V_FACEUP + i] = c
        view[V_UNSEEN + c] -= 1
    for i in range(state[S_NPILE]):
        c = state[S_PILE + i]
        view[V_PILE + i] = c
        view[V_UNSEEN + (c & 15)] -= 1
    view[V_UNSEEN] = 0


@njit(cache=True)
def unseen_from_view(view: np.ndarray) -> None:
    """Recompute the view's unseen counts from its other fields."""
    for v in range(9):
        view[V_UNSEEN + v] = CARD_COUNTS[v]
    view[V_UNSEEN] = 0
    for slot in range(2):
        view[V_UNSEEN + view[V_HAND + slot]] -= 1
    for i in range(view[V_NFACEUP]):
        view[V_UNSEEN + view[V_FACEUP + i]] -= 1
    for i in range(view[V_NPILE]):
        view[V_UNSEEN + (view[V_PILE + i] & 15)] -= 1
    for s in range(view[V_NPLAYERS]):
        view[V_UNSEEN + view[V_KNOWN + s]] -= 1
    view[V_UNSEEN] = 0


@njit(cache=True)
def view_legal_actions(view: np.ndarray, out: np.ndarray) -> int:
    """The legal actions of the viewing seat when it is to move (0 otherwise)."""
    seat = view[V_SEAT]
    if view[V_END] != 0 or view[V_TURN] != seat:
        return 0
    return legal_from(
        view, seat, view[V_NPLAYERS], view[V_HAND], view[V_HAND + 1], V_ALIVE, V_PROT, out
    )
