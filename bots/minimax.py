"""``minimax``: determinized minimax (Omarov et al. 2018, after Ginsberg 2001).

For each of ``determinizations`` deals sampled from what the seat knows
(:func:`bots.determinize.determinize`), the round is a game of perfect information: every hand and
the order of the draw pile are fixed, so it has no chance nodes. Alpha-beta minimax searches it to
the end from the current position and the determinization votes for its best root move; the move
with the most votes is played.

Values are the searching seat's share of the round at the end: 1 for a sole win, ``1/k`` for a
round shared by ``k`` seats, 0 for a loss. The other seats minimise it (with two players that is
plain minimax; with three or four it is the *paranoid* reduction, see below). Two refinements
keep the values' order and only break ties between equal shares:

- **Sooner wins, later losses.** A sole win decided ``p`` plies from the root is worth
  ``1 - p / 512``, a loss ``p / 512`` (a shared round is worth its share). So a move that wins at
  once is preferred to one that wins at the showdown (the paper's rationality assumption: "if a
  player can make a move and win the game, he has to make this move"), and the opponents prefer
  to knock the seat out early. The seat's own knock-out ends its search (its share is 0 whatever
  follows), also with three or four players.
- **Equal children are searched once.** Two legal actions that lead to the same state (all the
  Guard's wrong guesses, at any target) are one move for the search. The comparison ignores the
  knowledge slots (who knows whose card): no rule reads them, so in a game of perfect information
  they cannot change a value.

The rules are the engine's: children are made with :func:`arena.engine.rules.legal_actions` and
:func:`arena.engine.rules.apply_action`, and a result is the ended state's winners
(:func:`bots.playout.share`).

**Votes.** A determinization has one vote. It goes to the root moves whose value equals the best
value found, shared equally between the distinct outcomes among them and, within one outcome,
equally between the legal actions that lead to it (so a wrong Guard guess that is as good as any
other wrong guess does not favour the first guess in legal order). A root move that wins at once
ends the root's search: only the root moves that also win at once share that vote. The move with
the most votes is played; equal votes go to the larger sum of the best values of the
determinizations that voted for it, then to the first in legal order.

**Three and four players: paranoid.** All the other seats are assumed to minimise the searching
seat's share. Max-n (every seat maximising its own share) models the table better, but it prunes
only shallowly and needs a rule for the choices an opponent is indifferent between; paranoid
search keeps one scalar value, so the two-player alpha-beta applies unchanged and full-depth search
stays affordable (Sturtevant and Korf's comparison of the two); measured against ``random``, it
was also the stronger of the two here (docs/search.md). The price is pessimism: with
perfect information, colluding opponents often have a forced knock-out, and then every move loses;
the "later losses" tie-break still ranks those moves (the longer the seat stays in, the more the
real, uncolluding table can go its way).

**Depth.** ``depth=0`` searches to the end of the round. ``depth=d > 0`` stops ``d`` plies from
the root and scores a position still open by the showdown it would be if the deck ran out then:
the share of the other seats still in whose card is lower than the seat's (ties half), squeezed
into ``[0.05, 0.95]`` so that it ranks between a decided loss and a decided win. Full depth is fast
enough for every player count (docs/search.md), so the default is 0.
"""

from __future__ import annotations

import numpy as np
from numba import types

from arena.engine.jit import njit
from arena.engine.layout import (
    EVENT_WIDTH,
    MAX_ACTIONS,
    N_CARDS,
    S_ALIVE,
    S_AWARE,
    S_END,
    S_HAND,
    S_KNOW,
    S_NPLAYERS,
    S_TURN,
    STATE_SIZE,
)
from arena.engine.rules import apply_action, legal_actions
from bots.determinize import determinize
from bots.playout import share
from bots.policy import MAX_COUNT, PolicyInfo

BOT = PolicyInfo(
    name="minimax",
    description=(
        "Omarov et al. 2018: determinized minimax, each sampled deal searched to the end, a vote"
    ),
    params={"determinizations": 100, "depth": 0},
    variants=("classic", "huibers"),
    players=(2, 3, 4),
    ranges={"determinizations": (1, MAX_COUNT), "depth": (0, MAX_COUNT)},
    order=80,
)

#: The value a sole win or loss loses or gains per ply from the root (a tie-break only).
STEP = 1.0 / 512.0
#: The deepest a round can go from any position: every action but the last draws a card.
MAX_PLY = N_CARDS
#: Values of positions the depth limit cuts off lie in this band (between decided losses and wins).
CUT_LOW = 0.05
CUT_HIGH = 0.95
#: Root moves within this of the best value are searched exactly (to find every tied move).
_TIE = 1e-9
_INF = 1e9


