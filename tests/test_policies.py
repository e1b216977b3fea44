"""Every reference bot: each declared by its own module and found there, legal answers
everywhere, one decision function for the bot and the simulator, and the simulator's own
behaviour."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from positions import random_positions

import bots
from arena.cli.main import cli
from arena.engine.rng import new_rng
from arena.errors import UnknownBotError
from arena.game import Action, Card, Game
from arena.hosting.plugins import load_registry
from bots.policy import (
    DeclarationError,
    PlainBot,
    PolicyInfo,
    policies,
    policy_bot,
    read_declaration,
    reference_bots,
)
from bots.simulate import compiled_policy, simulate

CONFIGS = [("classic", 2), ("classic", 3), ("classic", 4), ("huibers", 2)]
NAMES = list(policies())


def quick_bot(name: str):
    """The bot ``name`` with every count parameter (playouts, iterations, determinizations...)
    cut to at most 8: these tests check legality and one-decision identity over thousands of
    positions, not strength, and the search bots' defaults would take minutes."""
    info = policies()[name]
    small = {k: min(v, 8) for k, v in info.params.items() if isinstance(v, int) and v > 8}
    return policy_bot(name)(**small)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("variant", "players"), CONFIGS)
def test_policy_bots_answer_legal_actions_only(name: str, variant: str, players: int) -> None:
    bot = quick_bot(name)
    bot.reset(7)
    seen = 0
    for game, seat in random_positions(variant, players, 150, seed=players):
        obs = game.observation(seat)
        assert bot.act(obs) in obs.legal_actions
        seen += 1
    assert seen > 500


# --- one module per bot ---------------------------------------------------------------------


def test_the_package_declares_the_reference_bots_in_their_listing_order() -> None:
    assert list(reference_bots()) == [
        "uniform",
        "random",
        "strategic",
        "knowledge",
        "greedy",
        "riskmatrix",
        "dp",
        "montecarlo",
        "minimax",
        "pimc",
        "ismcts",
        "ace",
    ]
    assert isinstance(reference_bots()["uniform"], PlainBot)
    assert isinstance(reference_bots()["ace"], PlainBot)  # it needs the round's events
    assert list(policies()) == [n for n in reference_bots() if n not in ("uniform", "ace")]
    registry = load_registry(only="reference")
    assert list(registry.bots) == list(reference_bots())


@pytest.mark.parametrize("name", list(reference_bots()))
def test_a_declaration_read_from_the_source_is_the_modules_own(name: str) -> None:
    """The plugin reads each ``BOT`` without importing its module: what it reads is what the
    module, imported, declares; a policy bot's policy answers in the simulator's signature."""
    declared = reference_bots()[name]
    module = importlib.import_module(declared.module)
    assert declared == module.BOT and type(module.BOT) is type(declared)
    assert declared.path == Path(module.__file__).resolve()
    if isinstance(declared, PolicyInfo):
        assert compiled_policy(declared) is getattr(module, f"{name}_policy")


def test_a_declaration_must_be_literal(tmp_path: Path) -> None:
    plain = tmp_path / "plain.py"
    plain.write_text('"""No bot here."""\nBOTTLE = 1\n')
    assert read_declaration(plain, "bots.plain") is None
    bad = tmp_path / "bad.py"
    bad.write_text(
        "LIMIT = 3\nBOT = PolicyInfo(name='bad', description='x', params={'n': LIMIT})\n"
    )
    with pytest.raises(DeclarationError, match="literals"):
        read_declaration(bad, "bots.bad")
    bad.write_text("BOT = make_bot('bad')\n")
    with pytest.raises(DeclarationError, match="PolicyInfo or PlainBot"):
        read_declaration(bad, "bots.bad")


ELEVENTH = '''"""A bot that is one module: it plays its last legal action."""

from numba import types

from arena.engine.jit import njit
from bots.policy import MAX_COUNT, PolicyInfo

BOT = PolicyInfo(
    name="eleventh",
    description="the last legal action",
    params={"unused": 1},
    ranges={"unused": (1, MAX_COUNT)},
)


@njit(cache=True)
def eleventh_policy(view, legal, nlegal, rng, params, table):
    return types.int64(legal[nlegal - 1])
'''


def test_adding_a_bot_is_adding_a_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "eleventh.py").write_text(ELEVENTH)
    monkeypatch.setattr(bots, "__path__", [*bots.__path__, str(tmp_path)])
    reference_bots.cache_clear()
    try:
        assert list(reference_bots())[-1] == "eleventh"
        registry = load_registry(only="reference")
        assert registry.bots["eleventh"].params == {"unused": 1}
        _, bot = registry.build("eleventh[unused=3]")
        game = Game(2, "classic", seed=1)
        obs = game.observation(game.turn)
        assert bot.act(obs) == obs.legal_actions[-1]
        result = simulate(["eleventh", "random"], 500, seed=2)
        assert sum(result.wins) + result.draws == 500
    finally:
        reference_bots.cache_clear()
        sys.modules.pop("bots.eleventh", None)


