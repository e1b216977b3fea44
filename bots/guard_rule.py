"""The Guard's guess by rule inside a search (Omarov et al. 2018's trees).

The paper's search trees branch on the card played: "If this move is Guard, algorithm also selects
the guess card as in knowledge based agent", and the authors' code does so for every Guard in
the tree, whoever plays it. In a determinized state every hand is visible, so a tree that
branches on the guess as well lets each Guard name the card it sees: the searcher's own Guard
looks certain to hit in every deal (its votes are then split over the guesses), and so does the
opponent's. Two readings of "as in knowledge based agent" are kept (:data:`GUARDS_RULE`,
:data:`GUARDS_DRAWN`):

- :func:`keep_rule_guards` keeps, of the Guard actions at a target, only the one naming
  :func:`rule_guess`: what the mover would guess from what it knows, never from the deal; a node
  names one guess for good.
- :func:`key_guards` keeps one action per Guard target with no guess (a *key*, as the authors'
  trees key a node by its card), and :func:`drawn_action` names the guess each time the key is
  played, drawn as the authors' code draws it (:func:`draw_guess`): the card the mover knows the
  target holds, else a Prince (or the King) right after the target played the Countess, else one
  of the values with the most copies the mover cannot account for, at random. The same draw from
  a seat's view (:func:`played_guess`) names the guess of the Guard the search chose.
"""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    COUNTESS,
    GUARD,
    KING,
    PRIEST,
    PRINCE,
    PRINCESS,
    S_DECK,
    S_HAND,
    S_KNOW,
    S_NFACEUP,
    S_NPILE,
    S_PILE,
    V_KNOWN,
    V_NPILE,
    V_PILE,
)
from arena.engine.rules import action_card, action_guess, action_target, pack_action
from bots.knowledge import code_guess, unaccounted
from bots.views import count_unaccounted

#: How a search tree's Guards guess (the ``guards`` argument of
#: :func:`bots.mcts_tree.descend`): every guess is an action of its own,
GUARDS_WHOLE = 0
#: ... one guess per target, :func:`rule_guess`, fixed in the node,
GUARDS_RULE = 1
#: ... one key per target, the guess drawn each time it is played (:func:`drawn_action`).
GUARDS_DRAWN = 2


@njit(cache=True)
def last_played(cards: np.ndarray, pile: int, npile: int, seat: int) -> int:
    """The card ``seat`` put last on the discard pile ``cards[pile:pile + npile]``, or 0 (its
    last play, or the card a Prince made it discard: the pile does not tell them apart, and the
    Countess inference reads both as played)."""
    for i in range(npile - 1, -1, -1):
        if cards[pile + i] >> 4 == seat:
            return cards[pile + i] & 15
    return 0


@njit(cache=True)
def state_unaccounted(state: np.ndarray, mover: int) -> np.ndarray:
    """:func:`bots.views.count_unaccounted` for ``mover`` in the engine state ``state`` (a new
    array)."""
    left = np.empty(PRINCESS + 1, dtype=np.int32)
    count_unaccounted(
        state, S_PILE, state[S_NPILE], S_DECK + 1, state[S_NFACEUP], S_HAND + 2 * mover, left
    )
    return left


@njit(cache=True)
def counted_guess(state: np.ndarray, mover: int) -> int:
    """The non-Guard value with the most copies ``mover`` cannot account for (not in the discard
    pile, face up or in its own hand), ties to the lowest value."""
    left = state_unaccounted(state, mover)
    best = PRIEST
    for v in range(PRIEST + 1, PRINCESS + 1):
        if left[v] > left[best]:
            best = v
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


@njit(cache=True)
def draw_guess(known: int, last: int, left: np.ndarray, rng: np.ndarray) -> int:
    """The authors' Guard guess: ``known`` (the card the mover knows the target holds) if it is
    not a Guard; else, when the target's last play ``last`` was the Countess, a Prince if a copy
    is unaccounted for in ``left`` (:func:`bots.knowledge.unaccounted`), else the King if one
    is; else :func:`bots.knowledge.code_guess` (the non-Guard values with the most copies
    unaccounted for, ties drawn from ``rng``)."""
    if known != 0 and known != GUARD:
        return known
    if last == COUNTESS:
        if left[PRINCE] > 0:
            return PRINCE
        if left[KING] > 0:
            return KING
    return code_guess(left, rng)


@njit(cache=True)
def guard_key(action: int) -> int:
    """The key of :func:`key_guards` that stands for ``action`` (``action`` itself if it is not a
    Guard naming a guess)."""
    if action_card(action) == GUARD and action_guess(action) != 0:
        return pack_action(GUARD, action_target(action), 0)
    return action


@njit(cache=True)
def key_guards(acts: np.ndarray, k: int) -> int:
    """Replace the Guard actions of ``acts[:k]`` that name a guess by one key per target (the
    Guard at that target with guess 0, where the first of them was), keeping the order; returns
    the new count."""
    seen = 0  # bit mask of the targets keyed so far
    kept = 0
    for i in range(k):
        a = guard_key(acts[i])
        if a != acts[i]:
            target = action_target(a)
            if seen & (1 << target):
                continue
            seen |= 1 << target
        acts[kept] = a
        kept += 1
    return kept


@njit(cache=True)
def is_guard_key(action: int) -> bool:
    """Whether ``action`` is a key of :func:`key_guards` (a Guard at a target, no guess)."""
    return action_card(action) == GUARD and action_target(action) >= 0 and action_guess(action) == 0


@njit(cache=True)
def drawn_action(state: np.ndarray, mover: int, action: int, rng: np.ndarray) -> int:
    """The action to apply for ``action`` in the engine state ``state``: a key of
    :func:`key_guards` with the guess :func:`draw_guess` draws for ``mover``; any other action
    unchanged."""
    if not is_guard_key(action):
        return action
    target = action_target(action)
    left = state_unaccounted(state, mover)
    last = last_played(state, S_PILE, state[S_NPILE], target)
    guess = draw_guess(state[S_KNOW + mover * 4 + target], last, left, rng)
    return pack_action(GUARD, target, guess)


@njit(cache=True)
def played_guess(view: np.ndarray, target: int, rng: np.ndarray) -> int:
    """:func:`draw_guess` from a seat's ``view``: the guess its Guard at ``target`` names."""
    last = last_played(view, V_PILE, view[V_NPILE], target)
    return draw_guess(view[V_KNOWN + target], last, unaccounted(view), rng)
