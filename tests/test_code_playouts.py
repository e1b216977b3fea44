"""The playout policy of Omarov et al.'s code (:mod:`bots.code_playouts`), used by
``pimc[code_playouts=true]``, on hand-built deals where its rules dictate the answer, and whole
playouts with it.

Deals are written top card first (docs/rules.md): in a two-player ``huibers`` round ``deck[0]``
is set aside, then one card per seat in seat order, then the draw pile.
"""

from __future__ import annotations

import numpy as np
import pytest
from positions import after, deal, random_positions

from arena.engine.layout import EVENT_WIDTH, MAX_ACTIONS, VIEW_SIZE
from arena.engine.rng import new_rng
from arena.engine.rules import legal_actions
from arena.game import Action, Game
from bots.code_playouts import code_playout_policy, code_playout_with


def choice(game: Game, seed: int = 0) -> Action:
    """The playout policy's action for the seat to move."""
    acts = np.empty(MAX_ACTIONS, dtype=np.int32)
    k = legal_actions(game.state, acts)
    return Action.from_int(int(code_playout_policy(game.view(game.turn), acts, k, new_rng(seed))))


@pytest.mark.parametrize(
    ("top", "expected"),
    [
        ((8, 1, 5, 2), "Priest->1"),  # the Priest rather than the Guard
        ((8, 1, 5, 4), "Handmaid"),  # Guard and Handmaid with many cards to draw
        ((8, 3, 5, 7), "Baron->1"),  # 13 of the 14 unaccounted copies are below the Countess
        ((8, 3, 5, 2), "Priest->1"),  # 5 of 14 below the Priest: no Baron, the lower card
        ((1, 6, 5, 8), "King->1"),  # nothing else applies: the lower card
    ],
)
def test_the_codes_rules_on_a_first_move(top: tuple[int, ...], expected: str) -> None:
    assert choice(Game(2, "huibers", deck=deal(*top))) == Action.from_str(expected)


def test_a_card_seen_with_the_priest_is_named_by_the_guard() -> None:
    # seat 0 sees seat 1's Prince; seat 1's Guard misses; seat 0 draws a second Guard
    game = after(Game(2, "huibers", deck=deal(8, 2, 5, 1, 1, 1)), "Priest->1", "Guard->0:Princess")
    assert choice(game) == Action.from_str("Guard->1:Prince")


def test_against_a_protected_opponent_the_priest_is_kept_from_the_guard() -> None:
    # seat 1 is behind a Handmaid: with Priest and Guard and cards left to draw, the Priest
    game = after(Game(2, "huibers", deck=deal(8, 2, 4, 7, 5, 1)), "Countess", "Handmaid")
    assert choice(game) == Action.from_str("Priest")


def test_a_card_the_opponent_knows_is_played_first() -> None:
    # seat 0's Guard misses; seat 1's Priest sees seat 0's King; seat 0 draws a Prince: with
    # Guards still to come it gets rid of the known King, not the lower Prince
    game = after(Game(2, "huibers", deck=deal(1, 6, 2, 1, 3, 5)), "Guard->1:Princess", "Priest->0")
    assert sorted(game.hand(0)) == [5, 6]
    assert choice(game) == Action.from_str("King->1")


@pytest.mark.parametrize(("variant", "players"), [("classic", 2), ("huibers", 2), ("classic", 4)])
def test_every_answer_is_legal_and_a_playout_ends_the_round(variant: str, players: int) -> None:
    acts = np.empty(MAX_ACTIONS, dtype=np.int32)
    for game, _ in random_positions(variant, players, rounds=20, seed=5):
        k = legal_actions(game.state, acts)
        answer = code_playout_policy(game.view(game.turn), acts, k, new_rng(1))
        assert answer in acts[:k]
        state = game.state.copy()
        share = code_playout_with(
            state,
            new_rng(2),
            0,
            np.zeros(VIEW_SIZE, dtype=np.int32),
            np.empty(MAX_ACTIONS, dtype=np.int32),
            np.empty((0, EVENT_WIDTH), dtype=np.int32),
        )
        assert share in (0.0, 1.0 / 4, 1.0 / 3, 0.5, 1.0)
