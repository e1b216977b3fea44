"""``montecarlo``: Huibers 2016, section 3.1.2 (the Monte Carlo player).

Every option (each legal action but the Princess: each card, each Guard guess, each target) is
tried in ``playouts`` simulated rounds: a fresh determinization of the seat's view
(:mod:`bots.determinize`: the opponents' cards drawn from the unseen cards unless known), the
option played, then every seat playing like the ``random`` bot to the end (:mod:`bots.playout`).
The option with the most wins is played; on equal wins the first option in the engine's
legal-action order. With 3 or 4 players the bot counts its own seat's wins. A shared round counts
as a share of a win (1/k for k winners).

The options are simulated side by side: playout ``p`` of every option starts from the same
determinization (common random numbers), and options that leave the same state (a Guard's guesses
that miss leave identical states: the engine does not keep the guess) share one rollout from it.
Each option still gets ``playouts`` playouts, each from a fresh determinization; the sharing only
makes them cheaper and the comparison between options less noisy. See docs/search.md.
"""

from __future__ import annotations

import numpy as np
from numba import types

from arena.engine.jit import njit
from arena.engine.layout import (
    EVENT_WIDTH,
    MAX_ACTIONS,
    PRINCESS,
    S_HAND,
    STATE_SIZE,
    V_SEAT,
    VIEW_SIZE,
)
from arena.engine.rules import apply_action
from bots.determinize import determinize, hidden_slots, redeal
from bots.playout import WIN_UNITS, random_playout_with, win_units
from bots.policy import MAX_COUNT, PolicyInfo

__all__ = ["BOT", "group_options", "montecarlo_policy", "option_scores"]

BOT = PolicyInfo(
    name="montecarlo",
    description="Huibers 2016 3.1.2: each option tried in random playouts, the most wins played",
    params={"playouts": 1000},
    variants=("classic", "huibers"),
    players=(2, 3, 4),
    ranges={"playouts": (1, MAX_COUNT)},
    order=70,
)


@njit(cache=True)
def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two states are equal; the hands first, where different options differ most."""
    for j in range(S_HAND, STATE_SIZE):
        if a[j] != b[j]:
            return False
    for j in range(S_HAND):
        if a[j] != b[j]:
            return False
    return True


@njit(cache=True)
def group_options(
    base: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    active: np.ndarray,
    after: np.ndarray,
    group: np.ndarray,
    leader: np.ndarray,
    ev: np.ndarray,
) -> int:
    """Play each option ``legal[i]`` with ``active[i]`` on a copy of ``base`` (into
    ``after[i]``) and group the options that leave equal states (a Guard's guesses that miss):
    ``group[i]`` is option ``i``'s group, ``leader[g]`` the first option of group ``g``; returns
    the number of groups. One playout from ``after[leader[g]]`` then serves the whole group."""
    ngroups = 0
    for i in range(nlegal):
        if not active[i]:
            continue
        post = after[i]
        for j in range(STATE_SIZE):
            post[j] = base[j]
        apply_action(post, legal[i], ev)
        g = -1
        for q in range(ngroups):
            if _same(after[leader[q]], post):
                g = q
                break
        if g < 0:
            g = ngroups
            leader[g] = i
            ngroups += 1
        group[i] = g
    return ngroups


@njit(cache=True)
def option_scores(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    playouts: int,
    prune: bool,
    scores: np.ndarray,
) -> int:
    """Simulate the options among ``legal[:nlegal]`` and return the index of the chosen one.

    ``scores[i]`` gets option ``i``'s wins over ``playouts`` playouts in twelfths of a win
    (:func:`bots.playout.win_units`), or -1 for an action that is not an option (the Princess
    while another card can be played). Playout ``p`` of every option starts from the same fresh
    determinization; options that leave the same state there (a Guard's guesses that miss) share
    one rollout from it. With ``prune``, an option is dropped as soon as it can no longer be
    chosen (its wins plus one per remaining playout cannot beat the best option's wins so far,
    ties going to the earlier option); its score is then the wins counted until it was dropped,
    and once a single option is left the simulation stops (its score is partial too). The chosen
    option is the same function of the playouts' outcomes as without pruning.
    """
    seat = view[V_SEAT]
    has_other = False
    for i in range(nlegal):
        if legal[i] & 15 != PRINCESS:
            has_other = True
    base = np.empty(STATE_SIZE, dtype=np.int32)
    after = np.empty((nlegal, STATE_SIZE), dtype=np.int32)
    group = np.empty(nlegal, dtype=np.int64)
    leader = np.empty(nlegal, dtype=np.int64)
    result = np.empty(nlegal, dtype=np.int64)
    active = np.zeros(nlegal, dtype=np.bool_)
    slots = np.empty(16, dtype=np.int64)
    pview = np.zeros(VIEW_SIZE, dtype=np.int32)
    acts = np.empty(MAX_ACTIONS, dtype=np.int32)
    ev = np.empty((0, EVENT_WIDTH), dtype=np.int32)
    nactive = 0
    for i in range(nlegal):
        scores[i] = -1
        if not (has_other and legal[i] & 15 == PRINCESS):
            active[i] = True
            scores[i] = 0
            nactive += 1
    determinize(view, rng, base)
    nslots = hidden_slots(view, slots)
    for p in range(playouts):
        if p > 0:
            redeal(base, slots, nslots, rng)  # a fresh determinization
        ngroups = group_options(base, legal, nlegal, active, after, group, leader, ev)
        # One rollout per group.
        for q in range(ngroups):
            state = after[leader[q]]
            random_playout_with(state, rng, seat, pview, acts, ev)
            result[q] = win_units(state, seat)
        for i in range(nlegal):
            if active[i]:
                scores[i] += result[group[i]]
        if prune and nactive > 1:
            left = (playouts - 1 - p) * WIN_UNITS
            lead_i = -1
            for i in range(nlegal):
                if active[i] and (lead_i < 0 or scores[i] > scores[lead_i]):
                    lead_i = i
            for i in range(nlegal):
                if active[i] and i != lead_i:
                    most = scores[i] + left
                    if most < scores[lead_i] or (i > lead_i and most == scores[lead_i]):
                        active[i] = False
                        nactive -= 1
            if nactive == 1:
                break
    best = -1
    for i in range(nlegal):
        if active[i] and (best < 0 or scores[i] > scores[best]):
            best = i
    return best


@njit(cache=True)
def montecarlo_policy(
    view: np.ndarray,
    legal: np.ndarray,
    nlegal: int,
    rng: np.ndarray,
    params: np.ndarray,
    table: np.ndarray,
) -> int:
    """The Monte Carlo player's choice among ``legal[:nlegal]``; ``params[0]`` is the number of
    playouts per option (at least 1). A single option (a forced Countess, two equal cards with one
    way to play them, the Princess and one way to play the other card) is played at once."""
    options = 0
    only = legal[0]
    for i in range(nlegal):
        if legal[i] & 15 != PRINCESS:
            options += 1
            only = legal[i]
    if options <= 1:
        return only
    playouts = max(1, int(params[0]))
    scores = np.empty(nlegal, dtype=np.int64)
    # every policy answers an int64 (bots.policy), where numba would answer legal's int32
    return types.int64(legal[option_scores(view, legal, nlegal, rng, playouts, True, scores)])
