"""``riskmatrix``: the risk-matrix player of Wambosa's LuaLoveLetter README.

Every card has a *perk* with an *ideal matrix*; the situation, seen from the player towards one
target, is a *target matrix* of the same shape. Both are pivoted as in the README: three rows
(wins, hand bit mask, discard count) of two columns (the player, the target). The risk of playing
a card at a target is the README's ``computeRisk`` of the target's matrix against the card's ideal
matrix; every legal (card, target) pair is scored and the lowest risk is played, ties going to the
pair generated first (the player's held card before the card it drew, itself before the other
seats, the other seats in turn order). docs/bots.md gives every interpretation choice.

Hand masks give card value ``v`` the bit ``1 << (v - 1)`` (Guard 1 ... Princess 128), as the
README's deck ``[128, 64, 32, 16, 16, 8, 8, 4, 4, 2, 2, 1, 1, 1, 1, 1]``.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    GUARD,
    PRIEST,
    V_HAND,
    V_KNOWN,
    V_NPILE,
    V_NPLAYERS,
    V_SEAT,
)
from bots.policy import PolicyInfo
from bots.views import (
    find_action,
    most_unseen_guess,
    random_unseen_card,
    seat_discard_count,
    targetable,
)

BOT = PolicyInfo(
    name="riskmatrix",
    description=(
        "Wambosa's LuaLoveLetter: the play whose ideal matrix is closest to the target matrix"
    ),
    order=50,
)

#: The README's ideal matrix of each card's perk (index: card value; 0 unused), pivoted:
#: rows wins, hand mask, discard count; columns the player, the target.
IDEAL = np.array(
    [
        [[0, 0], [0, 0], [0, 0]],  # (no card)
        [[-1, 2], [128, 32], [3, 8]],  # Guard: accuse
        [[2, -1], [53, 127], [-1, -1]],  # Priest: spy
        [[2, -1], [240, 15], [3, 8]],  # Baron: debate
        [[0, 0], [192, 0], [-1, -1]],  # Handmaid: protect
        [[0, 2], [99, 224], [3, 8]],  # Prince: policy
        [[2, -1], [6, 208], [3, 8]],  # King: mandate
        [[2, 0], [48, 49], [0, 0]],  # Countess: subvert
        [[3, -1], [0, 0], [4, 16]],  # Princess: favor
    ],
    dtype=np.int64,
)
IDEAL.setflags(write=False)

#: Whom each card's perk may target (the README's ``t``): 1 the player itself, 2 another player,
#: 3 either (index: card value).
PERK_TARGETS = np.array([0, 2, 2, 2, 1, 3, 2, 1, 1], dtype=np.int64)
PERK_TARGETS.setflags(write=False)

#: ``computeRisk``'s starting value ("inherent risk").
INHERENT_RISK = 10
#: What a matching hand column takes off the risk (``bitAnd[i] && -2``).
IMPACT = 2
#: Above any risk the policy can compute.
_NO_RISK = 1 << 30


@njit(cache=True)
def card_mask(card: int) -> int:
    """The README's bit for card value ``card`` (0 for no card)."""
    if card <= 0:
        return 0
    return 1 << (card - 1)


@njit(cache=True)
def _kept(target: int, ideal: int) -> int:
    """A target entry after ``computeRisk``'s mask: zero where the ideal entry is zero."""
    if target != 0 and ideal != 0:
        return target
    return 0


@njit(cache=True)
def matrix_risk(
    ideal: np.ndarray,
    wins_self: int,
    wins_target: int,
    hand_self: int,
    hand_target: int,
    discards_self: int,
    discards_target: int,
) -> int:
    """The README's ``computeRisk`` of a target matrix (given entry by entry) against ``ideal``
    (3 x 2: wins, hand mask, discard count; columns the player, the target).

    Target entries are zeroed where the ideal is zero; the risk is 10, plus the absolute
    differences of the wins and of the discard counts, minus 2 for each hand column whose masks
    share a bit.
    """
    risk = INHERENT_RISK
    risk += abs(_kept(wins_self, ideal[0, 0]) - ideal[0, 0])
    risk += abs(_kept(wins_target, ideal[0, 1]) - ideal[0, 1])
    risk += abs(_kept(discards_self, ideal[2, 0]) - ideal[2, 0])
    risk += abs(_kept(discards_target, ideal[2, 1]) - ideal[2, 1])
    if hand_self & ideal[1, 0] != 0:
        risk -= IMPACT
    if hand_target & ideal[1, 1] != 0:
        risk -= IMPACT
    return risk


