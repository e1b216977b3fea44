"""The model of Huibers 2016, 3.2.3-3.2.4, as numba kernels: what each card does to the game and
the value of one table entry (or of one group of entries) from the values of its successors.

Every kernel runs in one of two modes. ``DISCOVER`` reads no value: each successor slot the
formula would look up is appended to ``out`` (the driver in :mod:`solver.build` queues them).
``COMPUTE`` reads the successors' values from ``F`` (already computed: they have fewer remaining
cards). One code path for both modes keeps the set of computed slots exactly the set the
formulas read.

Notation (thesis): the active player X holds ``play`` and ``other`` (it plays ``play`` and keeps
``other``); the opponent Y holds ``i``; ``a`` are the counts of A (the cards X has not seen: the
draw pile, Y's card, the set-aside card), ``n = sum(a)``, so the draw pile holds ``n - 2``.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    BARON,
    COUNTESS,
    GUARD,
    HANDMAID,
    KING,
    PRIEST,
    PRINCE,
    PRINCESS,
)
from solver.index import A_WEIGHT, PAIR_INDEX, S_A, S_B12, S_C

DISCOVER = 0
COMPUTE = 1

#: Two gains closer than this are equal (ties go to the lower card, guess, the opponent).
EPS = 1e-12


@njit(cache=True, inline="always")
def slot(x: int, y: int, c: int, aidx: int, maid: int, known: int, p: int) -> int:
    """The slot of f(x, y, c, A, maid, known, p) with A given by its index."""
    return PAIR_INDEX[x, y] * S_B12 + c * S_C + aidx * S_A + maid * 6 + known * 3 + p


@njit(cache=True, inline="always")
def showdown(mine: int, theirs: int) -> float:
    """The end of the deck: 1 if ``mine`` is higher, 0.5 for a tie, 0 if lower."""
    if mine > theirs:
        return 1.0
    if mine == theirs:
        return 0.5
    return 0.0


@njit(cache=True, inline="always")
def knows_pos(card: int, drawn: int) -> int:
    """``p`` for a player holding ``card`` and ``drawn`` whose opponent knows ``card``."""
    return 1 if card <= drawn else 2


@njit(cache=True, inline="always")
def _look(idx: int, mode: int, F: np.ndarray, out: np.ndarray, nout: np.ndarray) -> float:
    """``F[idx]`` in COMPUTE mode; in DISCOVER mode record ``idx`` and return 0."""
    if mode == COMPUTE:
        return F[idx]
    out[nout[0]] = idx
    nout[0] += 1
    return 0.0


@njit(cache=True, inline="always")
def after_turn(
    other: int,
    i: int,
    a: np.ndarray,
    aidx: int,
    n: int,
    maid_next: int,
    known_next: int,
    sees_i: int,
    mode: int,
    F: np.ndarray,
    out: np.ndarray,
    nout: np.ndarray,
) -> float:
    """X's chance after a play that leaves X with ``other`` and Y with ``i`` (no direct result).

    The last turn (``n == 2``: the draw pile is empty) ends in a showdown. Otherwise Y draws ``j``
    from the ``n - 1`` cards of A other than ``i`` and moves from f(i, j, other, A - i - j + other,
    maid_next, known_next, p'), where ``p'`` says which of Y's cards X knows (``i`` when
    ``sees_i``).
    """
    if n == 2:
        return showdown(other, i)
    base = aidx - A_WEIGHT[i] + A_WEIGHT[other]
    total = 0.0
    for j in range(1, 9):
        q = a[j] - (1 if j == i else 0)
        if q <= 0:
            continue
        p_next = knows_pos(i, j) if sees_i else 0
        idx = slot(i, j, other, base - A_WEIGHT[j], maid_next, known_next, p_next)
        total += q * (1.0 - _look(idx, mode, F, out, nout))
    return total / (n - 1)


@njit(cache=True, inline="always")
def after_king(
    other: int,
    i: int,
    a: np.ndarray,
    aidx: int,
    n: int,
    mode: int,
    F: np.ndarray,
    out: np.ndarray,
    nout: np.ndarray,
) -> float:
    """X's chance after a King: X now holds ``i``, Y holds ``other``; each knows the other's card.

    Y draws ``j`` and moves from f(other, j, i, A - j, 0, 1, p') with ``p'`` pointing at
    ``other`` (X gave it). On the last turn, a showdown of ``i`` against ``other``.
    """
    if n == 2:
        return showdown(i, other)
    total = 0.0
    for j in range(1, 9):
        q = a[j] - (1 if j == i else 0)
        if q <= 0:
            continue
        idx = slot(other, j, i, aidx - A_WEIGHT[j], 0, 1, knows_pos(other, j))
        total += q * (1.0 - _look(idx, mode, F, out, nout))
    return total / (n - 1)


@njit(cache=True, inline="always")
def after_prince_opponent(
    other: int,
    i: int,
    a: np.ndarray,
    aidx: int,
    n: int,
    known_next: int,
    mode: int,
    F: np.ndarray,
    out: np.ndarray,
    nout: np.ndarray,
) -> float:
    """X's chance after a Prince on Y, who discards ``i`` (not the Princess) and draws ``k``.

    ``k`` is any of the ``n - 1`` cards of A other than ``i`` (the set-aside card when the draw
    pile is empty). When that empties the draw pile (``n <= 3``) the round ends in a showdown of
    ``other`` against ``k``; otherwise Y draws ``j`` and moves from f(k, j, other, A - i - k - j +
    other, 0, known_next, 0) (X no longer knows Y's card).
    """
    total = 0.0
    for k in range(1, 9):
        m = a[k] - (1 if k == i else 0)
        if m <= 0:
            continue
        if n <= 3:
            total += m * showdown(other, k)
            continue
        base = aidx - A_WEIGHT[i] - A_WEIGHT[k] + A_WEIGHT[other]
        inner = 0.0
        for j in range(1, 9):
            q = a[j] - (1 if j == i else 0) - (1 if j == k else 0)
            if q <= 0:
                continue
            idx = slot(k, j, other, base - A_WEIGHT[j], 0, known_next, 0)
            inner += q * (1.0 - _look(idx, mode, F, out, nout))
        total += m * inner / (n - 2)
    return total / (n - 1)


@njit(cache=True, inline="always")
def after_prince_self(
    i: int,
    a: np.ndarray,
    aidx: int,
    n: int,
    sees_i: int,
    mode: int,
    F: np.ndarray,
    out: np.ndarray,
    nout: np.ndarray,
) -> float:
    """X's chance after a Prince on itself: X discarded its other card (not the Princess) and
    draws ``k``; Y holds ``i``.

    When that empties the draw pile (``n <= 3``) the round ends in a showdown of ``k`` against
    ``i``; otherwise Y draws ``j`` and moves from f(i, j, k, A - i - j, 0, 0, p') (Y does not know
    X's new card; X still knows ``i`` when ``sees_i``).
    """
    total = 0.0
    for k in range(1, 9):
        m = a[k] - (1 if k == i else 0)
        if m <= 0:
            continue
        if n <= 3:
            total += m * showdown(k, i)
            continue
        base = aidx - A_WEIGHT[i]
        inner = 0.0
        for j in range(1, 9):
            q = a[j] - (1 if j == i else 0) - (1 if j == k else 0)
            if q <= 0:
                continue
            p_next = knows_pos(i, j) if sees_i else 0
            idx = slot(i, j, k, base - A_WEIGHT[j], 0, 0, p_next)
            inner += q * (1.0 - _look(idx, mode, F, out, nout))
        total += m * inner / (n - 2)
    return total / (n - 1)


@njit(cache=True, inline="always")
def play_card(
    play: int,
    other: int,
    weight: np.ndarray,
    wsum: float,
    a: np.ndarray,
    aidx: int,
    n: int,
    maid: int,
    known: int,
    y_knows: int,
    mode: int,
    F: np.ndarray,
    out: np.ndarray,
    nout: np.ndarray,
    R: np.ndarray,
    scratch: np.ndarray,
) -> tuple[float, int, int]:
    """r for playing ``play`` (keeping ``other``) against every card ``i`` Y may hold.

    X's belief that Y holds ``i`` is ``weight[i] / wsum`` (``weight`` holds the counts of A and
    ``wsum = n``, or 1 for the known card and ``wsum = 1``); r is written into ``R[i]``
    wherever ``weight[i] > 0``. ``y_knows`` is the value of X's card Y
    knows (0 if none). Returns ``(gain, guess, target)``: the gain of the best Guard guess or
    Prince target (lowest guess, the opponent first on ties), or 0 for other cards.
    """
    # Y keeps knowing X's card if it knew the one X keeps (a card of the played value played
    # from a pair loses it, as in the engine's bookkeeping).
    known_next = 1 if y_knows != 0 and y_knows != play else 0
    if play == PRINCESS:
        for i in range(1, 9):
            R[i] = 0.0
        return 0.0, 0, 0
    if play == PRINCE:
        # Target 2: X itself; target 1: the opponent (not while it is protected).
        self_gain = 0.0
        opp_gain = 0.0
        for i in range(1, 9):
            if weight[i] <= 0.0:
                continue
            if other == PRINCESS:
                scratch[i] = 0.0
            else:
                scratch[i] = after_prince_self(i, a, aidx, n, known, mode, F, out, nout)
            self_gain += weight[i] * scratch[i]
            if maid:
                continue
            if i == PRINCESS:
                R[i] = 1.0
            else:
                R[i] = after_prince_opponent(other, i, a, aidx, n, known_next, mode, F, out, nout)
            opp_gain += weight[i] * R[i]
        self_gain /= wsum
        opp_gain /= wsum
        if not maid and opp_gain >= self_gain - EPS:
            return opp_gain, 0, 1
        for i in range(1, 9):
            R[i] = scratch[i]
        return self_gain, 0, 2
    # Y is protected: a Guard, Priest, Baron or King is played without effect.
    effect = play
    if maid and (play == GUARD or play == PRIEST or play == BARON or play == KING):
        effect = 0
    gain = 0.0
    for i in range(1, 9):
        if weight[i] <= 0.0:
            continue
        if effect == BARON and other != i:
            r = 1.0 if other > i else 0.0
        elif effect == KING:
            r = after_king(other, i, a, aidx, n, mode, F, out, nout)
        else:
            maid_next = 1 if effect == HANDMAID else 0
            # A Baron tie: each now knows the other's card. A Priest: X sees Y's card.
            kn = 1 if effect == BARON else known_next
            sees = 1 if effect == PRIEST or effect == BARON else known
            r = after_turn(other, i, a, aidx, n, maid_next, kn, sees, mode, F, out, nout)
        R[i] = r
        gain += weight[i] * r
    gain /= wsum
    if effect != GUARD:
        return gain, 0, 0
    # The Guard: a right guess wins at once; the lowest of the best guesses.
    best = -1.0
    guess = 2
    for g in range(2, 9):
        extra = weight[g] * (1.0 - R[g]) / wsum if weight[g] > 0.0 else 0.0
        if extra > best + EPS:
            best = extra
            guess = g
    if weight[guess] > 0.0:
        R[guess] = 1.0
    return gain + best, guess, 0


@njit(cache=True, inline="always")
def policy_code(card: int, guess: int, target: int) -> int:
    """The policy entry: bits 0-3 the card, 4-7 the guess, 8-9 the target, bit 10 computed."""
    return card | (guess << 4) | (target << 8) | 1024


@njit(cache=True)
def forced_countess(b1: int, b2: int) -> bool:
    """Whether the hand must play the Countess (she is held with the King or a Prince)."""
    return b2 == COUNTESS and (b1 == PRINCE or b1 == KING)
