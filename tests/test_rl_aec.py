"""The PettingZoo environment (``arena.rl.env``): PettingZoo's own tests, and concrete deals whose
observations, masks and rewards are stated here and checked against the engine's typed face."""

from __future__ import annotations

import importlib
import random
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, render_test, seed_test

from arena.errors import ArenaError, IllegalActionError, UnknownVariantError
from arena.game import Action, Card, Game
from arena.rl import env, raw_env
from arena.rl.encoding import (
    N_ACTIONS,
    OBSERVATION_SIZE,
    encode_observation,
    field_slice,
    index_action,
    legal_mask,
)
from arena.rl.round import round_rewards

#: Set aside: Guard; face up: Guard, Guard, Priest; seat 0 holds the Handmaid and draws a Guard;
#: seat 1 holds the King; then the draw pile.
DECK = [1, 1, 1, 2, 4, 6, 1, 1, 2, 3, 3, 4, 5, 5, 7, 8]
#: The same deal with seat 1's King and the Princess at the bottom of the pile exchanged: seat 0
#: cannot tell the two apart on its first move.
DECK_PRINCESS = [1, 1, 1, 2, 4, 8, 1, 1, 2, 3, 3, 4, 5, 5, 7, 6]

#: What PettingZoo's api_test says of any environment with dictionary observations that is not
#: one of its own (its classic card games are exempted by name).
DICT_OBSERVATION_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be gymnasium.spaces.box or "
    "gymnasium.spaces.discrete",
)


def _api_test(environment: object) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(environment, num_cycles=100)
    others = {str(w.message) for w in caught} - set(DICT_OBSERVATION_WARNINGS)
    assert not others


@pytest.mark.parametrize(
    ("players", "variant"), [(2, "classic"), (3, "classic"), (4, "classic"), (2, "huibers")]
)
def test_pettingzoo_api_test(players: int, variant: str) -> None:
    _api_test(env(players=players, variant=variant))
    _api_test(raw_env(players=players, variant=variant))


@pytest.mark.parametrize("players", [2, 4])
def test_pettingzoo_seed_test(players: int) -> None:
    seed_test(lambda: env(players=players), num_cycles=100)


def test_pettingzoo_render_test(capsys: pytest.CaptureFixture[str]) -> None:
    render_test(lambda render_mode=None: env(render_mode=render_mode))
    assert "player_0" in capsys.readouterr().out  # the human mode printed the table


def _indices(mask: np.ndarray) -> list[int]:
    return [int(i) for i in np.flatnonzero(mask)]


def test_the_acting_seat_sees_its_hand_and_the_public_facts_only() -> None:
    e = raw_env()
    e.reset(options={"deck": DECK})
    assert e.agent_selection == "player_0"
    seen = e.observe("player_0")
    obs, mask = seen["observation"], seen["action_mask"]
    assert obs.shape == (OBSERVATION_SIZE,) and obs.dtype == np.float32
    assert mask.shape == (N_ACTIONS,) and mask.dtype == np.int8

    def field(name: str) -> list[float]:
        return obs[field_slice(name)].tolist()

    assert field("players") == [1, 0, 0]
    assert field("variant") == [1, 0]
    assert field("to_move") == [1, 0, 0, 0]
    assert field("hand") == [0.5, 0, 0, 0.5, 0, 0, 0, 0]  # a Guard and the Handmaid
    # face up: two Guards and a Priest
    assert field("face_up") == pytest.approx([2 / 5, 1 / 2, 0, 0, 0, 0, 0, 0])
    # unseen: 5 Guards less 3, 2 Priests less 1, a Handmaid less the one held
    assert field("unseen") == pytest.approx([2 / 5, 1 / 2, 1, 1 / 2, 1, 1, 1, 1])
    assert field("deck_size") == pytest.approx([9 / 16])  # 16 less 1 aside, 3 up, 3 dealt or drawn
    for k in (0, 1):
        assert field(f"seat+{k}.seated") == field(f"seat+{k}.alive") == [1]
        assert field(f"seat+{k}.known") == [0] * 8  # the King in seat 1 is not shown
    assert field("seat+2.seated") == field("seat+3.seated") == [0]
    # the engine's legal actions: the Handmaid, or a Guard at seat 1 naming Priest..Princess
    legal = {index_action(i, 0, 2) for i in _indices(mask)}
    assert legal == set(Game(2, deck=DECK).legal_actions())
    assert legal == {Action(Card.HANDMAID)} | {Action(Card.GUARD, 1, Card(g)) for g in range(2, 9)}
    # the other seat: its King only, no legal action
    other = e.observe("player_1")
    assert other["observation"][field_slice("hand")].tolist() == [0, 0, 0, 0, 0, 0.5, 0, 0]
    assert other["observation"][field_slice("to_move")].tolist() == [0, 1, 0, 0]
    assert not other["action_mask"].any()


def test_what_the_seat_cannot_know_does_not_change_its_observation() -> None:
    a, b = raw_env(), raw_env()
    a.reset(options={"deck": DECK})
    b.reset(options={"deck": DECK_PRINCESS})
    for key in ("observation", "action_mask"):
        assert np.array_equal(a.observe("player_0")[key], b.observe("player_0")[key])
    assert not np.array_equal(
        a.observe("player_1")["observation"], b.observe("player_1")["observation"]
    )


