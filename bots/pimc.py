"""``pimc``: Perfect Information Monte Carlo, as Omarov et al. 2018 describe it for Love Letter.

For each of ``determinizations`` samples of the hidden cards
(:func:`bots.determinize.determinize`), a separate perfect-information UCT tree is searched over
the determinized state for ``iterations`` iterations: the deck order is fixed by the sample, so
the only branching left is the players' actions. Selection is UCB1 ``mean + c * sqrt(ln(n) /
visits)`` with ``n`` the parent's visits, expansion adds one untried action chosen uniformly,
rollouts are the ``random`` bot in every seat (:func:`bots.playout.random_playout_with`; in
2-player rounds by default the authors' playout policy, below), and every
node scores the share of the round won by the seat that plays its action (max-n). Each tree then
votes for its most visited root action; the action with the most votes is played (ties: the most
root visits over all trees, then the first in the legal order).

``params``: ``determinizations`` (50), ``iterations`` (160), ``c`` (0.7), ``seconds`` (0: off;
otherwise determinizations go on until that much time has passed, each still searched for
``iterations`` iterations), ``guard_rule`` (true: in 2-player rounds every Guard in the trees
names the rule's guess, :mod:`bots.guard_rule`), ``guard_draw`` (true: with ``guard_rule``, the
trees key a Guard by its target and draw its guess each time it is played, and the chosen Guard's
guess is drawn the same way, as the authors' code does; false: one guess per node, fixed),
``code_playouts`` (true: in 2-player rounds the
rollouts play the authors' playout policy, :mod:`bots.code_playouts`, instead of ``random``) and
``code_rules`` (true: in 2-player rounds a move the authors' rule-based checks settle is played
without searching, :func:`bots.knowledge.settled_move`). docs/mcts.md gives the interpretation
choices; docs/bots.md the measurements behind the defaults.
"""

from __future__ import annotations

import numpy as np
from numba import types

from arena.engine.jit import njit
from arena.engine.layout import GUARD, S_NPLAYERS, STATE_SIZE, V_NPLAYERS, V_SEAT, VIEW_SIZE
from arena.engine.rules import action_card, action_guess, action_target, pack_action
from bots.code_playouts import code_playout_with
from bots.determinize import determinize
from bots.guard_rule import (
    GUARDS_DRAWN,
    GUARDS_RULE,
    GUARDS_WHOLE,
    guard_key,
    played_guess,
)
from bots.knowledge import settled_move
from bots.mcts_tree import (
    F_ACTION,
    F_CHILD,
    F_SIBLING,
    F_VISITS,
    backpropagate,
    best_child,
    clock,
    descend,
    new_scratch,
    new_tree,
    reset_tree,
)
from bots.playout import random_playout_with, share
from bots.policy import MAX_COUNT, PolicyInfo

BOT = PolicyInfo(
    name="pimc",
    description="Omarov et al. 2018: PIMC, a UCT tree per sampled deal, the trees' majority vote",
    params={
        "determinizations": 50,
        "iterations": 160,
        "c": 0.7,
        "seconds": 0.0,
        "guard_rule": True,
        "code_playouts": True,
        "code_rules": True,
        "guard_draw": True,
    },
    variants=("classic", "huibers"),
    players=(2, 3, 4),
    ranges={
        "determinizations": (1, MAX_COUNT),
        "iterations": (1, MAX_COUNT),
        "c": (0.0, None),
        "seconds": (0.0, None),
    },
    order=90,
)


@njit(cache=True)
def uct_search(
    root: np.ndarray,
    seat: int,
    rng: np.ndarray,
    nodes: np.ndarray,
    value: np.ndarray,
    iterations: int,
    c: float,
    state: np.ndarray,
    scratch_view: np.ndarray,
    acts: np.ndarray,
    childof: np.ndarray,
    path: np.ndarray,
    shares: np.ndarray,
    ev: np.ndarray,
    guards: int,
    code_playouts: bool,
) -> int:
    """Plain UCT on the full (perfect-information) engine state ``root``, searched for ``seat``
    (the seat to move): ``iterations`` iterations into the tree ``nodes``/``value`` (reset here;
    capacity at least ``iterations + 1``); ``guards`` says how the tree's Guards guess
    (:mod:`bots.guard_rule`). ``state`` (:data:`STATE_SIZE`),
    ``scratch_view`` (:data:`VIEW_SIZE`) and the rest (:func:`bots.mcts_tree.new_scratch`) are
    work buffers. Returns the node count."""
    nplayers = root[S_NPLAYERS]
    count = reset_tree(nodes, value)
    for _ in range(iterations):
        for i in range(STATE_SIZE):
            state[i] = root[i]
        depth, count = descend(
            nodes, value, count, state, rng, c, False, acts, childof, path, ev, guards
        )
        if code_playouts:
            code_playout_with(state, rng, seat, scratch_view, acts, ev)
        else:
            random_playout_with(state, rng, seat, scratch_view, acts, ev)
        for s in range(nplayers):
            shares[s] = share(state, s)
        backpropagate(nodes, value, path, depth, shares)
    return count


