"""The tree machinery shared by the Monte Carlo tree search bots (``pimc``, ``ismcts``).

A search tree is two preallocated arrays, made once per decision by :func:`new_tree`:

- ``nodes``: ``int32[capacity, NODE_FIELDS]``, one row per node: the packed action that leads to
  the node (:data:`F_ACTION`), its parent, first child and next sibling (children are a linked
  list, newest first), its visit count, its availability count (how many times it could have been
  chosen when its parent was visited: the subset-armed bandit of SO-ISMCTS) and the seat that
  plays its action (:data:`F_PLAYER`, the seat to move at the parent);
- ``value``: ``float64[capacity]``, the total reward of the node *for the seat that plays its
  action* (max-n: every seat maximises its own share of the round; docs/mcts.md).

Node 0 is the root. A node is a sequence of actions from the root: the tree never stores a game
state. One iteration walks it with an engine state: :func:`descend` selects and expands (calling
the engine's ``legal_actions`` and ``apply_action``), the caller plays the rest of the round out,
and :func:`backpropagate` adds the result. Every kernel takes and returns arrays and numbers.
"""

from __future__ import annotations

import math
import time

import numba
import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import EVENT_WIDTH, MAX_ACTIONS, MAX_PLAYERS, S_END, S_TURN
from arena.engine.rng import rand_below
from arena.engine.rules import apply_action, legal_actions
from bots.guard_rule import GUARDS_DRAWN, GUARDS_RULE, drawn_action, keep_rule_guards, key_guards

# Node fields (columns of ``nodes``).
F_ACTION = 0
F_PARENT = 1
F_CHILD = 2
F_SIBLING = 3
F_VISITS = 4
F_AVAIL = 5
F_PLAYER = 6
#: Columns of ``nodes`` (one unused, so a row is 32 bytes).
NODE_FIELDS = 8
#: Longest path from the root: a round has at most 15 moves (one card drawn per move).
MAX_DEPTH = 32
#: Most nodes a time-limited search allocates (about 36 MB); a full tree stops growing and
#: its iterations go on from the leaves it has.
MAX_NODES = 1 << 20


@njit(cache=True)
def clock() -> float:
    """``time.perf_counter()`` read from a kernel (an object-mode call of about a microsecond,
    so searches read it once per batch of iterations)."""
    with numba.objmode(now="float64"):
        now = time.perf_counter()
    return now


