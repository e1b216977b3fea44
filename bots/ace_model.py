"""How ``ace`` expects another seat to play: the chance of playing each card of a hand.

``ace`` reads an opponent's hand from its choices (:mod:`bots.ace_belief`): a Countess played by
choice hints at a King or a Prince, a Guard kept back at a card worth keeping. It needs, for a
hand of ``c`` and ``k``, the chance that the player plays ``c``. That chance is measured, not
written down: :func:`play_chances` deals rounds with the engine, plays them with the ``random``
bot in every seat (many and varied positions), and at every decision asks the reference bots
that decide by rules or a table alone (``random``, ``strategic``, ``knowledge``, ``greedy``,
``riskmatrix``, and ``dp`` where it plays: their own compiled policies) which card they would
play; the table is the
mixture of their answers, smoothed. A card the rules do not let the hand play
(:func:`arena.engine.rules.legal_from`: the Countess beside a King or a Prince) has chance 0.

The table is made once per variant and player count with a fixed seed, so it is the same in
every process (a fraction of a second; :func:`model_table` keeps it).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from arena.engine.jit import njit
from arena.engine.layout import (
    EVENT_WIDTH,
    MAX_ACTIONS,
    N_CARDS,
    PRINCESS,
    S_END,
    S_HAND,
    S_TURN,
    STATE_SIZE,
    VARIANT_HUIBERS,
    VIEW_SIZE,
)
from arena.engine.rng import new_rng, shuffle
from arena.engine.rules import apply_action, legal_actions, legal_from, new_round, standard_deck
from arena.engine.view import seat_view
from bots.dp import dp_policy
from bots.greedy import greedy_policy
from bots.knowledge import knowledge_policy
from bots.random_player import random_policy
from bots.riskmatrix import riskmatrix_policy
from bots.strategic import strategic_policy

__all__ = ["MODEL_POLICIES", "model_table", "play_chances", "uniform_chances"]

#: The reference bots whose play the model mixes, in the order :func:`_tally` asks them (``dp``
#: only where it plays: two-player ``huibers``).
MODEL_POLICIES = ("random", "strategic", "knowledge", "greedy", "riskmatrix", "dp")
#: Rounds dealt to measure the table.
MODEL_ROUNDS = 4000
#: The seed of those rounds.
MODEL_SEED = 20261127
#: The weight of a uniform choice mixed into the measured chances (no play is ever certain).
SMOOTHING = 0.05


@njit(cache=True)
def _tally(
    variant: int,
    nplayers: int,
    rounds: int,
    rng: np.ndarray,
    params: np.ndarray,
    dp_table: np.ndarray,
    counts: np.ndarray,
) -> None:
    """Deal ``rounds`` rounds (with the generator ``rng``) played by ``random`` in every seat;
    at each decision add to ``counts[p, c, k]`` when model policy ``p`` (:data:`MODEL_POLICIES`
    order; ``params[p]`` its parameters; ``dp`` only with its table, ``dp_table`` not empty)
    would play card ``c`` of a hand ``c, k``, ``c != k``."""
    deck = np.empty(N_CARDS, dtype=np.int32)
    standard_deck(deck)
    state = np.empty(STATE_SIZE, dtype=np.int32)
    view = np.zeros(VIEW_SIZE, dtype=np.int32)
    acts = np.empty(MAX_ACTIONS, dtype=np.int32)
    ev = np.empty((0, EVENT_WIDTH), dtype=np.int32)
    table = np.zeros(0, dtype=np.int16)
    models = 6 if dp_table.size > 0 else 5
    for r in range(rounds):
        shuffle(rng, deck, 0, N_CARDS)
        new_round(state, deck, nplayers, variant, r % nplayers, ev)
        while state[S_END] == 0:
            seat = state[S_TURN]
            a = state[S_HAND + 2 * seat]
            b = state[S_HAND + 2 * seat + 1]
            n = legal_actions(state, acts)
            seat_view(state, seat, view)
            if a != b:
                for p in range(models):
                    if p == 0:
                        chosen = random_policy(view, acts, n, rng, params[p], table)
                    elif p == 1:
                        chosen = strategic_policy(view, acts, n, rng, params[p], table)
                    elif p == 2:
                        chosen = knowledge_policy(view, acts, n, rng, params[p], table)
                    elif p == 3:
                        chosen = greedy_policy(view, acts, n, rng, params[p], table)
                    elif p == 4:
                        chosen = riskmatrix_policy(view, acts, n, rng, params[p], table)
                    else:
                        chosen = dp_policy(view, acts, n, rng, params[p], dp_table)
                    c = chosen & 15
                    counts[p, c, b if c == a else a] += 1
            apply_action(state, random_policy(view, acts, n, rng, params[0], table), ev)


@njit(cache=True)
def _playable(card: int, other: int) -> bool:
    """Whether a hand of ``card`` and ``other`` may play ``card`` (the engine's rules, asked
    for a seat of a two-player round whose opponent can be targeted)."""
    arr = np.zeros(4, dtype=np.int32)
    arr[0] = 1
    arr[1] = 1  # alive at 0..1, protected at 2..3: none
    out = np.empty(MAX_ACTIONS, dtype=np.int32)
    n = legal_from(arr, 0, 2, card, other, 0, 2, out)
    for i in range(n):
        if out[i] & 15 == card:
            return True
    return False


def play_chances(variant: int, nplayers: int, rounds: int = MODEL_ROUNDS) -> np.ndarray:
    """The ``9 x 9`` table: entry ``[c, k]`` is the chance that a player holding ``c`` and
    ``k`` plays ``c`` (1 when ``c == k``; row and column 0 unused), measured as the module
    docs say."""
    from bots.policy import policies

    found = policies()
    width = max(len(found[name].params) for name in MODEL_POLICIES)
    params = np.zeros((len(MODEL_POLICIES), max(width, 1)), dtype=np.float64)
    for p, name in enumerate(MODEL_POLICIES):
        values = found[name].param_array()
        params[p, : len(values)] = values
    counts = np.zeros((len(MODEL_POLICIES), 9, 9), dtype=np.int64)
    dp_table = np.zeros(0, dtype=np.int16)
    if variant == VARIANT_HUIBERS and nplayers == 2:
        from bots.dp import policy_table

        dp_table = policy_table()
    _tally(variant, nplayers, rounds, new_rng(MODEL_SEED), params, dp_table, counts)
    asked = len(MODEL_POLICIES) if dp_table.size else len(MODEL_POLICIES) - 1
    chances = np.zeros((9, 9), dtype=np.float64)
    for c in range(1, PRINCESS + 1):
        for k in range(1, PRINCESS + 1):
            if c == k:
                chances[c, k] = 1.0
                continue
            if not _playable(c, k):
                continue
            if not _playable(k, c):
                chances[c, k] = 1.0
                continue
            # each policy's share of playing c (half where it never held this hand), mixed
            shares = (counts[:asked, c, k] + 0.5) / (
                counts[:asked, c, k] + counts[:asked, k, c] + 1.0
            )
            chances[c, k] = (1.0 - SMOOTHING) * shares.mean() + SMOOTHING * 0.5
    return chances


def uniform_chances(chances: np.ndarray) -> np.ndarray:
    """The table of a player who plays either card of a hand with equal chance where the rules
    let it (``chances``' zeros and forced plays kept): what ``ace``'s ``model=0`` expects."""
    uniform = np.where(chances > 0.0, 0.5, 0.0)
    for c in range(1, PRINCESS + 1):
        for k in range(1, PRINCESS + 1):
            if c == k or chances[k, c] == 0.0:
                uniform[c, k] = chances[c, k]
    return uniform


@cache
def model_table(variant: int, nplayers: int) -> np.ndarray:
    """:func:`play_chances` for the variant code and player count, made once per process."""
    return play_chances(variant, nplayers)