@njit(cache=True)
def pimc_search(
    view: np.ndarray,
    rng: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    determinizations: int,
    iterations: int,
    c: float,
    seconds: float,
    guards: int,
    code_playouts: bool,
    votes: np.ndarray,
    visits: np.ndarray,
) -> int:
    """Run PIMC from the deciding seat's ``view``: add to ``votes[i]`` one vote for each tree
    whose most visited root action is ``legal[i]``, and to ``visits[i]`` that action's root visits
    in every tree; with ``guards`` ``GUARDS_DRAWN`` a root Guard key counts for the first Guard
    action of ``legal`` at its target. Returns the determinizations searched:
    ``determinizations``, or with ``seconds > 0`` as many as fit in that time (at least one)."""
    me = view[V_SEAT]
    nodes, value = new_tree(iterations + 1)
    acts, childof, path, shares, ev = new_scratch()
    root = np.empty(STATE_SIZE, dtype=np.int32)
    state = np.empty(STATE_SIZE, dtype=np.int32)
    pview = np.zeros(VIEW_SIZE, dtype=np.int32)
    timed = seconds > 0.0
    stop = clock() + seconds if timed else 0.0
    done = 0
    while True:
        determinize(view, rng, root)
        uct_search(
            root, me, rng, nodes, value, iterations, c, state, pview, acts, childof, path,
            shares, ev, guards, code_playouts,
        )  # fmt: skip
        best = best_child(nodes, value, 0)
        ch = nodes[0, F_CHILD]
        while ch >= 0:
            a = nodes[ch, F_ACTION]
            for i in range(nlegal):
                if (guard_key(legal[i]) if guards == GUARDS_DRAWN else legal[i]) == a:
                    visits[i] += nodes[ch, F_VISITS]
                    if ch == best:
                        votes[i] += 1
                    break
            ch = nodes[ch, F_SIBLING]
        done += 1
        if timed:
            if clock() >= stop:
                return done
        elif done >= determinizations:
            return done


@njit(cache=True)
def pimc_policy(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
) -> int:
    """PIMC's choice among ``legal[:nlegal]``: the majority vote of ``params[0]`` UCT trees of
    ``params[1]`` iterations with ``c = params[2]`` (``params[3]``: seconds, 0 off; in a 2-player
    round, nonzero ``params[4]``: Guards name the rule's guess, ``params[5]``: the authors'
    playouts, ``params[6]``: their rule-based checks first, ``params[7]`` with ``params[4]``:
    the rule's guess drawn at every play, :data:`bots.guard_rule.GUARDS_DRAWN`)."""
    if nlegal == 1:
        return legal[0]
    if params[6] != 0.0 and view[V_NPLAYERS] == 2:
        settled = settled_move(view, legal, nlegal, rng)
        if settled >= 0:
            return settled
    determinizations = max(1, int(params[0]))
    iterations = max(1, int(params[1]))
    votes = np.zeros(nlegal, dtype=np.int64)
    visits = np.zeros(nlegal, dtype=np.int64)
    # the rule in 2-player rounds only: with 3-4 players whole-action trees measured stronger
    guards = GUARDS_WHOLE
    if params[4] != 0.0 and view[V_NPLAYERS] == 2:
        guards = GUARDS_DRAWN if params[7] != 0.0 else GUARDS_RULE
    code_playouts = params[5] != 0.0 and view[V_NPLAYERS] == 2
    pimc_search(
        view, rng, legal, nlegal, determinizations, iterations, params[2], params[3],
        guards, code_playouts, votes, visits,
    )  # fmt: skip
    best = 0
    for i in range(1, nlegal):
        if votes[i] > votes[best] or (votes[i] == votes[best] and visits[i] > visits[best]):
            best = i
    chosen = legal[best]
    if guards == GUARDS_DRAWN and action_card(chosen) == GUARD and action_guess(chosen) != 0:
        target = action_target(chosen)
        drawn = pack_action(GUARD, target, played_guess(view, target, rng))
        for i in range(nlegal):
            if legal[i] == drawn:
                chosen = drawn
                break
    # every policy answers an int64 (bots.policy), where numba would answer legal's int32
    return types.int64(chosen)