# --- values -------------------------------------------------------------------------------------


@njit(cache=True)
def _leaf(state: np.ndarray, me: int, ply: int) -> float:
    """The value of ``state`` reached ``ply`` plies from the root if it is decided for ``me``
    (the round is over, or ``me`` is out of it), else -1."""
    if state[S_END] != 0:
        s = share(state, me)
        if s >= 1.0:
            return 1.0 - STEP * ply
        if s <= 0.0:
            return STEP * ply
        return s
    if state[S_ALIVE + me] == 0:
        return STEP * ply
    return -1.0


@njit(cache=True)
def _cut_value(state: np.ndarray, me: int) -> float:
    """The depth limit's estimate of an open position: the showdown if the deck ran out now."""
    mine = state[S_HAND + 2 * me]
    if state[S_TURN] == me:
        mine = max(mine, state[S_HAND + 2 * me + 1])
    score = 0.0
    others = 0
    for s in range(state[S_NPLAYERS]):
        if s != me and state[S_ALIVE + s] != 0:
            others += 1
            c = state[S_HAND + 2 * s]
            if state[S_TURN] == s:
                c = max(c, state[S_HAND + 2 * s + 1])
            if c < mine:
                score += 1.0
            elif c == mine:
                score += 0.5
    h = score / others if others > 0 else 1.0
    return CUT_LOW + (CUT_HIGH - CUT_LOW) * h


# --- equal children -----------------------------------------------------------------------------


@njit(cache=True)
def _key(state: np.ndarray) -> np.int64:
    """A hash of every slot of ``state`` but the knowledge ones."""
    h = np.int64(1469598103934665603)
    for i in range(STATE_SIZE):
        if S_KNOW <= i < S_KNOW + 16 or S_AWARE <= i < S_AWARE + 16:
            continue
        h = (h ^ np.int64(state[i])) * np.int64(1099511628211)
    return h


@njit(cache=True)
def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two states agree on every slot but the knowledge ones."""
    for i in range(STATE_SIZE):
        if S_KNOW <= i < S_KNOW + 16 or S_AWARE <= i < S_AWARE + 16:
            continue
        if a[i] != b[i]:
            return False
    return True


# --- the search ---------------------------------------------------------------------------------


@njit(cache=True)
def _expand(
    d: int,
    node: np.ndarray,
    me: int,
    ply: int,
    limit: int,
    kids: np.ndarray,
    keys: np.ndarray,
    leafv: np.ndarray,
    acts: np.ndarray,
    ev: np.ndarray,
) -> int:
    """Write the distinct children of ``node`` (whose children lie ``ply`` plies from the root)
    into ``kids[d]`` with their values if decided (``leafv[d]``, -1 if open); return their count."""
    n = legal_actions(node, acts)
    m = 0
    for i in range(n):
        c = kids[d, m]
        c[:] = node
        apply_action(c, acts[i], ev)
        k = _key(c)
        dup = False
        for j in range(m):
            if keys[d, j] == k and _same(c, kids[d, j]):
                dup = True
                break
        if dup:
            continue
        keys[d, m] = k
        v = _leaf(c, me, ply)
        if v < 0.0 and limit > 0 and ply >= limit:
            v = _cut_value(c, me)
        leafv[d, m] = v
        m += 1
    return m


@njit(cache=True)
def _take(
    d: int, v: float, mx: np.ndarray, val: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> None:
    """Fold a child's value ``v`` into node ``d``."""
    if mx[d]:
        if v > val[d]:
            val[d] = v
            if v > lo[d]:
                lo[d] = v
    else:
        if v < val[d]:
            val[d] = v
            if v < hi[d]:
                hi[d] = v


@njit(cache=True)
def _cut(
    d: int, mx: np.ndarray, val: np.ndarray, lo: np.ndarray, hi: np.ndarray, cap: np.ndarray
) -> bool:
    """Whether node ``d`` needs no more children: its window closed (alpha-beta), or its mover
    reached the best value possible (a win or loss at the next ply)."""
    if lo[d] >= hi[d]:
        return True
    return val[d] >= cap[d] if mx[d] else val[d] <= cap[d]


