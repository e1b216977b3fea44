"""``greedy``: the greedy player of Malarczyk's thesis, section 3.2 (scoring function in 3.2.3).

Every legal play is scored by the thesis's criterion function ``F`` against the chances of the
target's card, and the best score is played. The chance that a target holds a value is the value's
share of the cards this seat has not seen (its hand, the face-up cards, every discard and the cards
it knows others hold excluded), or 1 for the card the view says it knows that target holds.

``F`` (thesis values; ``P`` the target's chances, ``DK`` the other card in hand):

- Guard naming ``g``: ``1 + P[g] + 0.08``
- Priest: ``1 + 0.07``
- Baron: ``1 - P[card > DK] + P[card < DK] + 0.06``
- Handmaid: ``1 + 0.05``
- Prince at an opponent: ``1 + P[Princess] + 0.04``; at itself: ``1 + 0.04``, but 0 when the
  other card is the Princess ("the Princess can never be discarded")
- King: ``1 + P[Princess] + P[Countess] + 0.03``
- Countess: ``10 + 0.02`` when forced (with the King or a Prince), else ``1 + 0.02``
- Princess: 0

A targeted card played without a target (every opponent protected) has no effect, so all its
chances are 0. Ties: the lower card; for one card, the target nearest in turn order after the
player (an opponent before itself for the Prince), then for the Guard the higher guess (the
thesis: "aim at the higher-numbered card"). Scores are kept as exact integers (in units of
1 / (100 * 720720), 720720 being divisible by every possible count of unseen cards), so ties are
exact. With 3-4 players each target is scored with its own chances (docs/bots.md).
"""

from __future__ import annotations

import numpy as np
from numba import types

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
    V_KNOWN,
    V_NPLAYERS,
    V_SEAT,
    V_UNSEEN,
)
from bots.policy import PolicyInfo
from bots.views import action_card, action_guess, action_target, other_card

BOT = PolicyInfo(
    name="greedy",
    description="Malarczyk 3.2: every play scored against the unseen cards",
    order=40,
)

#: A chance of 1: lcm(1..16), so ``k / n`` of ``n <= 16`` unseen cards is an exact multiple.
ONE = 720720
#: The score of a play that can never be chosen over any scored play (below the Princess's 0).
WORST = -1


@njit(cache=True)
def _unseen_total(view: np.ndarray) -> int:
    """The number of cards this seat has not seen."""
    total = 0
    for v in range(GUARD, PRINCESS + 1):
        total += view[V_UNSEEN + v]
    return total


@njit(cache=True)
def _chance(view: np.ndarray, target: int, value: int, total: int) -> int:
    """``ONE`` times the chance that ``target`` holds ``value``: certain or impossible for the
    card this seat knows it holds, else the value's share of the ``total`` unseen cards."""
    known = view[V_KNOWN + target]
    if known != 0:
        return ONE if known == value else 0
    if total <= 0:
        return 0
    return ONE // total * view[V_UNSEEN + value]


@njit(cache=True)
def greedy_score(view: np.ndarray, action: int, total: int) -> int:
    """The thesis's criterion ``F`` of the packed ``action``, times ``100 * ONE`` (exact).

    ``total`` is the number of unseen cards (the denominator of the unseen chances).
    """
    card = action_card(action)
    target = action_target(action)
    me = view[V_SEAT]
    base = 100 * ONE  # the "1 +" every score but the Princess's starts with
    if card == GUARD:
        hit = 0 if target < 0 else _chance(view, target, action_guess(action), total)
        return base + 100 * hit + 8 * ONE
    if card == PRIEST:
        return base + 7 * ONE
    if card == BARON:
        lose = 0
        win = 0
        if target >= 0:
            mine = other_card(view, BARON)
            for v in range(GUARD, PRINCESS + 1):
                if v > mine:
                    lose += _chance(view, target, v, total)
                elif v < mine:
                    win += _chance(view, target, v, total)
        return base - 100 * lose + 100 * win + 6 * ONE
    if card == HANDMAID:
        return base + 5 * ONE
    if card == PRINCE:
        if target == me:
            if other_card(view, PRINCE) == PRINCESS:
                return 0
            return base + 4 * ONE
        return base + 100 * _chance(view, target, PRINCESS, total) + 4 * ONE
    if card == KING:
        gain = 0
        if target >= 0:
            gain = _chance(view, target, PRINCESS, total) + _chance(view, target, COUNTESS, total)
        return base + 100 * gain + 3 * ONE
    if card == COUNTESS:
        mine = other_card(view, COUNTESS)
        if mine == KING or mine == PRINCE:
            return 1000 * ONE + 2 * ONE
        return base + 2 * ONE
    return 0  # the Princess


@njit(cache=True)
def _turn_rank(view: np.ndarray, target: int) -> int:
    """Tie order of a target: seats after the player in turn order first, the player itself (a
    Prince on itself) and no target last."""
    n = view[V_NPLAYERS]
    me = view[V_SEAT]
    if target < 0 or target == me:
        return n
    return (target - me + n) % n


@njit(cache=True)
def greedy_policy(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
) -> int:
    """The greedy player's choice among ``legal[:nlegal]``: the play with the highest thesis
    score; ties to the lower card, then the target nearest in turn order, then the higher guess.
    """
    total = _unseen_total(view)
    best = legal[0]
    best_score = WORST
    best_card = 0
    best_rank = 0
    best_guess = 0
    for i in range(nlegal):
        a = legal[i]
        score = greedy_score(view, a, total)
        card = action_card(a)
        rank = _turn_rank(view, action_target(a))
        guess = action_guess(a)
        better = False
        if score != best_score:
            better = score > best_score
        elif card != best_card:
            better = card < best_card
        elif rank != best_rank:
            better = rank < best_rank
        else:
            better = guess > best_guess
        if better:
            best = a
            best_score = score
            best_card = card
            best_rank = rank
            best_guess = guess
    # every policy answers an int64 (bots.policy), where numba would answer legal's int32
    return types.int64(best)
