"""``arena simulate --swap``: every deal in every seat rotation, so that a bot's wins are free of
the seats' advantages."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from arena.cli.main import cli
from bots.simulate import simulate


@pytest.mark.parametrize(
    ("bots", "variant"),
    [
        (["random", "random"], "classic"),
        (["strategic", "strategic"], "huibers"),
        (["random", "random", "random"], "classic"),
        (["knowledge", "knowledge", "knowledge", "knowledge"], "classic"),
    ],
)
def test_bots_of_one_policy_win_exactly_as_often_with_swap(bots: list[str], variant: str) -> None:
    """Every seating of a deal replays the same decisions, so bots of one policy (and one set of
    parameters) share every deal's result from every seat: their wins are equal, whatever the
    seats' advantages."""
    result = simulate(bots, 3000, variant, seed=4, swap=True)
    n = len(bots)
    assert (result.swap, result.deals, result.seatings, result.games) == (True, 3000, n, 3000 * n)
    assert len(set(result.bot_wins)) == 1
    assert sum(result.bot_wins) == sum(result.wins) == result.games - result.draws
    assert result.first_seat_rate == result.wins[0] / result.games


def test_swap_plays_the_same_rounds_whatever_the_order_of_two_bots() -> None:
    """The deals come from the seed alone and each is played in both seatings: listing the bots
    the other way round plays the same rounds, each bot's wins follow it."""
    one = simulate(["strategic", "random"], 4000, "classic", seed=9, swap=True)
    other = simulate(["random", "strategic"], 4000, "classic", seed=9, swap=True)
    assert other.wins == one.wins and other.draws == one.draws
    assert other.bot_wins == one.bot_wins[::-1]
    alone = simulate(["strategic", "random"], 4000, "classic", seed=9)
    assert alone.bot_wins == alone.wins and (alone.swap, alone.seatings) == (False, 1)


def test_swap_with_three_bots_plays_every_rotation() -> None:
    """With three bots every deal is played in the three rotations of the seats: listing the bots
    in another rotation plays the same rounds."""
    bots = ["strategic", "random", "knowledge"]
    one = simulate(bots, 2000, "classic", seed=3, swap=True)
    turned = simulate(bots[2:] + bots[:2], 2000, "classic", seed=3, swap=True)
    assert turned.wins == one.wins and turned.draws == one.draws
    assert turned.bot_wins == one.bot_wins[2:] + one.bot_wins[:2]
    assert one.games == 6000


def test_arena_simulate_says_which_seatings_it_played() -> None:
    runner = CliRunner()
    swapped = runner.invoke(cli, ["simulate", "random", "strategic", "--games", "500", "--swap"])
    assert swapped.exit_code == 0, swapped.output
    lines = swapped.output.splitlines()
    assert lines[0] == "500 deals of classic, seed 0, each played in both seatings (1,000 rounds):"
    assert lines[1].split()[:3] == ["bot", "0", "random"]
    assert lines[2].split()[:3] == ["bot", "1", "strategic"]
    three = runner.invoke(cli, ["simulate", "random", "random", "random", "--games", "5", "--swap"])
    assert "each played in all 3 seat rotations (15 rounds)" in three.output.splitlines()[0]
    plain = runner.invoke(cli, ["simulate", "random", "strategic", "--games", "500"])
    assert plain.exit_code == 0, plain.output
    assert (
        plain.output.splitlines()[0]
        == "500 rounds of classic, seed 0, in one seating (bot i in seat i):"
    )


@pytest.mark.parametrize("swap", [True, False])
def test_arena_simulate_json_says_which_seatings_it_played(swap: bool) -> None:
    args = ["simulate", "strategic", "random", "--games", "700", "--json"]
    result = CliRunner().invoke(cli, args + (["--swap"] if swap else []))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    seatings = 2 if swap else 1
    assert (data["swap"], data["deals"], data["seatings"]) == (swap, 700, seatings)
    assert data["games"] == 700 * seatings
    assert sum(data["bot_wins"]) + data["draws"] == data["games"]
    expected = simulate(["strategic", "random"], 700, "classic", seed=0, swap=swap)
    assert data["bot_wins"] == list(expected.bot_wins)
    assert data["wins"] == list(expected.wins)
