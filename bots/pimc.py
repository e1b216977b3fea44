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
names the rule's guess, :mod:`bots.guard_rule`), ``code_playouts`` (true: in 2-player rounds the
rollouts play the authors' playout policy, :mod:`bots.code_playouts`, instead of ``random``) and
``code_rules`` (true: in 2-player rounds a move the authors' rule-based checks settle is played
without searching, :func:`bots.knowledge.settled_move`). docs/mcts.md gives the interpretation
choices; docs/bots.md the measurements behind the defaults.
"""

from __future__ import annotations

import numpy as np
from numba import types

from arena.engine.jit import njit
from arena.engine.layout import S_NPLAYERS, STATE_SIZE, V_NPLAYERS, V_SEAT, VIEW_SIZE
from bots.code_playouts import code_playout_with
from bots.determinize import determinize
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
    guard_rule: bool,
    code_playouts: bool,
) -> int:
    """Plain UCT on the full (perfect-information) engine state ``root``, searched for ``seat``
    (the seat to move): ``iterations`` iterations into the tree ``nodes``/``value`` (reset here;
    capacity at least ``iterations + 1``); with ``guard_rule`` every Guard in the tree names the
    guess of :func:`bots.guard_rule.rule_guess`. ``state`` (:data:`STATE_SIZE`),
    ``scratch_view`` (:data:`VIEW_SIZE`) and the rest (:func:`bots.mcts_tree.new_scratch`) are
    work buffers. Returns the node count."""
    nplayers = root[S_NPLAYERS]
    count = reset_tree(nodes, value)
    for _ in range(iterations):
        for i in range(STATE_SIZE):
            state[i] = root[i]
        depth, count = descend(
            nodes, value, count, state, rng, c, False, acts, childof, path, ev, guard_rule
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
    guard_rule: bool,
    code_playouts: bool,
    votes: np.ndarray,
    visits: np.ndarray,
) -> int:
    """Run PIMC from the deciding seat's ``view``: add to ``votes[i]`` one vote for each tree
    whose most visited root action is ``legal[i]``, and to ``visits[i]`` that action's root visits
    in every tree. Returns the determinizations searched: ``determinizations``, or with
    ``seconds > 0`` as many as fit in that time (at least one)."""
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
            shares, ev, guard_rule, code_playouts,
        )  # fmt: skip
        best = best_child(nodes, value, 0)
        ch = nodes[0, F_CHILD]
        while ch >= 0:
            a = nodes[ch, F_ACTION]
            for i in range(nlegal):
                if legal[i] == a:
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
    playouts, ``params[6]``: their rule-based checks first)."""
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
    guard_rule = params[4] != 0.0 and view[V_NPLAYERS] == 2
    code_playouts = params[5] != 0.0 and view[V_NPLAYERS] == 2
    pimc_search(
        view, rng, legal, nlegal, determinizations, iterations, params[2], params[3],
        guard_rule, code_playouts, votes, visits,
    )  # fmt: skip
    best = 0
    for i in range(1, nlegal):
        if votes[i] > votes[best] or (votes[i] == votes[best] and visits[i] > visits[best]):
            best = i
    # every policy answers an int64 (bots.policy), where numba would answer legal's int32
    return types.int64(legal[best])
