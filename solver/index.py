"""The dense index of the solver's table: one slot per argument tuple of f(b1, b2, c, A, maid,
known, p) (Huibers 2016, section 4.2, without the slots that can never hold a hand).

The index is row-major over ``[b12][c][a1]...[a8][maid][known][p]``, the order of the thesis's
``Chance`` array, where ``b12`` numbers the 36 pairs ``b1 <= b2`` (``(1,1), (1,2), ..., (1,8),
(2,2), ..., (8,8)``) and ``a1 .. a8`` have the radices ``6, 3, 3, 3, 3, 2, 2, 2`` (one more than the
copies of each card): 36 * 9 * 3888 * 2 * 2 * 3 = 15,116,544 slots.
"""

from __future__ import annotations

import numpy as np

import arena.engine  # noqa: F401 - points numba's cache at this code version before any kernel
from arena.engine.jit import njit
from arena.engine.layout import CARD_COUNTS

#: Hands ``b1 <= b2``.
N_PAIRS = 36
#: Values of the mixed-radix index of ``A``.
N_A = 3888
#: Slots in the table.
N_STATES = N_PAIRS * 9 * N_A * 2 * 2 * 3

#: Copies of each card value in the deck (index 0 unused).
COUNTS = CARD_COUNTS.astype(np.int64)

#: Weight of ``a[v]`` in the mixed-radix index of ``A`` (``a1`` most significant).
A_WEIGHT = np.array([0, 648, 216, 72, 24, 8, 4, 2, 1], dtype=np.int64)

#: Strides of the dense index: ``index = b12*S_B12 + c*S_C + a_index*S_A + maid*6 + known*3 + p``.
S_A = 12
S_C = N_A * S_A
S_B12 = 9 * S_C


def _pairs() -> tuple[np.ndarray, np.ndarray]:
    pair = np.full((9, 9), -1, dtype=np.int64)
    cards = np.zeros((N_PAIRS, 2), dtype=np.int64)
    k = 0
    for b1 in range(1, 9):
        for b2 in range(b1, 9):
            pair[b1, b2] = k
            pair[b2, b1] = k
            cards[k] = (b1, b2)
            k += 1
    return pair, cards


#: ``PAIR_INDEX[x, y]``: the ``b12`` of the hand ``{x, y}`` (either order).
#: ``PAIR_CARDS[b12]``: the hand ``(b1, b2)`` with ``b1 <= b2``.
PAIR_INDEX, PAIR_CARDS = _pairs()


@njit(cache=True)
def a_index(a: np.ndarray) -> int:
    """The mixed-radix index of the counts ``a[1..8]`` (``a[0]`` is ignored)."""
    k = 0
    for v in range(1, 9):
        k += a[v] * A_WEIGHT[v]
    return k


@njit(cache=True)
def state_index(b1: int, b2: int, c: int, a: np.ndarray, maid: int, known: int, p: int) -> int:
    """The table slot of f(b1, b2, c, A, maid, known, p).

    ``a`` holds the counts of ``A`` in ``a[1..8]`` (``a[0]`` is ignored); ``c`` is 0 or a card
    value; ``maid`` and ``known`` are 0 or 1; ``p`` is 0, 1 (the opponent knows ``b1``) or 2 (it
    knows ``b2``). The two cards may be given in either order; ``p`` refers to the sorted hand.
    The arguments are trusted (no range checks).
    """
    return PAIR_INDEX[b1, b2] * S_B12 + c * S_C + a_index(a) * S_A + maid * 6 + known * 3 + p


def _digits() -> np.ndarray:
    digits = np.zeros((N_A, 10), dtype=np.int64)
    for k in range(N_A):
        rest = k
        for v in range(8, 0, -1):
            radix = int(COUNTS[v]) + 1
            digits[k, v] = rest % radix
            rest //= radix
        digits[k, 9] = digits[k, 1:9].sum()
    return digits


#: ``A_DIGITS[a_index]``: the counts ``a[1..8]`` in columns 1-8 and their sum n in column 9.
A_DIGITS = _digits()


@njit(cache=True)
def decode(index: int, a: np.ndarray) -> tuple[int, int, int, int, int, int]:
    """Split a slot into ``(b12, c, a_index, maid, known, p)`` and write its counts into
    ``a[1..8]`` (``a[0] = 0``)."""
    p = index % 3
    rest = index // 3
    known = rest % 2
    rest //= 2
    maid = rest % 2
    rest //= 2
    aidx = rest % N_A
    rest //= N_A
    c = rest % 9
    b12 = rest // 9
    for v in range(9):
        a[v] = A_DIGITS[aidx, v]
    return b12, c, aidx, maid, known, p


def opening_counts(b1: int, b2: int) -> np.ndarray:
    """``A`` at the first decision of a ``huibers`` round for the hand ``(b1, b2)``: the 14 other
    cards (length 9, ``a[0] = 0``)."""
    a = COUNTS.copy()
    a[b1] -= 1
    a[b2] -= 1
    if a[b1] < 0 or a[b2] < 0:
        raise ValueError(f"the deck does not hold the hand ({b1}, {b2})")
    return a


def opening_hands() -> list[tuple[int, int]]:
    """Every hand ``b1 <= b2`` the deck can deal: 33 (no two Kings, Countesses or Princesses)."""
    return [(b1, b2) for b1 in range(1, 9) for b2 in range(b1, 9) if b1 != b2 or COUNTS[b1] >= 2]