def test_a_guard_that_hits_ends_the_round_with_the_engine_s_winner() -> None:
    e = env()
    e.reset(options={"deck": DECK})
    hit = Action(Card.GUARD, 1, Card.KING)
    index = [i for i in _indices(e.last()[0]["action_mask"]) if index_action(i, 0, 2) == hit]
    e.step(index[0])
    game = Game(2, deck=DECK)
    game.play(hit)
    assert game.winners == (0,)
    assert e.terminations == {"player_0": True, "player_1": True}
    assert e.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert e.infos["player_1"] == {"winners": ["player_0"], "end_reason": "last_standing"}
    final = e.observe("player_1")["observation"]
    assert final[field_slice("ended")].tolist() == [1]
    assert final[field_slice("winners")].tolist() == [0, 1, 0, 0]  # the seat one place on won
    returns = {}
    for agent in e.agent_iter():
        returns[agent] = e.last()[1]
        e.step(None)
    assert returns == {"player_1": -1.0, "player_0": 1.0}


def test_an_illegal_action_raises_in_the_raw_environment_and_loses_in_the_wrapped_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    raw = raw_env()
    raw.reset(options={"deck": DECK})
    before = raw.game.state.copy()
    king = 36  # the King at the next seat: seat 0 holds no King
    assert index_action(king, 0, 2) == Action(Card.KING, 1)
    with pytest.raises(IllegalActionError, match="not legal for seat 0"):
        raw.step(king)
    assert np.array_equal(raw.game.state, before)
    for outside in (41, -1):
        with pytest.raises(IllegalActionError, match=f"action {outside} is not legal"):
            raw.step(outside)
    assert np.array_equal(raw.game.state, before)
    wrapped = env()
    wrapped.reset(options={"deck": DECK})
    wrapped.step(king)
    assert "Illegal move made" in caplog.text  # PettingZoo's own logger says so
    assert wrapped.terminations == {"player_0": True, "player_1": True}
    assert wrapped.rewards == {"player_0": -1.0, "player_1": 0.0}


def test_the_observations_are_the_referee_s_observations_encoded() -> None:
    """Random rounds of every size: at every move each seat's observation and mask are those of
    the :class:`~arena.game.Observation` the referee would send it, encoded."""
    rng = random.Random(4)
    for players, variant in ((2, "classic"), (3, "classic"), (4, "classic"), (2, "huibers")):
        for _ in range(15):
            game = Game(players, variant, seed=rng.randrange(2**32))
            e = raw_env(players=players, variant=variant)
            e.reset(options={"deck": [int(c) for c in game.deck]})
            while not game.over:
                for seat, agent in enumerate(e.possible_agents):
                    seen = game.observation(seat)
                    got = e.observe(agent)
                    assert np.array_equal(got["observation"], encode_observation(seen))
                    assert np.array_equal(
                        got["action_mask"], legal_mask(seen.legal_actions, seat, players)
                    )
                action = rng.choice(game.legal_actions())
                index = [
                    i
                    for i in _indices(e.observe(e.agent_selection)["action_mask"])
                    if index_action(i, game.turn, players) == action
                ]
                assert len(index) == 1
                e.step(index[0])
                game.play(action)
            expected = round_rewards(game.winners, players)
            assert [e.rewards[a] for a in e.possible_agents] == expected


def test_round_rewards() -> None:
    assert round_rewards((0,), 2) == [1.0, -1.0]
    assert round_rewards((0, 1), 2) == [0.0, 0.0]
    assert round_rewards((2,), 4) == pytest.approx([-1 / 3, -1 / 3, 1.0, -1 / 3])
    assert round_rewards((0, 3), 4) == pytest.approx([1 / 3, -1 / 3, -1 / 3, 1 / 3])
    assert round_rewards((1,), 3) == pytest.approx([-0.5, 1.0, -0.5])


def test_the_same_seed_deals_the_same_rounds() -> None:
    a, b = raw_env(players=3), raw_env(players=3)
    a.reset(seed=11)
    b.reset(seed=11)
    decks = []
    for e in (a, b):
        e.reset()
        decks.append(e.game.deck.tolist())
    assert decks[0] == decks[1]
    a.reset(seed=12)
    assert a.game.deck.tolist() != decks[0]


def test_bad_settings_are_arena_errors() -> None:
    with pytest.raises(UnknownVariantError, match="not 7"):
        raw_env(players=7)
    with pytest.raises(UnknownVariantError, match="unknown variant 'chess'"):
        env(variant="chess")
    with pytest.raises(UnknownVariantError, match="for 2 players"):
        env(players=3, variant="huibers")
    with pytest.raises(ArenaError, match="render_mode"):
        env(render_mode="rgb_array")
    with pytest.raises(ArenaError, match="players must be an int"):
        env(players="2")
    e = raw_env()
    with pytest.raises(ArenaError, match="not a deck"):
        e.reset(options={"deck": [1] * 16})
    with pytest.raises(ArenaError, match="first seat 2"):
        e.reset(options={"first": 2})


@pytest.mark.parametrize(
    ("module", "library"),
    [
        ("arena.rl.aec", "pettingzoo"),
        ("arena.rl.single_seat", "gymnasium"),
        ("arena.rl.openspiel", "pyspiel"),
    ],
)
def test_without_the_extra_the_import_fails_with_one_line(
    module: str, library: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.rl.extra import MissingExtraError

    importlib.import_module(module)  # present, so that it is put back afterwards
    monkeypatch.setitem(sys.modules, library, None)
    monkeypatch.delitem(sys.modules, module)
    with pytest.raises(MissingExtraError) as caught:
        importlib.import_module(module)
    message = str(caught.value)
    assert "\n" not in message
    assert library in message and "pip install 'loveletter-arena[rl]'" in message
    assert isinstance(caught.value, ArenaError) and isinstance(caught.value, ImportError)
