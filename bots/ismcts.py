"""``ismcts``: Single Observer Information Set Monte Carlo Tree Search (SO-ISMCTS).

Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree Search" (IEEE TCIAIG 2012), as
Omarov et al. 2018 apply it to Love Letter. One tree is searched from the deciding seat's view;
its nodes are sequences of actions from the root (packed ints, :mod:`bots.mcts_tree`). Every
iteration:

1. samples a new determinization of the view (:func:`bots.determinize.determinize`: the unseen
   cards dealt uniformly into the hidden slots);
2. descends the tree with it (:func:`bots.mcts_tree.descend`): at every node the arms are the
   children whose action is legal in this determinization; an unexpanded legal action is expanded
   first (one, chosen uniformly); else the arm with the highest subset-armed UCB1 score
   ``mean + c * sqrt(ln(availability) / visits)`` is played;
3. plays the round out with the ``random`` bot in every seat
   (:func:`bots.playout.random_playout_with`);
4. adds the result to the nodes on the path, each node scoring the share of the seat that played
   its action (max-n).

The move is the most visited child of the root. ``params``: ``iterations`` (1000), ``c`` (0.7),
``seconds`` (0: off; otherwise iterate until that much time has passed instead of counting
iterations). docs/mcts.md gives the interpretation choices and what they rest on.
"""

from __future__ import annotations

import numpy as np
from numba import types

from arena.engine.jit import njit
from arena.engine.layout import STATE_SIZE, V_NPLAYERS, V_SEAT, VIEW_SIZE
from bots.determinize import determinize
from bots.guard_rule import GUARDS_WHOLE
from bots.mcts_tree import (
    F_ACTION,
    MAX_NODES,
    backpropagate,
    best_child,
    clock,
    descend,
    new_scratch,
    new_tree,
)
from bots.playout import random_playout_with, share
from bots.policy import MAX_COUNT, PolicyInfo

BOT = PolicyInfo(
    name="ismcts",
    description=(
        "Cowling et al. 2012 / Omarov et al. 2018: SO-ISMCTS, one tree over information sets"
    ),
    params={"iterations": 1000, "c": 0.7, "seconds": 0.0},
    variants=("classic", "huibers"),
    players=(2, 3, 4),
    ranges={"iterations": (1, MAX_COUNT), "c": (0.0, None), "seconds": (0.0, None)},
    order=100,
)

#: Iterations between two readings of the clock when a time budget is set.
CLOCK_BATCH = 32


@njit(cache=True)
def ismcts_search(
    view: np.ndarray,
    rng: np.ndarray,
    nodes: np.ndarray,
    value: np.ndarray,
    iterations: int,
    c: float,
    seconds: float,
) -> int:
    """Run SO-ISMCTS from the deciding seat's ``view`` into the tree ``nodes``/``value`` (a fresh
    one from :func:`bots.mcts_tree.new_tree`); return the iterations run.

    With ``seconds > 0`` iterations go on, in batches of :data:`CLOCK_BATCH`, until that much
    time has passed (``iterations`` is then ignored); a full tree stops growing and later
    iterations go on from its leaves.
    """
    me = view[V_SEAT]
    nplayers = view[V_NPLAYERS]
    acts, childof, path, shares, ev = new_scratch()
    state = np.empty(STATE_SIZE, dtype=np.int32)
    pview = np.zeros(VIEW_SIZE, dtype=np.int32)
    count = 1
    done = 0
    timed = seconds > 0.0
    stop = clock() + seconds if timed else 0.0
    while True:
        batch = CLOCK_BATCH if timed else iterations
        for _ in range(batch):
            determinize(view, rng, state)
            depth, count = descend(
                nodes, value, count, state, rng, c, True, acts, childof, path, ev, GUARDS_WHOLE
            )
            random_playout_with(state, rng, me, pview, acts, ev)
            for s in range(nplayers):
                shares[s] = share(state, s)
            backpropagate(nodes, value, path, depth, shares)
        done += batch
        if not timed or clock() >= stop:
            return done


@njit(cache=True)
def ismcts_policy(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
) -> int:
    """SO-ISMCTS's choice among ``legal[:nlegal]``: the most visited child of the root after
    ``params = (iterations, c, seconds)`` (docs/mcts.md)."""
    if nlegal == 1:
        return legal[0]
    iterations = max(1, int(params[0]))
    c = params[1]
    seconds = params[2]
    capacity = MAX_NODES if seconds > 0.0 else iterations + 1
    nodes, value = new_tree(capacity)
    ismcts_search(view, rng, nodes, value, iterations, c, seconds)
    best = best_child(nodes, value, 0)
    if best >= 0:
        action = nodes[best, F_ACTION]
        for i in range(nlegal):
            if legal[i] == action:
                return action
    # every policy answers an int64 (bots.policy), where numba would answer legal's int32
    return types.int64(legal[0])
