"""The driver: from a set of root slots, find every slot the formulas need (:func:`discover`,
top-down by the number of remaining cards n), then compute them (:func:`compute`, bottom-up from
n = 2, so every value a formula reads is already there).

Slots with ``known = 0`` are handled by *group*: every ``c`` of one ``(b1, b2, A, maid, p)``
shares X's belief, its choice and the per-card r values, so a group is computed once and fills
``c = 0`` (the value on X's belief) and every ``c`` in A (the value when Y truly holds ``c``).
Slots with ``known = 1`` are computed one by one (only ``i = c`` counts).
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import COUNTESS
from solver.index import A_DIGITS, N_A, N_STATES, PAIR_CARDS, S_C, decode
from solver.model import (
    COMPUTE,
    DISCOVER,
    EPS,
    forced_countess,
    play_card,
    policy_code,
)

#: Most successor slots one key can list (two cards, a Prince's 2 * 8 * 8 * 8 at most).
MAX_OUT = 4096
#: The computed bit of a policy entry.
COMPUTED = 1024


@njit(cache=True)
def _level(idx: int) -> int:
    """n of the slot ``idx``."""
    return A_DIGITS[(idx // 12) % N_A, 9]


@njit(cache=True)
def _key(idx: int) -> int:
    """The key that computes slot ``idx``: the slot itself if ``known``, else its group (c = 0)."""
    if (idx // 3) % 2 == 1:
        return idx
    c = (idx // S_C) % 9
    return idx - c * S_C


@njit(cache=True, inline="always")
def _unit(value: float) -> float:
    """``value`` clipped to [0, 1] (sums of rounded terms may stray by an ulp)."""
    return min(max(value, 0.0), 1.0)


@njit(cache=True)
def _evaluate(
    key: int,
    mode: int,
    chance: np.ndarray,
    policy: np.ndarray,
    out: np.ndarray,
    nout: np.ndarray,
    a: np.ndarray,
    weight: np.ndarray,
    R: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """Discover the successors of ``key`` or compute its slots; returns the slots written."""
    b12, c, aidx, maid, known, p = decode(key, a)
    b1 = PAIR_CARDS[b12, 0]
    b2 = PAIR_CARDS[b12, 1]
    n = A_DIGITS[aidx, 9]
    for v in range(9):
        weight[v] = 0.0
    if known:
        weight[c] = 1.0
        wsum = 1.0
    else:
        for v in range(1, 9):
            weight[v] = a[v]
        wsum = float(n)
    y_knows = b1 if p == 1 else (b2 if p == 2 else 0)

    if forced_countess(b1, b2):
        ncards = 1
        first = COUNTESS
        second = b1
    else:
        ncards = 1 if b1 == b2 else 2
        first = b1
        second = b2
    g0 = g1 = -1.0
    guess0 = guess1 = target0 = target1 = 0
    for t in range(ncards):
        play = first if t == 0 else second
        other = second if t == 0 else first
        g, guess, target = play_card(
            play, other, weight, wsum, a, aidx, n, maid, known, y_knows,
            mode, chance, out, nout, R[t], scratch,
        )  # fmt: skip
        if t == 0:
            g0, guess0, target0 = g, guess, target
        else:
            g1, guess1, target1 = g, guess, target
    if mode == DISCOVER:
        return 0
    pick = 1 if g1 > g0 + EPS else 0
    gain = _unit(g1 if pick else g0)
    if pick:
        code = policy_code(second, guess1, target1)
    else:
        code = policy_code(first, guess0, target0)
    if known:
        chance[key] = gain
        policy[key] = code
        return 1
    # The group: c = 0 holds the value on X's belief; each c in A the value when Y holds c.
    tie = ncards == 2 and abs(g1 - g0) <= EPS
    chance[key] = gain
    policy[key] = code
    written = 1
    for cc in range(1, 9):
        if a[cc] == 0:
            continue
        value = R[pick, cc]
        if tie and abs(R[0, cc] - R[1, cc]) > EPS:
            value = gain
        chance[key + cc * S_C] = _unit(value)
        policy[key + cc * S_C] = code
        written += 1
    return written


@njit(cache=True)
def _radix_sort(values: np.ndarray, tmp: np.ndarray) -> None:
    """Sort ``values`` (slots: below 2**24) in place with two passes of 12 bits."""
    size = values.shape[0]
    for shift in (0, 12):
        counts = np.zeros(4097, dtype=np.int64)
        for t in range(size):
            counts[((values[t] >> shift) & 4095) + 1] += 1
        for b in range(4096):
            counts[b + 1] += counts[b]
        for t in range(size):
            b = (values[t] >> shift) & 4095
            tmp[counts[b]] = values[t]
            counts[b] += 1
        values[:] = tmp[:size]


@njit(cache=True, inline="always")
def _test_and_set(bits: np.ndarray, idx: int) -> bool:
    """Set bit ``idx`` of the bitset ``bits``; return whether it was set before."""
    word = idx >> 6
    mask = np.uint64(1) << np.uint64(idx & 63)
    if bits[word] & mask:
        return True
    bits[word] |= mask
    return False


@njit(cache=True)
def discover(roots: np.ndarray, count_needed: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """Every key the formulas need from ``roots``, top-down by the number of remaining cards.

    Returns ``(order, start, needed)``: the keys of level ``n`` (sorted) are
    ``order[start[n]:start[n + 1]]``; ``needed`` counts the distinct slots read by some formula
    or given as roots (only when ``count_needed``, else 0).
    """
    words = (N_STATES >> 6) + 1
    queued = np.zeros(words, dtype=np.uint64)
    needed_bits = np.zeros(words if count_needed else 1, dtype=np.uint64)
    cap = 1 << 20
    found = np.empty(cap, dtype=np.int64)  # keys in the order found
    order = np.empty(cap, dtype=np.int64)  # keys by level, from the top level down
    count = 0
    done = 0
    top = np.zeros(17, dtype=np.int64)  # top[lv]: where level lv's keys begin in ``order``
    out = np.empty(MAX_OUT, dtype=np.int64)
    nout = np.zeros(1, dtype=np.int64)
    a = np.zeros(9, dtype=np.int64)
    weight = np.zeros(9, dtype=np.float64)
    R = np.zeros((2, 9), dtype=np.float64)
    scratch = np.zeros(9, dtype=np.float64)
    dummy = np.zeros(1, dtype=np.float64)
    dummy_policy = np.zeros(1, dtype=np.int16)
    tmp = np.empty(1 << 16, dtype=np.int64)
    needed = 0
    for r in range(roots.shape[0]):
        idx = roots[r]
        if count_needed and not _test_and_set(needed_bits, idx):
            needed += 1
        key = _key(idx)
        if not _test_and_set(queued, key):
            found[count] = key
            count += 1
    nroots = count
    # Keys of level lv are found among the roots or while expanding levels lv + 1 and lv + 2.
    found_from = np.zeros(17, dtype=np.int64)
    for lv in range(15, 1, -1):
        found_from[lv] = count
        lo = found_from[lv + 2] if lv + 2 <= 15 else nroots
        size = 0
        for t in range(nroots):
            if _level(found[t]) == lv:
                size += 1
        for t in range(lo, count):
            if _level(found[t]) == lv:
                size += 1
        if done + size > order.shape[0]:
            bigger = np.empty(max(2 * order.shape[0], done + size), dtype=np.int64)
            bigger[:done] = order[:done]
            order = bigger
        top[lv] = done
        for t in range(nroots):
            if _level(found[t]) == lv:
                order[done] = found[t]
                done += 1
        for t in range(lo, count):
            if _level(found[t]) == lv:
                order[done] = found[t]
                done += 1
        if tmp.shape[0] < size:
            tmp = np.empty(max(size, 2 * tmp.shape[0]), dtype=np.int64)
        _radix_sort(order[top[lv] : done], tmp)
        if lv == 2:
            break
        for t in range(top[lv], done):
            if count + MAX_OUT > found.shape[0]:
                bigger = np.empty(2 * found.shape[0], dtype=np.int64)
                bigger[:count] = found[:count]
                found = bigger
            nout[0] = 0
            _evaluate(order[t], DISCOVER, dummy, dummy_policy, out, nout, a, weight, R, scratch)
            for u in range(nout[0]):
                idx = out[u]
                if count_needed and not _test_and_set(needed_bits, idx):
                    needed += 1
                key = _key(idx)
                if not _test_and_set(queued, key):
                    found[count] = key
                    count += 1
    # Level lv was written at order[top[lv]:top[lv - 1]] (15 first); lay them out from n = 2 up.
    top[1] = done
    flipped = np.empty(done, dtype=np.int64)
    start = np.zeros(17, dtype=np.int64)
    pos = 0
    for lv in range(0, 16):
        start[lv] = pos
        if lv >= 2:
            size = top[lv - 1] - top[lv]
            flipped[pos : pos + size] = order[top[lv] : top[lv - 1]]
            pos += size
    start[16] = pos
    return flipped, start, needed


@njit(cache=True)
def compute(order: np.ndarray, start: np.ndarray, chance: np.ndarray, policy: np.ndarray) -> int:
    """Compute the keys of ``order`` level by level from n = 2 up, writing ``chance`` and
    ``policy``; returns the slots written."""
    out = np.empty(1, dtype=np.int64)
    nout = np.zeros(1, dtype=np.int64)
    a = np.zeros(9, dtype=np.int64)
    weight = np.zeros(9, dtype=np.float64)
    R = np.zeros((2, 9), dtype=np.float64)
    scratch = np.zeros(9, dtype=np.float64)
    written = 0
    for t in range(start[0], start[16]):
        written += _evaluate(order[t], COMPUTE, chance, policy, out, nout, a, weight, R, scratch)
    return written


def solve(
    roots: np.ndarray, count_needed: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Compute every slot needed from the slots ``roots``.

    Returns ``(chance, policy, stats)``: the full-length arrays (zero where not computed) and
    ``[slots written, keys computed, distinct slots read by a formula or roots]`` (the last 0
    unless ``count_needed``).
    """
    order, start, needed = discover(np.asarray(roots, dtype=np.int64), count_needed)
    chance = np.zeros(N_STATES, dtype=np.float64)
    policy = np.zeros(N_STATES, dtype=np.int16)
    written = compute(order, start, chance, policy)
    return chance, policy, np.array([written, order.shape[0], needed])
