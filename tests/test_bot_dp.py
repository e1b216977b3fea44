"""The ``dp`` bot: it plays the Dynamic Programming table's choice for its observation."""

from __future__ import annotations

import random

import pytest

from arena.game import Action, Card, Game
from bots.dp import table_entry
from bots.policy import policy_bot
from bots.simulate import simulate


@pytest.fixture(scope="module")
def dp_bot():  # type: ignore[no-untyped-def]
    """One bot (loading the table once)."""
    return policy_bot("dp")()


def opening_deck(b1: int, b2: int) -> list[int]:
    """A huibers deck where seat 0 is dealt ``b1`` and draws ``b2`` (the rest in value order)."""
    rest = sorted([1] * 5 + [2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8])
    rest.remove(b1)
    rest.remove(b2)
    aside, seat1 = rest[-1], rest[0]
    rest.remove(aside)
    rest.remove(seat1)
    return [aside, b1, seat1, b2, *rest]


def test_opening_moves_are_the_solver_table_rows(dp_bot) -> None:  # type: ignore[no-untyped-def]
    """At the first decision the bot plays what `arena solve` prints for its hand."""
    from solver import load_table
    from solver.opening import opening_rows

    rows = opening_rows(load_table("huibers"))
    assert rows
    for row in rows:
        b1, b2 = row["b1"], row["b2"]
        game = Game(2, "huibers", deck=opening_deck(b1, b2))
        action = dp_bot.act(game.observation(0))
        assert int(action.card) == row["play"], row
        if row["play"] == Card.GUARD:
            assert action.guess is not None and int(action.guess) == row["guess"], row
        if row["play"] == Card.PRINCE:
            assert action.target == (1 if row["target"] == 1 else 0), row


def test_baron_with_the_princess_wins_at_once(dp_bot) -> None:  # type: ignore[no-untyped-def]
    game = Game(2, "huibers", deck=opening_deck(3, 8))
    assert dp_bot.act(game.observation(0)) == Action(Card.BARON, 1)


def test_the_table_holds_every_huibers_configuration(dp_bot) -> None:  # type: ignore[no-untyped-def]
    """Over many random huibers rounds, every decision's configuration is in the table (the bot
    never falls back to its strategic rule)."""
    rng = random.Random(5)
    decisions = 0
    for r in range(600):
        game = Game(2, "huibers", seed=r, first=rng.randrange(2))
        while not game.over:
            seat = game.turn
            assert table_entry(game.view(seat), dp_bot.table) >= 0, (game.actions, seat)
            decisions += 1
            game.play(rng.choice(game.legal_actions()))
    assert decisions > 2000  # about 4 decisions a round


def test_dp_beats_random_from_either_seat() -> None:
    first = simulate(["dp", "random"], 40_000, "huibers", seed=2)
    second = simulate(["random", "dp"], 40_000, "huibers", seed=2)
    assert first.first_seat_ci[0] > 0.5
    assert second.first_seat_ci[1] < 0.5


def test_dp_beats_strategic_over_both_seats() -> None:
    """Moving second against ``strategic`` the DP player only about breaks even (the first
    seat's advantage), so the test takes both seat orders together, as duplicate play does."""
    first = simulate(["dp", "strategic"], 40_000, "huibers", seed=2)
    second = simulate(["strategic", "dp"], 40_000, "huibers", seed=2)
    share = (first.first_seat_rate + (1 - second.first_seat_rate)) / 2
    assert share > 0.53
