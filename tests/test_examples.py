"""The example bot package ``examples/loveletter-cautious``, used as a user would use it: installed
with pip, found through its entry point by the real ``arena`` command, and played."""

from __future__ import annotations

import dataclasses
import importlib.metadata as md
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.game import Action, Card, Game

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "loveletter-cautious"


def _builds_offline() -> bool:
    """Whether this environment's setuptools can build a wheel with nothing downloaded."""
    if importlib.util.find_spec("wheel") is not None:
        return True
    try:
        major, minor = (int(x) for x in md.version("setuptools").split(".")[:2])
    except (md.PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (70, 1)  # bdist_wheel ships with setuptools since 70.1


def pip_install(source: Path, target: Path) -> None:
    """``pip install`` the package at ``source`` into the directory ``target``, as a user would
    (from a copy, so no build files are left in ``source``)."""
    copy = target.parent / f"{source.name}-src"
    shutil.copytree(
        source, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    command += ["--disable-pip-version-check", "--target", str(target), str(copy)]
    if _builds_offline():
        command.insert(4, "--no-build-isolation")
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        if "No matching distribution found for setuptools" in done.stderr:
            pytest.skip("cannot build a wheel here: no 'wheel' package and no package index")
        pytest.fail(f"pip install {source.name} failed:\n{done.stderr[-2000:]}")


def arena(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the real ``arena`` command with the packages installed in ``site`` visible."""
    script = Path(sys.executable).with_name("arena")
    command = [str(script) if script.exists() else shutil.which("arena") or "arena", *args]
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def arena_json(site: Path, *args: str, cwd: Path) -> Any:
    """The JSON an ``arena ... --json`` command prints; fails the test on a non-zero exit."""
    done = arena(site, *args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with ``loveletter-cautious`` pip-installed into it."""
    target = tmp_path_factory.mktemp("cautious") / "site"
    pip_install(EXAMPLE, target)
    return target


def test_the_installed_bot_is_listed_with_its_distribution(site: Path) -> None:
    data = arena_json(site, "bots", "--sandbox", "none", cwd=site.parent)
    bots = {b["name"]: b for b in data["bots"]}
    assert data["errors"] == []
    entry = bots["cautious"]
    assert entry["distribution"] == "loveletter-cautious" and entry["version"] == "0.1.0"
    assert entry["plugin"] == "cautious"
    assert entry["params"] == {"aggression": 0.5}
    assert "uniform" in bots


def test_it_plays_a_round_in_the_default_sandbox(site: Path, bubblewrap: None) -> None:
    record = arena_json(site, "play", "cautious", "uniform", "--seed", "7", cwd=site.parent)
    assert record["seats"] == ["cautious", "uniform"]
    assert record["faults"] == []
    assert record["winners"] and record["moves"][0] > 0


def test_it_plays_a_match_configured_without_a_sandbox(site: Path) -> None:
    match = arena_json(
        site,
        "play",
        "cautious[aggression=0.8]",
        "uniform",
        "uniform",
        "--match",
        "--sandbox",
        "none",
        cwd=site.parent,
    )
    assert match["seats"][0] == "cautious[aggression=0.8]"
    assert max(match["tokens"]) >= 5
    assert all(r["faults"] == [] for r in match["rounds"])


def test_an_unknown_parameter_is_a_one_line_error(site: Path) -> None:
    done = arena(
        site, "play", "cautious[boldness=1]", "uniform", "--sandbox", "none", cwd=site.parent
    )
    assert done.returncode == 2
    assert done.stderr.startswith("arena: error: ") and done.stderr.count("\n") == 1
    assert "boldness" in done.stderr and "aggression" in done.stderr


# --- the bot itself, imported from the example's source -------------------------------------


@pytest.fixture
def cautious(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The example's bot class (imported from its source tree: no entry point is made visible)."""
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    from loveletter_cautious.bot import CautiousBot

    return CautiousBot


@pytest.mark.parametrize(
    ("variant", "players"), [("classic", 2), ("classic", 3), ("classic", 4), ("huibers", 2)]
)
def test_always_legal_and_never_the_princess_by_choice(
    cautious: Any, variant: str, players: int
) -> None:
    rng = random.Random(players)
    for _ in range(60):
        game = Game(players, variant, seed=rng.randrange(2**32), first=rng.randrange(players))
        bots = [cautious(aggression=rng.random()) for _ in range(players)]
        for bot in bots:
            bot.reset(rng.randrange(2**32))
        while not game.over:
            observation = game.observation(game.turn)
            action = bots[game.turn].act(observation)
            assert action in observation.legal_actions
            if action.card == Card.PRINCESS:
                assert {a.card for a in observation.legal_actions} == {Card.PRINCESS}
            game.play(action)


# Seat 0 holds the Handmaid and draws a Guard; seat 1 holds the King. Face up: Guard, Guard, Priest.
DECK = [1, 1, 1, 2, 4, 6, 1, 1, 2, 3, 3, 4, 5, 5, 7, 8]


def test_guards_the_likeliest_card_or_the_one_it_knows(cautious: Any) -> None:
    observation = Game(2, deck=DECK).observation(0)
    assert set(observation.hand) == {Card.GUARD, Card.HANDMAID}
    bot = cautious()
    # Unseen by seat 0: two Barons and two Princes, one of every other card but the Guard.
    for seed in range(10):
        bot.reset(seed)
        action = bot.act(observation)
        assert action.card == Card.GUARD and action.guess in (Card.BARON, Card.PRINCE)
    knows_king = dataclasses.replace(observation, known=(None, Card.KING))
    assert bot.act(knows_king) == Action(Card.GUARD, 1, Card.KING)


def test_plays_the_card_an_opponent_knows_it_holds(cautious: Any) -> None:
    observation = Game(2, deck=DECK).observation(0)
    watched = dataclasses.replace(observation, known_by=(None, Card.HANDMAID))
    assert cautious().act(watched) == Action(Card.HANDMAID)


def test_aggression_is_checked(cautious: Any) -> None:
    with pytest.raises(ValueError, match="aggression"):
        cautious(aggression=1.5)