@njit(cache=True)
def perk_risk(
    card: int, hand_self: int, hand_target: int, discards_self: int, discards_target: int
) -> int:
    """The risk of playing ``card`` at a target, both players with no wins (a view holds no
    tokens): ``matrix_risk`` against the card's ideal matrix."""
    return matrix_risk(IDEAL[card], 0, 0, hand_self, hand_target, discards_self, discards_target)


@njit(cache=True)
def _speculate(view: np.ndarray, rng: np.ndarray, seat: int) -> int:
    """The card the player puts in ``seat``'s column: the one it knows that seat holds, else the
    README's ``speculate``, a copy drawn at random among those it has not seen."""
    known = view[V_KNOWN + seat]
    if known != 0:
        return known
    return random_unseen_card(view, rng, GUARD)


@njit(cache=True)
def riskmatrix_policy(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
) -> int:
    """The risk-matrix player's choice among ``legal[:nlegal]``: the legal (card, target) pair of
    lowest risk, the first generated on a tie; a Guard names the card in its target's column
    (another unseen card, drawn at random, when that card is a Guard)."""
    if nlegal == 1:
        return legal[0]
    me = view[V_SEAT]
    n = view[V_NPLAYERS]
    c0 = view[V_HAND]
    c1 = view[V_HAND + 1]
    hand = card_mask(c0) | card_mask(c1)
    mine = seat_discard_count(view, me)
    theirs = view[V_NPILE] - mine
    # One target matrix per other seat that can be targeted: its card, known or speculated,
    # 4 bits per seat.
    cards = 0
    for i in range(1, n):
        s = (me + i) % n
        if targetable(view, s):
            cards |= _speculate(view, rng, s) << (4 * s)
    best = -1
    best_risk = _NO_RISK
    best_target = -1
    for slot in range(2):
        card = c0 if slot == 0 else c1
        if slot == 1 and c1 == c0:
            break
        # A play without a target (a perk for the player alone, or every other seat protected)
        # is scored against the player's own matrix.
        a = find_action(legal, nlegal, card, -1, 0)
        if a >= 0:
            r = perk_risk(card, hand, hand, mine, theirs)
            if r < best_risk:
                best, best_risk, best_target = a, r, -1
            continue
        if PERK_TARGETS[card] & 1 != 0:
            a = find_action(legal, nlegal, card, me, 0)
            if a >= 0:
                r = perk_risk(card, hand, hand, mine, theirs)
                if r < best_risk:
                    best, best_risk, best_target = a, r, me
        if PERK_TARGETS[card] & 2 != 0:
            for i in range(1, n):
                s = (me + i) % n
                a = find_action(legal, nlegal, card, s, 0)
                if a < 0:
                    continue
                r = perk_risk(card, hand, card_mask((cards >> (4 * s)) & 15), mine, theirs)
                if r < best_risk:
                    best, best_risk, best_target = a, r, s
    if best < 0:  # not reached: every legal card is scored above
        return legal[0]
    if best & 15 == GUARD and best_target >= 0:
        guess = (cards >> (4 * best_target)) & 15
        if guess <= GUARD:
            guess = random_unseen_card(view, rng, PRIEST)
            if guess == 0:
                guess = most_unseen_guess(view)
        a = find_action(legal, nlegal, GUARD, best_target, guess)
        if a >= 0:
            return a
    return best


__all__ = [
    "IDEAL",
    "IMPACT",
    "INHERENT_RISK",
    "PERK_TARGETS",
    "card_mask",
    "matrix_risk",
    "perk_risk",
    "riskmatrix_policy",
]
