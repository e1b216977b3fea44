"""The example package ``examples/loveletter-ppo``: the trained bot plays legal moves from the
arena's observation encoding with NumPy alone, its trainer's gradient is PPO's, and (slow) the
package, installed, passes ``arena check`` and a short training run works."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arena.game import Action, Card, Game

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "loveletter-ppo"


@pytest.fixture
def ppo(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The example's modules, imported from its source tree."""
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    import loveletter_ppo.bot
    import loveletter_ppo.network

    return loveletter_ppo


def test_the_shipped_weights_fit_the_encoding(ppo: Any) -> None:
    from arena.rl.encoding import N_ACTIONS, OBSERVATION_SIZE

    network = ppo.network.Network.load()
    assert network.w1.shape[0] == OBSERVATION_SIZE
    assert network.wp.shape[1] == N_ACTIONS
    assert all(a.dtype == np.float32 for a in network.arrays().values())


def test_it_plays_only_legal_actions(ppo: Any) -> None:
    rng = random.Random(3)
    bot = ppo.bot.PPOBot()
    for _ in range(100):
        game = Game(2, "classic", seed=rng.randrange(2**32), first=rng.randrange(2))
        bot.reset(rng.randrange(2**32))
        while not game.over:
            observation = game.observation(game.turn)
            action = bot.act(observation)
            assert action in observation.legal_actions
            game.play(action)


def test_it_wins_with_a_guard_it_cannot_miss(ppo: Any) -> None:
    """Seat 0 holds the Handmaid and draws a Guard, and a King swap showed it seat 1's card: a
    Guard naming that card wins the round, and the network finds it."""
    import dataclasses

    deck = [1, 1, 1, 2, 4, 6, 1, 1, 2, 3, 3, 4, 5, 5, 7, 8]
    seen = Game(2, deck=deck).observation(0)
    knows = dataclasses.replace(seen, known=(None, Card.KING))
    assert ppo.bot.PPOBot().act(knows) == Action(Card.GUARD, 1, Card.KING)


def test_a_temperature_draws_from_the_round_s_seed(ppo: Any) -> None:
    observation = Game(2, seed=5).observation(0)
    bot = ppo.bot.PPOBot(temperature=2.0)
    plays = []
    for _ in range(2):
        bot.reset(11)
        plays.append([bot.act(observation) for _ in range(20)])
    assert plays[0] == plays[1]
    assert len(set(plays[0])) > 1
    with pytest.raises(ValueError, match="temperature"):
        ppo.bot.PPOBot(temperature=-1.0)


def test_the_trainer_s_gradient_is_ppo_s(ppo: Any) -> None:
    """The hand-written backward pass against finite differences of PPO's loss, on a small
    network in float64."""
    pytest.importorskip("gymnasium")
    from loveletter_ppo.network import NAMES, Network, masked_log_softmax
    from loveletter_ppo.train import Settings, gradients

    rng = np.random.default_rng(0)
    settings = Settings(max_norm=1e9)
    network = Network.initial(10, 6, 8, rng)
    for name in NAMES:
        value = getattr(network, name).astype(np.float64)
        setattr(network, name, value + rng.normal(0, 0.3, value.shape))
    n = 7
    obs = rng.normal(size=(n, 10))
    mask = (rng.uniform(size=(n, 6)) < 0.6).astype(np.int8)
    mask[:, 0] = 1
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
    logits = network.forward(obs)[0]
    old = masked_log_softmax(logits, mask)[np.arange(n), actions] + rng.normal(0, 0.3, n)
    advantages, returns = rng.normal(size=n), rng.normal(size=n)

    def loss() -> float:
        logits, values, _, _ = network.forward(obs)
        logp = masked_log_softmax(logits, mask)
        ratio = np.exp(logp[np.arange(n), actions] - old)
        clipped = np.clip(ratio, 1 - settings.clip, 1 + settings.clip)
        surrogate = np.minimum(ratio * advantages, clipped * advantages)
        p = np.exp(logp)
        entropy = -(p * np.where(mask.astype(bool), logp, 0.0)).sum(axis=1)
        value_loss = 0.5 * ((values - returns) ** 2).mean()
        return float(
            -surrogate.mean() - settings.entropy * entropy.mean() + settings.value * value_loss
        )

    grads = gradients(network, obs, mask, actions, old, advantages, returns, settings)
    for name in NAMES:
        param = getattr(network, name)
        numeric = np.zeros_like(param)
        for i in np.ndindex(param.shape):
            kept = param[i]
            param[i] = kept + 1e-6
            above = loss()
            param[i] = kept - 1e-6
            below = loss()
            param[i] = kept
            numeric[i] = (above - below) / 2e-6
        assert np.allclose(grads[name], numeric, atol=1e-6), name


