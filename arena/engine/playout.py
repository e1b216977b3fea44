"""Whole rounds played inside the engine by uniformly random players (the engine's benchmark)."""

from __future__ import annotations

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    EVENT_WIDTH,
    MAX_ACTIONS,
    N_CARDS,
    S_END,
    S_NPLAYERS,
    S_WINNERS,
    STATE_SIZE,
)
from arena.engine.rng import rand_below, shuffle
from arena.engine.rules import apply_action, legal_actions, new_round, standard_deck


@njit(cache=True)
def play_uniform_rounds(rounds: int, nplayers: int, variant: int, seed: int) -> np.ndarray:
    """Play ``rounds`` rounds on freshly shuffled decks, seat 0 first, every seat choosing
    uniformly among its legal actions. Returns wins per seat, then shared rounds, as int64."""
    rng = np.empty(1, dtype=np.uint64)
    rng[0] = np.uint64(seed)
    state = np.zeros(STATE_SIZE, dtype=np.int32)
    deck = np.empty(N_CARDS, dtype=np.int32)
    standard_deck(deck)
    acts = np.empty(MAX_ACTIONS, dtype=np.int32)
    ev = np.empty((0, EVENT_WIDTH), dtype=np.int32)
    tally = np.zeros(nplayers + 1, dtype=np.int64)
    for _ in range(rounds):
        shuffle(rng, deck, 0, N_CARDS)
        new_round(state, deck, nplayers, variant, 0, ev)
        while state[S_END] == 0:
            k = legal_actions(state, acts)
            apply_action(state, acts[rand_below(rng, k)], ev)
        count_result(state, tally)
    return tally


@njit(cache=True)
def count_result(state: np.ndarray, tally: np.ndarray) -> None:
    """Add an ended round's result to ``tally``: one win for a sole winner's seat, else one to
    ``tally[nplayers]`` (a shared round)."""
    w = state[S_WINNERS]
    if w & (w - 1) == 0:
        s = 0
        while (w >> s) != 1:
            s += 1
        tally[s] += 1
    else:
        tally[state[S_NPLAYERS]] += 1
