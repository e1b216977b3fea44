"""``Observation.history()``: the round's plays as one seat saw them, on concrete deals (random
rounds of fixed seeds, their moves chosen by a seeded generator)."""

from __future__ import annotations

import random

from arena.game import Card, Game
from arena.game.history import Play


def played(game_seed: int, moves_seed: int) -> Game:
    """The round of ``game_seed`` played to its end by moves drawn with ``moves_seed``."""
    game = Game(2, "classic", seed=game_seed)
    rng = random.Random(moves_seed)
    while not game.over:
        game.play(rng.choice(game.legal_actions()))
    return game


def test_guesses_missed_forced_discards_and_a_baron_s_result() -> None:
    game = played(11, 3)
    expected = (
        Play(0, Card.HANDMAID),
        Play(1, Card.GUARD, no_effect=True),  # seat 0 was protected
        Play(0, Card.HANDMAID),
        Play(1, Card.PRINCE, target=1, discarded=Card.GUARD),
        Play(0, Card.GUARD, target=1, guess=Card.BARON, missed=True),
        Play(1, Card.PRINCE, target=1, discarded=Card.PRIEST),
        Play(0, Card.GUARD, target=1, guess=Card.PRIEST, missed=True),
        Play(
            1,
            Card.BARON,
            target=0,
            shown=(Card.PRIEST, Card.BARON),
            knocked_out=((1, Card.PRIEST),),
        ),
    )
    # in a game of two, both seats see the same history
    assert game.observation(0).history() == game.observation(1).history() == expected


def test_a_priest_s_card_is_seen_by_its_player_only() -> None:
    game = played(2, 2)
    mine, theirs = game.observation(0).history()[0], game.observation(1).history()[0]
    assert mine == Play(0, Card.PRIEST, target=1, seen=Card.PRINCE)
    assert theirs == Play(0, Card.PRIEST, target=1)
    # playing the Princess knocks its player out, showing the card it kept
    assert game.observation(0).history()[-1] == Play(
        1, Card.PRINCESS, knocked_out=((1, Card.BARON),)
    )