def test_the_budget_is_iterations_and_minutes_only_cap_it(ppo: Any) -> None:
    """A run trains exactly ``--iterations`` whatever the machine's load; a wall-time cap that
    runs out first stops it, and the caller learns how many it had."""
    pytest.importorskip("gymnasium")
    from loveletter_ppo.train import Settings, train

    settings = Settings(envs=4, steps=4)
    network, done = train(settings, 2, report=10)
    assert done == 2
    assert train(settings, 50, seconds=0.0, report=10)[1] == 0
    again, _ = train(settings, 2, report=10)
    assert all(
        np.array_equal(a, b)
        for a, b in zip(network.arrays().values(), again.arrays().values(), strict=True)
    )


def test_training_sets_one_blas_thread_before_numpy() -> None:
    """Whatever the caller's environment says, the trainer's BLAS runs one thread (its small
    matrices ran about ten times slower with OpenBLAS's threads on a busy machine)."""
    code = "import loveletter_ppo.train, os; print(os.environ['OPENBLAS_NUM_THREADS'])"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(EXAMPLE / "src"), "OPENBLAS_NUM_THREADS": "8"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.strip() == "1", done.stderr


def test_a_weights_parameter_plays_other_weights(ppo: Any, tmp_path: Path) -> None:
    shipped = ppo.network.Network.load()
    other = ppo.network.Network(*(np.zeros_like(a) for a in shipped.arrays().values()))
    other.save(tmp_path / "zero.npz")
    played = ppo.bot.PPOBot(weights=str(tmp_path / "zero.npz")).network
    assert not np.any(played.w1) and np.any(ppo.bot.PPOBot().network.w1)
    (tmp_path / "junk.npz").write_text("not weights")
    with pytest.raises(ValueError, match="cannot load the weights"):
        ppo.bot.PPOBot(weights=str(tmp_path / "junk.npz"))


@pytest.mark.slow
def test_installed_it_passes_arena_check(tmp_path: Path) -> None:
    from test_examples import arena, pip_install

    site = tmp_path / "site"
    pip_install(EXAMPLE, site)
    listed = arena(site, "bots", "--sandbox", "none", cwd=tmp_path)
    assert "ppo" in listed.stdout and "loveletter-ppo" in listed.stdout
    checked = arena(site, "check", "ppo", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "passed: all" in checked.stdout
    # another training's weights beside the shipped ones: a bad path is one line, exit 2
    refused = arena(site, "match", "ppo", "ppo[weights=missing.npz]", "--games", "2", cwd=tmp_path)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "weights=missing.npz is refused" in refused.stderr and "Traceback" not in refused.stderr
    shutil.copy(EXAMPLE / "src" / "loveletter_ppo" / "weights.npz", tmp_path / "mine.npz")
    db = f"sqlite:///{tmp_path}/m.db"
    mine = ["ppo[weights=mine.npz]", "--games", "2", "--sandbox", "none", "--db", db]
    played = arena(site, "match", "ppo", *mine, cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    assert "ppo vs ppo[weights=" in played.stdout


@pytest.mark.slow
def test_a_short_training_run_saves_weights_that_play(tmp_path: Path) -> None:
    pytest.importorskip("gymnasium")
    out = tmp_path / "weights.npz"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "loveletter_ppo.train",
            "--iterations",
            "3",
            "--report",
            "2",
            "--minutes",
            "5",
            "--out",
            str(out),
        ],
        cwd=EXAMPLE,
        env={**os.environ, "PYTHONPATH": str(EXAMPLE / "src")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "score over 2,000 rounds" in done.stdout and "iteration 2 " in done.stdout
    assert "cut training short" not in done.stdout
    sys.path.insert(0, str(EXAMPLE / "src"))
    try:
        from loveletter_ppo.bot import PPOBot
        from loveletter_ppo.network import Network

        bot = PPOBot(network=Network.load(out))
        observation = Game(2, seed=1).observation(0)
        assert bot.act(observation) in observation.legal_actions
    finally:
        sys.path.remove(str(EXAMPLE / "src"))