@njit(cache=True)
def _search(
    root: np.ndarray,
    me: int,
    ply: int,
    alpha: float,
    beta: float,
    limit: int,
    work: np.ndarray,
    keys: np.ndarray,
    leafv: np.ndarray,
    acts: np.ndarray,
    ev: np.ndarray,
) -> float:
    """Alpha-beta (fail-soft) value for ``me`` of the open state ``root``, ``ply`` plies from the
    decision, within the window ``(alpha, beta)``: exact inside it, a bound outside.

    An explicit stack: node ``d`` (``d`` = 0 is ``root``) keeps its children in ``work[d]`` and the
    index of the child being searched in ``cur[d]``; node ``d + 1`` is ``work[d, cur[d]]``."""
    nk = np.empty(MAX_PLY + 1, dtype=np.int64)
    cur = np.empty(MAX_PLY + 1, dtype=np.int64)
    lo = np.empty(MAX_PLY + 1, dtype=np.float64)
    hi = np.empty(MAX_PLY + 1, dtype=np.float64)
    val = np.empty(MAX_PLY + 1, dtype=np.float64)
    cap = np.empty(MAX_PLY + 1, dtype=np.float64)
    mx = np.empty(MAX_PLY + 1, dtype=np.bool_)
    d = 0
    node = root
    a = alpha
    b = beta
    while True:
        # Open node d: its children, its window, its decided children first.
        p = ply + d + 1
        nk[d] = _expand(d, node, me, p, limit, work, keys, leafv, acts, ev)
        cur[d] = -1
        mx[d] = node[S_TURN] == me
        lo[d] = a
        hi[d] = b
        # The best the mover can hope for: a sole win (max) or loss (min) at the next ply.
        cap[d] = 1.0 - STEP * p if mx[d] else STEP * p
        val[d] = -_INF if mx[d] else _INF
        for j in range(nk[d]):
            if leafv[d, j] >= 0.0:
                _take(d, leafv[d, j], mx, val, lo, hi)
                if _cut(d, mx, val, lo, hi, cap):
                    break
        # Walk: descend into the next open child, or close the node and fold it into its parent.
        while True:
            j = nk[d]
            if not _cut(d, mx, val, lo, hi, cap):
                j = cur[d] + 1
                while j < nk[d] and leafv[d, j] >= 0.0:
                    j += 1
            if j < nk[d]:
                cur[d] = j
                node = work[d, j]
                a = lo[d]
                b = hi[d]
                d += 1
                break
            v = val[d]
            if d == 0:
                return v
            d -= 1
            _take(d, v, mx, val, lo, hi)


