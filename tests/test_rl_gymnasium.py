"""The Gymnasium environment (``arena.rl.SingleSeatEnv``): Gymnasium's environment checker, and
concrete deals against reference bots' compiled policies and against an installed bot in its host
through the referee."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

pytest.importorskip("gymnasium")

import gymnasium
from gymnasium.utils.env_checker import check_env

from arena.errors import ArenaError, GameOverError, UnknownBotError, UnknownVariantError
from arena.game import Action, Card, Game
from arena.rl import SingleSeatEnv
from arena.rl.encoding import encode_observation, index_action, legal_mask
from arena.rl.round import round_rewards
from bots.policy import policy_bot

#: Set aside: Guard; face up: Guard, Guard, Priest; seat 0 holds the Handmaid and draws a Guard;
#: seat 1 holds the King, and draws a Guard next.
DECK = [1, 1, 1, 2, 4, 6, 1, 1, 2, 3, 3, 4, 5, 5, 7, 8]


def _check(env: SingleSeatEnv) -> None:
    with warnings.catch_warnings():
        # Gymnasium tries the other render modes only of an environment made by gymnasium.make
        warnings.filterwarnings("ignore", message=".*not having a spec")
        check_env(env)


@pytest.mark.parametrize(
    ("opponents", "players"), [("strategic", 2), (["random", "strategic", "greedy"], 4)]
)
def test_gymnasium_checker_against_compiled_policies(opponents: object, players: int) -> None:
    _check(SingleSeatEnv(opponents, players=players))  # type: ignore[arg-type]
    _check(SingleSeatEnv(opponents, players=players, render_mode="ansi"))  # type: ignore[arg-type]


def test_gymnasium_checker_against_a_hosted_bot() -> None:
    env = SingleSeatEnv("uniform", sandbox="auto")  # a plain Python bot: only hosted
    try:
        assert type(env.table).__name__ == "HostedTable"
        _check(env)
    finally:
        env.close()
    assert not env.table._thread.is_alive()  # type: ignore[attr-defined]


def test_gymnasium_make_knows_it() -> None:
    env = gymnasium.make("arena/LoveLetter-v0", opponents="random", seat=1)
    obs, info = env.reset(seed=3)
    assert info["seat"] == 1 and obs.shape == (184,)
    assert env.unwrapped.action_masks().sum() >= 1  # type: ignore[attr-defined]


def _index(env: SingleSeatEnv, action: Action, seat: int) -> int:
    (index,) = [
        i for i in np.flatnonzero(env.action_masks()) if index_action(int(i), seat, 2) == action
    ]
    return int(index)


def test_seat_0_on_a_known_deck_sees_its_own_view_and_wins_with_a_guard() -> None:
    env = SingleSeatEnv("strategic")
    obs, info = env.reset(seed=0, options={"deck": DECK, "seat": 0})
    seen = Game(2, deck=DECK).observation(0)
    assert np.array_equal(obs, encode_observation(seen))
    assert np.array_equal(info["action_mask"], legal_mask(seen.legal_actions, 0, 2))
    obs, reward, terminated, truncated, info = env.step(
        _index(env, Action(Card.GUARD, 1, Card.KING), 0)
    )
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["winners"] == (0,)
    assert not env.action_masks().any()
    with pytest.raises(GameOverError):
        env.step(0)


def test_seat_1_meets_the_bot_s_first_move_before_its_own() -> None:
    env = SingleSeatEnv("strategic")
    obs, _ = env.reset(seed=0, options={"deck": DECK, "seat": 1})
    game = Game(2, deck=DECK)
    bot = policy_bot("strategic")()
    game.play(bot.act(game.observation(0)))  # the strategic player's own choice there
    assert not game.over
    assert np.array_equal(obs, encode_observation(game.observation(1)))
    assert set(np.flatnonzero(env.action_masks()).tolist()) == {
        int(i) for i in np.flatnonzero(legal_mask(game.legal_actions(), 1, 2))
    }


def test_the_rewards_are_the_engine_s_winners() -> None:
    """Random episodes: replaying every move the table made on the same deck in the typed face
    gives the same winners, and the reward is the learning seat's share of them."""
    env = SingleSeatEnv(["random", "greedy"], players=3)
    rng = random.Random(5)
    env.reset(seed=9)
    for _ in range(40):
        _, info = env.reset()
        terminated = False
        while not terminated:
            action = rng.choice(np.flatnonzero(info["action_mask"]).tolist())
            _, reward, terminated, _, info = env.step(action)
        table = env.table
        game = Game(3, deck=table.game.deck.tolist())  # type: ignore[attr-defined]
        for seat, move in table.history:  # type: ignore[attr-defined]
            assert game.turn == seat
            game.play(move)
        assert game.over and game.winners == info["winners"]
        assert reward == round_rewards(game.winners, 3)[info["seat"]]


def test_an_illegal_action_ends_the_episode_with_minus_one() -> None:
    env = SingleSeatEnv("random")
    env.reset(seed=0, options={"deck": DECK, "seat": 0})
    king = 36  # a King at the next seat: seat 0 holds none
    _, reward, terminated, _, info = env.step(king)
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, True)
    assert info["winners"] == (1,)  # the seat was knocked out, the bot won
    env.reset(options={"deck": DECK, "seat": 0})
    assert env.step(99)[1] == -1.0  # outside the action space


def test_the_same_seed_plays_the_same_episodes() -> None:
    def episodes(seed: int) -> list[object]:
        env = SingleSeatEnv(["strategic", "random"], players=3)
        env.action_space.seed(seed)
        got: list[object] = []
        obs, info = env.reset(seed=seed)
        for _ in range(30):
            action = env.action_space.sample(info["action_mask"])
            obs, reward, terminated, _, info = env.step(action)
            got.append((obs.tobytes(), reward, info["seat"]))
            if terminated:
                obs, info = env.reset()
        return got

    assert episodes(1) == episodes(1)
    assert episodes(1) != episodes(2)


def test_bad_settings_are_arena_errors() -> None:
    with pytest.raises(UnknownVariantError, match="not 7"):
        SingleSeatEnv(players=7)
    with pytest.raises(UnknownVariantError, match="unknown variant"):
        SingleSeatEnv(variant="poker")
    with pytest.raises(UnknownBotError, match="nosuchbot"):
        SingleSeatEnv("nosuchbot")
    with pytest.raises(UnknownBotError, match="nosuchbot"):
        SingleSeatEnv("nosuchbot", hosted=True)
    with pytest.raises(ArenaError, match="2 of them"):
        SingleSeatEnv(["random"], players=3)
    with pytest.raises(ArenaError, match="one bot name"):
        SingleSeatEnv(5)  # type: ignore[arg-type]
    with pytest.raises(ArenaError, match="plays huibers"):
        SingleSeatEnv("dp", variant="classic")
    with pytest.raises(ArenaError, match="seat 2 is not one"):
        SingleSeatEnv(seat=2)
    with pytest.raises(ArenaError, match="parameter"):
        SingleSeatEnv("ismcts[depth=3]")
