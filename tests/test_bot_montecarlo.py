"""The ``montecarlo`` bot (Huibers 2016, 3.1.2) on hand-built deals where the answer is certain,
legal answers in every variant and player count, and its strength against the random player.

Deals are written top card first (docs/rules.md): ``deck[0]`` is set aside, in a two-player
``classic`` round ``deck[1..3]`` lie face up, then one card per seat in seat order, then the draw
pile. ``deal(*top)`` puts the given cards on top and the rest of the 16 below them.
"""

from __future__ import annotations

import numpy as np
import pytest
from positions import after, deal
from scipy.stats import binomtest

from arena.engine import layout as L
from arena.engine.rng import new_rng
from arena.game import Action, Card, Game
from bots.montecarlo import montecarlo_policy, option_scores
from bots.playout import WIN_UNITS
from bots.policy import policies, policy_bot
from bots.simulate import policy_specs, simulate


def choice(game: Game, playouts: int = 200, seed: int = 0) -> Action:
    """What the Monte Carlo bot plays for the seat to move."""
    bot = policy_bot("montecarlo")(playouts=playouts)
    bot.reset(seed)
    return bot.act(game.observation(game.turn))


def scores(game: Game, playouts: int, prune: bool = False) -> dict[str, int]:
    """Each option's wins (in twelfths) for the seat to move, by action string."""
    legal = np.array(game.legal_packed(), dtype=np.int32)
    out = np.empty(len(legal), dtype=np.int64)
    option_scores(game.view(game.turn), legal, len(legal), new_rng(1), playouts, prune, out)
    return {str(Action.from_int(int(a))): int(s) for a, s in zip(legal, out, strict=True)}


# --- registration -------------------------------------------------------------------------------


def test_registered_with_its_parameter() -> None:
    info = policies()["montecarlo"]
    assert info.module == "bots.montecarlo"
    assert info.params == {"playouts": 1000}
    assert info.variants == ("classic", "huibers") and info.players == (2, 3, 4)
    [(name, spec_info, params)] = policy_specs(["montecarlo[playouts=200]"])
    assert spec_info == info and params.tolist() == [200.0] and "playouts=200" in name


# --- certain wins are found ---------------------------------------------------------------------


def test_guard_names_the_card_it_knows() -> None:
    # huibers: seat 0 sees seat 1's Baron with the Priest; seat 1 plays the Countess; seat 0
    # holds Handmaid and Guard. Naming the Baron wins every playout, nothing else does.
    game = after(Game(2, "huibers", deck=deal(8, 2, 3, 4, 7, 1)), "Priest->1", "Countess")
    assert game.hand(0) == (Card.HANDMAID, Card.GUARD)
    assert choice(game) == Action.from_str("Guard->1:Baron")
    table = scores(game, 100)
    assert table["Guard->1:Baron"] == 100 * WIN_UNITS
    assert all(s < 100 * WIN_UNITS for a, s in table.items() if a != "Guard->1:Baron")


def test_baron_against_a_known_lower_card() -> None:
    # huibers: seat 0 sees seat 1's Guard, then holds Handmaid and Baron: Handmaid 4 > Guard 1.
    game = after(Game(2, "huibers", deck=deal(8, 2, 1, 4, 7, 3)), "Priest->1", "Countess")
    assert choice(game) == Action.from_str("Baron->1")
    assert scores(game, 100)["Baron->1"] == 100 * WIN_UNITS


def test_prince_at_a_known_princess() -> None:
    # huibers: seat 0 sees the Princess; seat 1 misses with a Guard; seat 0: Handmaid, Prince.
    game = after(Game(2, "huibers", deck=deal(7, 2, 8, 4, 1, 5)), "Priest->1", "Guard->0:Princess")
    assert choice(game) == Action.from_str("Prince->1")


def test_a_known_card_in_three_players_is_named_at_its_holder() -> None:
    # classic, 3 players: seat 0 names seat 2's Baron (out); seat 1 misses; seat 0 sees seat 1's
    # Handmaid with the Priest; seat 1 misses again and keeps it; seat 0 holds Guard and King.
    game = after(
        Game(3, "classic", deck=deal(8, 1, 4, 3, 2, 1, 1, 1, 6)),
        "Guard->2:Baron",
        "Guard->0:Princess",
        "Priest->1",
        "Guard->0:Princess",
    )
    assert game.turn == 0 and game.hand(0) == (Card.GUARD, Card.KING)
    assert game.view(0)[L.V_KNOWN + 1] == Card.HANDMAID
    # Naming the Handmaid wins every playout: seat 2 is already out.
    assert choice(game) == Action.from_str("Guard->1:Handmaid")
    assert scores(game, 50)["Guard->1:Handmaid"] == 50 * WIN_UNITS