@njit(cache=True)
def _workspace() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Buffers for one search: children states, their keys and decided values per depth, an
    action list and an empty event buffer."""
    work = np.empty((MAX_PLY + 1, MAX_ACTIONS, STATE_SIZE), dtype=np.int32)
    keys = np.empty((MAX_PLY + 1, MAX_ACTIONS), dtype=np.int64)
    leafv = np.empty((MAX_PLY + 1, MAX_ACTIONS), dtype=np.float64)
    acts = np.empty(MAX_ACTIONS, dtype=np.int32)
    ev = np.empty((0, EVENT_WIDTH), dtype=np.int32)
    return work, keys, leafv, acts, ev


@njit(cache=True)
def _root(
    state: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    limit: int,
    exact: bool,
    rootkids: np.ndarray,
    cls: np.ndarray,
    values: np.ndarray,
    work: np.ndarray,
    keys: np.ndarray,
    leafv: np.ndarray,
    acts: np.ndarray,
    ev: np.ndarray,
) -> float:
    """Search every root move of ``state`` (the seat to move searches); return the best value.

    ``cls[j]`` is the first legal action leading to the same state as ``legal[j]``; ``values[j]``
    the value of that outcome: exact when ``exact`` or when it is at least the best value, else
    a bound below the best (-1 when a root move that wins at once made the search stop)."""
    me = state[S_TURN]
    rkeys = np.empty(nlegal, dtype=np.int64)
    for j in range(nlegal):
        c = rootkids[j]
        c[:] = state
        apply_action(c, legal[j], ev)
        rkeys[j] = _key(c)
        cls[j] = j
        for i in range(j):
            if cls[i] == i and rkeys[i] == rkeys[j] and _same(c, rootkids[i]):
                cls[j] = i
                break
    best = -_INF
    for j in range(nlegal):
        values[j] = -1.0
        if cls[j] == j:
            v = _leaf(rootkids[j], me, 1)
            if v < 0.0 and limit == 1:
                v = _cut_value(rootkids[j], me)
            if v >= 0.0:
                values[j] = v
                best = max(best, v)
    top = 1.0 - STEP
    for j in range(nlegal):
        if cls[j] != j or values[j] >= 0.0:
            continue
        if best >= top and not exact:
            break
        alpha = -_INF if exact else best - _TIE
        v = _search(rootkids[j], me, 1, alpha, _INF, limit, work, keys, leafv, acts, ev)
        values[j] = v
        best = max(best, v)
    for j in range(nlegal):
        values[j] = values[cls[j]]
    return best


@njit(cache=True)
def _vote(
    best: float,
    cls: np.ndarray,
    values: np.ndarray,
    nlegal: int,
    votes: np.ndarray,
    sums: np.ndarray,
) -> None:
    """Share one determinization's vote between its best root moves (see the module's doc)."""
    outcomes = 0
    for j in range(nlegal):
        if cls[j] == j and values[j] == best:
            outcomes += 1
    for j in range(nlegal):
        if values[j] == best:
            size = 0
            for i in range(nlegal):
                if cls[i] == cls[j]:
                    size += 1
            votes[j] += 1.0 / (outcomes * size)
            sums[j] += best


@njit(cache=True)
def _elect(legal: np.ndarray, nlegal: int, votes: np.ndarray, sums: np.ndarray) -> int:
    """The most voted move; equal votes: the larger summed value, then the first."""
    k = 0
    for j in range(1, nlegal):
        if votes[j] > votes[k] + _TIE or (abs(votes[j] - votes[k]) <= _TIE and sums[j] > sums[k]):
            k = j
    # every policy answers an int64 (bots.policy), where numba would answer legal's int32
    return types.int64(legal[k])


@njit(cache=True)
def search_state(
    state: np.ndarray, legal: np.ndarray, nlegal: int, depth: int, values: np.ndarray
) -> float:
    """Minimax on the full (perfect-information) ``state`` for the seat to move: write the exact
    value of each of ``legal[:nlegal]`` into ``values`` and return the best.

    Values are as in the module's doc: ``1 - p/512`` for a sole win ``p`` plies from now, ``p/512``
    for a loss, the share of a shared round; ``depth`` > 0 cuts the search off that many plies
    ahead."""
    work, keys, leafv, acts, ev = _workspace()
    rootkids = np.empty((nlegal, STATE_SIZE), dtype=np.int32)
    cls = np.empty(nlegal, dtype=np.int64)
    return _root(
        state, legal, nlegal, depth, True, rootkids, cls, values, work, keys, leafv, acts, ev
    )


@njit(cache=True)
def best_move_state(state: np.ndarray, legal: np.ndarray, nlegal: int, depth: int) -> int:
    """The move that the search of the full ``state`` alone elects: the one determinization's vote
    (shared between its best moves as in the module's doc) decides, equal votes go to the first in
    legal order."""
    work, keys, leafv, acts, ev = _workspace()
    rootkids = np.empty((nlegal, STATE_SIZE), dtype=np.int32)
    cls = np.empty(nlegal, dtype=np.int64)
    values = np.empty(nlegal, dtype=np.float64)
    votes = np.zeros(nlegal, dtype=np.float64)
    sums = np.zeros(nlegal, dtype=np.float64)
    best = _root(
        state, legal, nlegal, depth, False, rootkids, cls, values, work, keys, leafv, acts, ev
    )
    _vote(best, cls, values, nlegal, votes, sums)
    return _elect(legal, nlegal, votes, sums)


@njit(cache=True)
def minimax_policy(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
) -> int:
    """Determinized minimax (see the module's doc). ``params``: ``determinizations`` (the number
    of deals sampled from the view, each searched and voting once; at least 1), ``depth`` (plies
    searched from the root, 0 for the whole round). A single legal action is played at once."""
    if nlegal == 1:
        return legal[0]
    ndet = max(1, int(params[0])) if params.shape[0] > 0 else 100
    limit = max(0, int(params[1])) if params.shape[0] > 1 else 0
    work, keys, leafv, acts, ev = _workspace()
    state = np.empty(STATE_SIZE, dtype=np.int32)
    rootkids = np.empty((nlegal, STATE_SIZE), dtype=np.int32)
    cls = np.empty(nlegal, dtype=np.int64)
    values = np.empty(nlegal, dtype=np.float64)
    votes = np.zeros(nlegal, dtype=np.float64)
    sums = np.zeros(nlegal, dtype=np.float64)
    for _ in range(ndet):
        determinize(view, rng, state)
        best = _root(
            state, legal, nlegal, limit, False, rootkids, cls, values, work, keys, leafv, acts, ev
        )
        _vote(best, cls, values, nlegal, votes, sums)
    return _elect(legal, nlegal, votes, sums)
