"""Determinization: a full hidden state of the round sampled from what one seat knows.

The search bots (``montecarlo``, ``pimc``, ``ismcts``, ``minimax``) cannot see the other hands,
the draw pile or the set-aside card. :func:`determinize` fills an engine state (the flat ``int32``
array of :mod:`arena.engine.layout`) from a seat's view (:func:`arena.engine.view.seat_view`) so
that the engine's kernels (``legal_actions``, ``apply_action``, ``seat_view``) can play the round
on from it. It reads the view only, never the true state.

What is kept exactly (read off the view):

- the viewing seat's hand (one card, or two when it is to move);
- every public fact: the player count, the variant, whose turn it is, the seats still in, the
  Handmaid protections, the discard pile in order and the discard totals, the face-up cards, the
  draw pile's size, whether the set-aside card was drawn, and the end and winners of an ended
  round;
- the seat's private knowledge: a card it knows another seat holds (``V_KNOWN``: a Priest look,
  a Baron tie, a King swap) is put in that seat's hand; its own knowledge row of ``S_KNOW`` is
  ``V_KNOWN``; the others' knowledge of its card (``V_KNOWN_BY``) goes to their rows of ``S_KNOW``
  (the card they know it holds) and to its row of ``S_AWARE``.

What is sampled: the copies the seat has not seen (``V_UNSEEN``) are shuffled uniformly
(Fisher-Yates) into the unknown slots: the hands of the other seats still in whose card it does
not know (two slots for the seat to move, one of which is its known card when it has one), then
the set-aside card (unless it was drawn), then the draw pile. Every assignment of the unseen
copies to those slots is equally likely, so the sample is uniform among the deals consistent with
the view.

What is not used: negative information. A Guard that missed ("seat 1 does not hold the Priest")
rules a card out of a hand, and an opponent's choices (a Countess played when it need not have
been) hint at its hand; the view carries neither (it holds no event log), so a determinization
may put a card in a hand that the events have ruled out. Bots that want that inference must do it
themselves.

Other slots: ``S_NMOVES`` (the number of actions played) is not in the view and is set to 0 (no
kernel reads it). ``S_KNOW`` and ``S_AWARE`` between two other seats are 0 (what the others know of
each other is not in the view). The deck positions already dealt or drawn (``S_DECK`` from the
face-up cards up to ``S_TOP``, which no kernel reads again) are filled with the cards in hands and
on the pile, so ``S_DECK`` stays an order of the 16 cards; when the set-aside card was drawn (only
possible on the round's last turn, so the round is over), position 0 holds a copy of one of those
cards.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    END_NONE,
    N_CARDS,
    PRINCESS,
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
    STATE_SIZE,
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
from arena.engine.rng import rand_below, shuffle

__all__ = ["determinize", "determinized", "hidden_slots", "redeal", "unknown_slots"]


@njit(cache=True)
def unknown_slots(view: np.ndarray) -> int:
    """How many cards a determinization of ``view`` samples: the unknown hand cards of the other
    seats still in, the set-aside card unless it was drawn, and the draw pile. It equals the sum
    of the view's unseen counts for every view the engine makes."""
    me = view[V_SEAT]
    n = view[V_NPLAYERS]
    running = view[V_END] == END_NONE
    count = view[V_DECK_SIZE]
    if view[V_ASIDE_TAKEN] == 0:
        count += 1
    for s in range(n):
        if s == me or view[V_ALIVE + s] == 0:
            continue
        slots = 2 if running and s == view[V_TURN] else 1
        if view[V_KNOWN + s] != 0:
            slots -= 1
        count += slots
    return count