def test_guesses_that_cannot_hit_share_their_playouts() -> None:
    # classic: King, Countess and Princess lie face up; seat 0 holds Guard and Baron. A guess of
    # any of them misses in every playout and leaves the same state as any other miss, so the
    # three score exactly alike (their playouts are the same rollouts).
    game = Game(2, "classic", deck=deal(1, 6, 7, 8, 1, 2, 3))
    assert game.hand(0) == (Card.GUARD, Card.BARON)
    table = scores(game, 200)
    assert table["Guard->1:King"] == table["Guard->1:Countess"] == table["Guard->1:Princess"]
    assert len(set(table.values())) > 1


# --- never the Princess, forced moves -------------------------------------------------------------


def test_never_the_princess_and_the_prince_not_at_itself_with_her() -> None:
    # huibers: seat 0 holds the Princess and a Prince: Prince at itself discards her (a certain
    # loss), the Princess is never an option.
    game = Game(2, "huibers", deck=deal(1, 8, 2, 5))
    table = scores(game, 50)
    assert table["Princess"] == -1 and table["Prince->0"] == 0
    assert choice(game) == Action.from_str("Prince->1")
    # with the Handmaid there is a single option, played without simulating
    game = Game(2, "huibers", deck=deal(1, 8, 2, 4))
    assert choice(game) == Action.from_str("Handmaid")


def test_forced_countess() -> None:
    game = Game(2, "classic", deck=deal(1, 2, 3, 4, 7, 2, 6))
    assert game.hand(0) == (Card.COUNTESS, Card.KING)
    assert choice(game) == Action.from_str("Countess")


def test_pruning_keeps_the_certain_win() -> None:
    """Dropping options that can no longer be chosen changes the work, not the choice: with and
    without it, over several seeds, the certain win is chosen, and without it the choice is the
    first option of most wins."""
    game = after(Game(2, "huibers", deck=deal(8, 2, 3, 4, 7, 1)), "Priest->1", "Countess")
    legal = np.array(game.legal_packed(), dtype=np.int32)
    out = np.empty(len(legal), dtype=np.int64)
    for seed in range(5):
        for prune in (False, True):
            best = option_scores(game.view(0), legal, len(legal), new_rng(seed), 60, prune, out)
            assert Action.from_int(int(legal[best])) == Action.from_str("Guard->1:Baron")
            if not prune:
                assert best == int(np.argmax(out))


# --- legal answers everywhere -------------------------------------------------------------------


_MC = "montecarlo[playouts=8]"


@pytest.mark.parametrize(
    ("variant", "bots"),
    [
        ("classic", (_MC, "random")),
        ("classic", ("random", _MC)),
        ("classic", (_MC, "random", _MC)),
        ("classic", ("random", _MC, "random", _MC)),
        ("huibers", (_MC, "random")),
        ("huibers", ("random", _MC)),
    ],
)
def test_legal_answers_in_every_variant_and_player_count(
    variant: str, bots: tuple[str, ...]
) -> None:
    # the simulator raises SimulationError on an illegal answer
    result = simulate(list(bots), 150, variant, seed=3)
    assert sum(result.wins) + result.draws == 150


def test_legal_answers_through_the_bot_in_real_rounds() -> None:
    bot = policy_bot("montecarlo")(playouts=5)
    for players in (2, 3, 4):
        for r in range(10):
            game = Game(players, "classic", seed=r, first=r % players)
            bot.reset(r)
            while not game.over:
                obs = game.observation(game.turn)
                action = bot.act(obs)
                assert action in obs.legal_actions
                game.play(action)


def test_policy_with_one_playout() -> None:
    game = Game(2, "classic", seed=5)
    legal = np.array(game.legal_packed(), dtype=np.int32)
    table = np.zeros(0, dtype=np.int16)
    a = montecarlo_policy(game.view(0), legal, len(legal), new_rng(0), np.array([1.0]), table)
    assert a in legal.tolist()


# --- strength -----------------------------------------------------------------------------------


def test_beats_random_from_either_seat() -> None:
    """400 rounds each way with 50 playouts per option: the Monte Carlo player wins more than
    the random player does from the same seat against itself (51.6% first, 48.4% second,
    docs/bots.md)."""
    first = simulate(["montecarlo[playouts=50]", "random"], 400, "classic", seed=1)
    assert binomtest(first.wins[0], 400, 0.516, alternative="greater").pvalue < 1e-3
    second = simulate(["random", "montecarlo[playouts=50]"], 400, "classic", seed=2)
    assert binomtest(second.wins[1], 400, 0.484, alternative="greater").pvalue < 1e-3