# --- one decision function ----------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_act_and_the_policy_on_the_engine_view_are_one_decision(name: str) -> None:
    """On thousands of recorded observations, the bot's act (observation -> view round trip) and
    the compiled policy on the engine's own view, with equally seeded generators, agree."""
    bot = quick_bot(name)
    params = bot.params
    policy = compiled_policy(bot.info)
    count = 0
    for variant, players in CONFIGS:
        for game, seat in random_positions(variant, players, 120, seed=11 + players):
            key = len(game.actions) * 31 + seat
            bot.state = new_rng(key)
            chosen = bot.act(game.observation(seat))
            legal = np.array(game.legal_packed(), dtype=np.int32)
            view = game.view(seat)
            rng = new_rng(key)
            direct = policy(view, legal, len(legal), rng, params, bot.table)
            assert chosen == Action.from_int(int(direct))
            count += 1
    assert count >= 2000


def test_random_never_plays_the_princess_and_respects_the_countess() -> None:
    bot = policy_bot("random")()
    # huibers: seat 0 holds the Princess and draws a Guard; with the Countess and a Prince.
    deck_princess = [3, 8, 2, 1, 1, 1, 1, 1, 2, 3, 4, 4, 5, 5, 6, 7]
    deck_countess = [3, 7, 2, 5, 1, 1, 1, 1, 1, 2, 3, 4, 4, 5, 6, 8]
    for seed in range(200):
        bot.reset(seed)
        assert bot.act(Game(2, "huibers", deck=deck_princess).observation(0)).card == Card.GUARD
        assert bot.act(Game(2, "huibers", deck=deck_countess).observation(0)) == Action(
            Card.COUNTESS
        )


def test_random_guesses_every_card_but_the_guard_and_targets_itself_when_it_must() -> None:
    bot = policy_bot("random")()
    guard_deck = [3, 1, 2, 1, 1, 1, 1, 2, 3, 4, 4, 5, 5, 6, 7, 8]  # two Guards in hand
    guesses = set()
    for seed in range(300):
        bot.reset(seed)
        action = bot.act(Game(2, "huibers", deck=guard_deck).observation(0))
        assert action.card == Card.GUARD and action.target == 1
        guesses.add(action.guess)
    assert guesses == {Card(v) for v in range(2, 9)}
    # Seat 1 plays the Handmaid; seat 0 then holds two Princes: it must target itself.
    game = Game(2, "huibers", deck=[3, 5, 4, 1, 5, 1, 1, 1, 1, 2, 2, 3, 4, 6, 7, 8], first=1)
    game.play("Handmaid")
    targets = set()
    for seed in range(50):
        bot.reset(seed)
        targets.add(bot.act(game.observation(0)))
    assert targets == {Action(Card.PRINCE, 0)}
    # Without protection it targets the opponent or itself, each about half the time.
    game = Game(2, "huibers", deck=[3, 5, 1, 5, 1, 1, 1, 1, 2, 2, 3, 4, 4, 6, 7, 8])
    picks = []
    for seed in range(400):
        bot.reset(seed)
        picks.append(bot.act(game.observation(0)).target)
    assert 150 < picks.count(0) < 250 and picks.count(0) + picks.count(1) == 400


def test_random_against_random_has_a_first_seat_advantage() -> None:
    result = simulate(["random", "random"], 200_000, "huibers", seed=3)
    assert result.first_seat_ci[0] > 0.5
    assert sum(result.wins) + result.draws == 200_000


def test_simulation_is_deterministic_and_reports_json() -> None:
    a = simulate(["random", "random", "random"], 20_000, "classic", seed=5)
    b = simulate(["random", "random", "random"], 20_000, "classic", seed=5)
    assert (a.wins, a.draws) == (b.wins, b.draws)
    result = CliRunner().invoke(cli, ["simulate", "random", "random", "--games", "5000", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) >= {
        "games",
        "wins",
        "draws",
        "first_seat_rate",
        "first_seat_ci",
        "rounds_per_s",
    }
    assert data["games"] == 5000 and sum(data["wins"]) + data["draws"] == 5000
    lo, hi = data["first_seat_ci"]
    assert lo <= data["first_seat_rate"] <= hi


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["simulate", "random", "uniform"], "no numba policy"),
        (["simulate", "random", "random", "random", "--variant", "huibers"], "2 players"),
        (["simulate", "random[speed=3]", "random"], "no parameter 'speed'"),
        (["simulate", "random", "random", "--games", "0"], "--games"),
    ],
)
def test_simulate_bad_input_is_one_line_and_exit_2(args: list[str], needle: str) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error:") and needle in lines[0]


def test_simulate_refuses_bots_without_a_policy_in_the_api() -> None:
    with pytest.raises(UnknownBotError, match="no numba policy"):
        simulate(["uniform", "random"], 10)
