"""The Guard's guess by rule inside a search (Omarov et al. 2018's trees).

The paper's search trees branch on the card played: "If this move is Guard, algorithm also selects
the guess card as in knowledge based agent", and the authors' code does so for every Guard in
the tree, whoever plays it. In a determinized state every hand is visible, so a tree that
branches on the guess as well lets each Guard name the card it sees: the searcher's own Guard
looks certain to hit in every deal (its votes are then split over the guesses), and so does the
opponent's. :func:`keep_rule_guards` keeps, of the Guard actions at a target, only the one naming
:func:`rule_guess`: what the mover would guess from what it knows, never from the deal.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    CARD_COUNTS,
    GUARD,
    PRIEST,
    PRINCESS,
    S_DECK,
    S_HAND,
    S_KNOW,
    S_NFACEUP,
    S_NPILE,
    S_PILE,
)
from arena.engine.rules import action_card, action_guess, action_target


@njit(cache=True)
def counted_guess(state: np.ndarray, mover: int) -> int:
    """The non-Guard value with the most copies ``mover`` cannot account for (not in the discard
    pile, face up or in its own hand), ties to the lowest value."""
    best = PRIEST
    best_left = -1
    for v in range(PRIEST, PRINCESS + 1):
        left = CARD_COUNTS[v]
        for i in range(state[S_NPILE]):
            if state[S_PILE + i] & 15 == v:
                left -= 1
        for i in range(state[S_NFACEUP]):
            if state[S_DECK + 1 + i] == v:
                left -= 1
        for slot in range(2):
            if state[S_HAND + 2 * mover + slot] == v:
                left -= 1
        if left > best_left:
            best = v
            best_left = left
    return best


@njit(cache=True)
def rule_guess(state: np.ndarray, mover: int, target: int, counted: int) -> int:
    """The guess of ``mover``'s Guard at ``target`` in the engine state ``state``: the card the
    mover knows the target holds if it is not a Guard, else ``counted`` (:func:`counted_guess`).
    (The authors' code also counts the target's missed guesses since its last play, and breaks
    ties at random; the state keeps no guesses, and a node's action must not change between
    visits.)"""
    known = state[S_KNOW + mover * 4 + target]
    if known != 0 and known != GUARD:
        return known
    return counted


@njit(cache=True)
def keep_rule_guards(state: np.ndarray, mover: int, acts: np.ndarray, k: int) -> int:
    """Drop from ``acts[:k]`` (legal actions of ``mover``) every Guard action that does not name
    :func:`rule_guess` for its target, keeping the order; returns the new count."""
    counted = 0  # counted_guess, worked out at the first Guard that names a card
    kept = 0
    for i in range(k):
        a = acts[i]
        guess = action_guess(a)
        if action_card(a) == GUARD and guess != 0:
            if counted == 0:
                counted = counted_guess(state, mover)
            if guess != rule_guess(state, mover, action_target(a), counted):
                continue
        acts[kept] = a
        kept += 1
    return kept