@njit(cache=True)
def determinize(view: np.ndarray, rng: np.ndarray, state: np.ndarray) -> None:
    """Fill ``state`` (overwritten entirely) with a hidden state consistent with ``view``.

    The unseen copies (``V_UNSEEN``) are dealt uniformly at random, with ``rng``, into the other
    seats' unknown hand cards, the set-aside card (unless drawn) and the draw pile; everything the
    seat knows is kept (see the module's documentation). The engine can play on from the result
    for every seat. No allocation: the pile's slots serve as scratch space for the shuffle.
    """
    me = view[V_SEAT]
    n = view[V_NPLAYERS]
    nfaceup = view[V_NFACEUP]
    npile = view[V_NPILE]
    running = view[V_END] == END_NONE
    top = N_CARDS - view[V_DECK_SIZE]
    taken = view[V_ASIDE_TAKEN]
    for i in range(STATE_SIZE):
        state[i] = 0
    # The unseen copies, laid out in the pile's slots (overwritten with the pile below) and
    # shuffled there.
    u = 0
    for v in range(1, PRINCESS + 1):
        for _ in range(view[V_UNSEEN + v]):
            state[S_PILE + u] = v
            u += 1
    shuffle(rng, state, S_PILE, S_PILE + u)
    k = S_PILE  # next shuffled card to place
    state[S_NPLAYERS] = n
    state[S_VARIANT] = view[V_VARIANT]
    state[S_TOP] = top
    state[S_TURN] = view[V_TURN]
    state[S_END] = view[V_END]
    state[S_WINNERS] = view[V_WINNERS]
    state[S_NFACEUP] = nfaceup
    state[S_NPILE] = npile
    state[S_ASIDE_TAKEN] = taken
    # Hands: the seat's own, known cards, then the shuffled copies in the unknown slots.
    for s in range(n):
        state[S_ALIVE + s] = view[V_ALIVE + s]
        state[S_PROT + s] = view[V_PROT + s]
        state[S_DTOTAL + s] = view[V_DTOTAL + s]
        h = S_HAND + 2 * s
        if s == me:
            state[h] = view[V_HAND]
            state[h + 1] = view[V_HAND + 1]
            continue
        if view[V_ALIVE + s] == 0:
            continue
        slot = 0
        known = view[V_KNOWN + s]
        if known != 0:
            state[h] = known
            slot = 1
        last = 1 if running and s == view[V_TURN] else 0
        while slot <= last:
            state[h + slot] = state[k]
            k += 1
            slot += 1
    # The set-aside card and the draw pile.
    if taken == 0:
        state[S_DECK] = state[k]
        k += 1
    for i in range(top, N_CARDS):
        state[S_DECK + i] = state[k]
        k += 1
    # The face-up cards, and the positions already dealt or drawn: the hands, then the pile.
    for i in range(nfaceup):
        state[S_DECK + 1 + i] = view[V_FACEUP + i]
    d = 1 + nfaceup
    aside_missing = taken != 0
    for s in range(n):
        for slot in range(2):
            c = state[S_HAND + 2 * s + slot]
            if c == 0:
                continue
            if aside_missing:
                state[S_DECK] = c  # the drawn set-aside card: a copy of a card in hand
                aside_missing = False
            elif d < top:
                state[S_DECK + d] = c
                d += 1
    for i in range(npile):
        c = view[V_PILE + i]
        state[S_PILE + i] = c
        if d < top:
            state[S_DECK + d] = c & 15
            d += 1
    for i in range(npile, N_CARDS):
        state[S_PILE + i] = 0
    # Knowledge: the seat's own row, and the others' knowledge of its card.
    for s in range(n):
        if s == me:
            continue
        state[S_KNOW + me * 4 + s] = view[V_KNOWN + s]
        by = view[V_KNOWN_BY + s]
        state[S_KNOW + s * 4 + me] = by
        state[S_AWARE + me * 4 + s] = by


@njit(cache=True)
def hidden_slots(view: np.ndarray, out: np.ndarray) -> int:
    """Write into ``out`` (at least 16 ints) the state indices whose cards :func:`determinize`
    samples for ``view``, in the order it fills them (the other seats' unknown hand cards, the
    set-aside card unless drawn, the draw pile); return how many (:func:`unknown_slots`)."""
    me = view[V_SEAT]
    running = view[V_END] == END_NONE
    k = 0
    for s in range(view[V_NPLAYERS]):
        if s == me or view[V_ALIVE + s] == 0:
            continue
        slot = 1 if view[V_KNOWN + s] != 0 else 0
        last = 1 if running and s == view[V_TURN] else 0
        while slot <= last:
            out[k] = S_HAND + 2 * s + slot
            k += 1
            slot += 1
    if view[V_ASIDE_TAKEN] == 0:
        out[k] = S_DECK
        k += 1
    for i in range(N_CARDS - view[V_DECK_SIZE], N_CARDS):
        out[k] = S_DECK + i
        k += 1
    return k


@njit(cache=True)
def redeal(state: np.ndarray, slots: np.ndarray, nslots: int, rng: np.ndarray) -> None:
    """Shuffle the cards at ``state[slots[:nslots]]`` among those slots (Fisher-Yates).

    When ``state`` is a determinization of a view and ``slots`` its :func:`hidden_slots`, the
    result is a fresh determinization of the same view, as uniform and as independent of the
    first as a new call of :func:`determinize` (the unseen copies are the same multiset; only
    their places are drawn), at the cost of a shuffle. The deck positions already dealt (never
    read by the engine) keep the cards they had.
    """
    for i in range(nslots - 1, 0, -1):
        j = rand_below(rng, i + 1)
        a = slots[i]
        b = slots[j]
        t = state[a]
        state[a] = state[b]
        state[b] = t


def determinized(view: np.ndarray, seed: int) -> np.ndarray:
    """A new engine state sampled from ``view`` with a generator seeded with ``seed`` (the Python
    face of :func:`determinize`, for tests and exploration)."""
    from arena.engine.rng import new_rng

    view = np.ascontiguousarray(view, dtype=np.int32)
    state = np.zeros(STATE_SIZE, dtype=np.int32)
    determinize(view, new_rng(seed), state)
    return state