@njit(cache=True)
def new_tree(capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """Allocate a tree of ``capacity`` nodes (``nodes``, ``value``) with its root initialised."""
    nodes = np.empty((capacity, NODE_FIELDS), dtype=np.int32)
    value = np.empty(capacity, dtype=np.float64)
    reset_tree(nodes, value)
    return nodes, value


@njit(cache=True)
def reset_tree(nodes: np.ndarray, value: np.ndarray) -> int:
    """Make the tree a lone root (no action, no visits); return the node count, 1."""
    _init_node(nodes, value, 0, -1, -1, -1)
    return 1


@njit(cache=True)
def _init_node(
    nodes: np.ndarray, value: np.ndarray, i: int, action: int, parent: int, player: int
) -> None:
    nodes[i, F_ACTION] = action
    nodes[i, F_PARENT] = parent
    nodes[i, F_CHILD] = -1
    nodes[i, F_SIBLING] = -1
    nodes[i, F_VISITS] = 0
    nodes[i, F_AVAIL] = 0
    nodes[i, F_PLAYER] = player
    nodes[i, 7] = 0
    value[i] = 0.0


@njit(cache=True)
def new_scratch() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The per-decision work arrays of :func:`descend` and :func:`backpropagate`: legal actions,
    the child of each legal action, the path, the shares of the seats, an empty event buffer."""
    acts = np.empty(MAX_ACTIONS, dtype=np.int32)
    childof = np.empty(MAX_ACTIONS, dtype=np.int32)
    path = np.empty(MAX_DEPTH, dtype=np.int32)
    shares = np.zeros(MAX_PLAYERS, dtype=np.float64)
    ev = np.empty((0, EVENT_WIDTH), dtype=np.int32)
    return acts, childof, path, shares, ev


@njit(cache=True)
def descend(
    nodes: np.ndarray,
    value: np.ndarray,
    count: int,
    state: np.ndarray,
    rng: np.ndarray,
    c: float,
    subset: bool,
    acts: np.ndarray,
    childof: np.ndarray,
    path: np.ndarray,
    ev: np.ndarray,
    guards: int,
) -> tuple[int, int]:
    """Selection and expansion from the root with the engine state ``state`` (changed in place).

    At each node the children are the node's children whose action is legal in ``state``. If a
    legal action has no child yet (and the tree has room) one of them, chosen uniformly, is added
    and played, and the descent stops. Otherwise the child with the highest UCB1 score
    ``mean + c * sqrt(ln(n) / visits)`` is played, where ``mean`` is the child's average reward
    for the seat playing it and ``n`` the parent's visits, or with ``subset`` the child's
    availability count (Cowling et al. 2012's subset-armed bandit). Every child legal here gets
    one more availability. The descent also stops at the end of the round. ``guards`` says how
    a Guard guesses (:mod:`bots.guard_rule`): with ``GUARDS_RULE`` it names only the guess of
    :func:`bots.guard_rule.rule_guess` (the legal actions are narrowed to it); with
    ``GUARDS_DRAWN`` the node of a Guard at a target is its key (no guess) and the guess is drawn
    each time it is played (:func:`bots.guard_rule.drawn_action`); never one read off the
    determinized hands. ``GUARDS_WHOLE`` keeps every guess an action of its own.

    Returns ``(depth, count)``: the nodes visited are ``path[0..depth]`` (``path[0]`` the root),
    ``count`` the new node count. The capacity is ``nodes.shape[0]``.
    """
    capacity = nodes.shape[0]
    node = 0
    depth = 0
    path[0] = 0
    while state[S_END] == 0:
        k = legal_actions(state, acts)
        player = state[S_TURN]
        if guards == GUARDS_RULE:
            k = keep_rule_guards(state, player, acts, k)
        elif guards == GUARDS_DRAWN:
            k = key_guards(acts, k)
        for i in range(k):
            childof[i] = -1
        untried = k
        ch = nodes[node, F_CHILD]
        while ch >= 0:
            a = nodes[ch, F_ACTION]
            for i in range(k):
                if acts[i] == a:
                    childof[i] = ch
                    untried -= 1
                    break
            ch = nodes[ch, F_SIBLING]
        if untried > 0 and count < capacity:
            pick = rand_below(rng, untried)
            chosen = -1
            for i in range(k):
                if childof[i] < 0:
                    if pick == 0:
                        chosen = i
                        break
                    pick -= 1
            new = count
            count += 1
            _init_node(nodes, value, new, acts[chosen], node, player)
            nodes[new, F_SIBLING] = nodes[node, F_CHILD]
            nodes[node, F_CHILD] = new
            childof[chosen] = new
            for i in range(k):
                if childof[i] >= 0:
                    nodes[childof[i], F_AVAIL] += 1
            apply_action(state, _played(state, player, acts[chosen], rng, guards), ev)
            depth += 1
            path[depth] = new
            return depth, count
        if untried == k:
            break  # the tree is full and this node has no child: a leaf
        best = -1
        best_score = -math.inf
        parent_visits = nodes[node, F_VISITS]
        for i in range(k):
            ch = childof[i]
            if ch < 0:
                continue
            visits = nodes[ch, F_VISITS]
            n = nodes[ch, F_AVAIL] if subset else parent_visits
            score = value[ch] / visits + c * math.sqrt(math.log(max(n, 1)) / visits)
            nodes[ch, F_AVAIL] += 1
            if score > best_score:
                best_score = score
                best = i
        node = childof[best]
        apply_action(state, _played(state, player, acts[best], rng, guards), ev)
        depth += 1
        path[depth] = node
    return depth, count


@njit(cache=True)
def _played(state: np.ndarray, player: int, action: int, rng: np.ndarray, guards: int) -> int:
    if guards == GUARDS_DRAWN:
        return drawn_action(state, player, action, rng)
    return action


@njit(cache=True)
def backpropagate(
    nodes: np.ndarray, value: np.ndarray, path: np.ndarray, depth: int, shares: np.ndarray
) -> None:
    """Add one visit to ``path[0..depth]`` and to each node (the root aside) the share of the
    round ``shares[seat]`` won by the seat that plays its action."""
    nodes[path[0], F_VISITS] += 1
    for d in range(1, depth + 1):
        node = path[d]
        nodes[node, F_VISITS] += 1
        value[node] += shares[nodes[node, F_PLAYER]]


@njit(cache=True)
def best_child(nodes: np.ndarray, value: np.ndarray, node: int) -> int:
    """The most visited child of ``node`` (ties: the higher total reward, then the older
    child), or -1 if it has none."""
    best = -1
    ch = nodes[node, F_CHILD]
    while ch >= 0:  # newest first, so ">=" on the reward prefers the older child
        if best < 0:
            best = ch
        else:
            v = nodes[ch, F_VISITS]
            bv = nodes[best, F_VISITS]
            if v > bv or (v == bv and value[ch] >= value[best]):
                best = ch
        ch = nodes[ch, F_SIBLING]
    return best


@njit(cache=True)
def child_count(nodes: np.ndarray, node: int) -> int:
    """How many children ``node`` has."""
    n = 0
    ch = nodes[node, F_CHILD]
    while ch >= 0:
        n += 1
        ch = nodes[ch, F_SIBLING]
    return n


def children(nodes: np.ndarray, node: int) -> list[int]:
    """The children of ``node``, newest first (plain Python: for inspecting a finished tree)."""
    out = []
    child = int(nodes[node, F_CHILD])
    while child >= 0:
        out.append(child)
        child = int(nodes[child, F_SIBLING])
    return out
