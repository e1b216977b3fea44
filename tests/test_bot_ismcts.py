"""The ``ismcts`` bot (SO-ISMCTS, Cowling et al. 2012, as Omarov et al. 2018 use it): legal
answers everywhere, the obvious win found in hand-built deals, the tree's invariants, the time
budget, and its strength against the random player.

Deals are written top card first (docs/rules.md): ``deck[0]`` is set aside, in a two-player
``classic`` round ``deck[1..3]`` lie face up, then one card per seat in seat order, then the draw
pile. ``deal(*top)`` puts the given cards on top and the rest of the 16 below them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest
from positions import bot_choice, random_positions
from scipy.stats import binomtest

from arena.engine.rng import new_rng
from arena.game import Action, Game
from bots.ismcts import ismcts_policy, ismcts_search
from bots.mcts_tree import (
    F_ACTION,
    F_AVAIL,
    F_PARENT,
    F_PLAYER,
    F_VISITS,
    backpropagate,
    new_tree,
)
from bots.mcts_tree import (
    children as tree_children,
)
from bots.policy import policies, policy_bot
from bots.simulate import simulate

CONFIGS = [("classic", 2), ("classic", 3), ("classic", 4), ("huibers", 2)]
#: The ``table`` argument of a policy that reads none.
NO_TABLE = np.zeros(0, dtype=np.int16)


def choice(game: Game, seed: int = 0, **settings: float) -> Action:
    """What ``ismcts`` (default parameters unless ``settings``) plays for the seat to move."""
    return bot_choice("ismcts", game, seed, **settings)


def positions(variant: str, players: int, rounds: int, seed: int) -> Iterator[Game]:
    """Every decision of ``rounds`` rounds of uniformly random play."""
    return (game for game, _ in random_positions(variant, players, rounds, seed))


# --- registration ---------------------------------------------------------------------------------


def test_registered_with_the_papers_parameters() -> None:
    info = policies()["ismcts"]
    assert info.params == {"iterations": 1000, "c": 0.7, "seconds": 0.0}
    assert info.variants == ("classic", "huibers") and info.players == (2, 3, 4)


# --- legal answers --------------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "players"), CONFIGS)
def test_answers_legal_actions_only(variant: str, players: int) -> None:
    bot = policy_bot("ismcts")(iterations=60)
    bot.reset(3)
    seen = 0
    for game in positions(variant, players, 40, seed=20 + players):
        obs = game.observation(game.turn)
        assert bot.act(obs) in obs.legal_actions
        seen += 1
    assert seen > 150


def test_default_parameters_answer_legal_actions_in_every_configuration() -> None:
    bot = policy_bot("ismcts")()
    for variant, players in CONFIGS:
        for i, game in enumerate(positions(variant, players, 3, seed=40 + players)):
            bot.reset(i)
            obs = game.observation(game.turn)
            assert bot.act(obs) in obs.legal_actions


def test_same_seed_same_choice() -> None:
    game = Game(3, "classic", seed=8)
    assert len({choice(game, seed=5, iterations=300) for _ in range(3)}) == 1


# --- the tree -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "players"), CONFIGS)
def test_tree_invariants(variant: str, players: int) -> None:
    """After a small search: the root's children's visits sum to the iterations; every node has
    at least as many availabilities as visits and at least as many visits as its children
    together; one node per iteration at most; root children are the seat's legal actions, played
    by the seat; an opponent's node is played by the seat that moves after its parent's action."""
    game = next(g for g in positions(variant, players, 5, seed=17) if len(g.legal_actions()) > 2)
    seat = game.turn
    view = game.view(seat)
    iterations = 400
    nodes, value = new_tree(iterations + 1)
    assert ismcts_search(view, new_rng(1), nodes, value, iterations, 0.7, 0.0) == iterations
    root = tree_children(nodes, 0)
    assert int(nodes[0, F_VISITS]) == iterations
    assert sum(int(nodes[ch, F_VISITS]) for ch in root) == iterations
    assert {int(nodes[ch, F_ACTION]) for ch in root} == set(game.legal_packed())
    assert all(int(nodes[ch, F_PLAYER]) == seat for ch in root)
    # Root children are legal in every determinization: available since they were added.
    assert all(int(nodes[ch, F_AVAIL]) <= iterations for ch in root)
    tree = [0]
    for node in tree:  # breadth first: every node reachable from the root
        tree.extend(tree_children(nodes, node))
    assert len(tree) == len(set(tree)) <= iterations + 1
    for node in tree[1:]:
        visits = int(nodes[node, F_VISITS])
        assert visits >= 1
        assert int(nodes[node, F_AVAIL]) >= visits
        assert 0 <= value[node] <= visits
        kids = tree_children(nodes, node)
        assert sum(int(nodes[ch, F_VISITS]) for ch in kids) <= visits
        assert all(int(nodes[ch, F_PARENT]) == node for ch in kids)
        if int(nodes[node, F_PARENT]) == 0:
            # After the seat's own action (the round going on) another seat moves.
            assert all(int(nodes[ch, F_PLAYER]) != seat for ch in kids)


def test_each_node_scores_the_share_of_the_seat_that_plays_it() -> None:
    """Max-n backpropagation: seat 1 wins a 3-player round alone; a node played by seat 1 gets
    1, nodes played by seats 0 and 2 get 0; a shared win gives each winner half."""
    nodes, value = new_tree(4)
    for i, player in ((1, 0), (2, 1), (3, 2)):
        nodes[i] = [0, i - 1, -1, -1, 0, 0, player, 0]
        value[i] = 0.0
    path = np.array([0, 1, 2, 3], dtype=np.int32)
    backpropagate(nodes, value, path, 3, np.array([0.0, 1.0, 0.0, 0.0]))
    assert list(value[1:4]) == [0.0, 1.0, 0.0]
    backpropagate(nodes, value, path, 3, np.array([0.5, 0.0, 0.5, 0.0]))
    assert list(value[1:4]) == [0.5, 1.0, 0.5]
    assert list(nodes[:4, F_VISITS]) == [2, 2, 2, 2]


# --- time budget ----------------------------------------------------------------------------------


@pytest.mark.alone
def test_time_budget_iterates_for_the_given_seconds() -> None:
    game = Game(2, "classic", seed=5)
    view = game.view(game.turn)
    legal = np.array(game.legal_packed(), dtype=np.int32)
    params = np.array([10.0, 0.7, 0.05])
    ismcts_policy(view, legal, len(legal), new_rng(0), params, NO_TABLE)  # compile or load
    nodes, value = new_tree(1 << 16)
    begun = time.perf_counter()
    done = ismcts_search(view, new_rng(1), nodes, value, 10, 0.7, 0.05)
    spent = time.perf_counter() - begun
    assert 0.05 <= spent < 0.5
    assert done > 10 and int(nodes[0, F_VISITS]) == done
    begun = time.perf_counter()
    assert ismcts_policy(view, legal, len(legal), new_rng(2), params, NO_TABLE) in legal
    assert time.perf_counter() - begun < 0.5


# --- strength -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "players"), [("classic", 2), ("huibers", 2), ("classic", 3)])
def test_beats_random_from_either_seat(variant: str, players: int) -> None:
    """A small search (100 iterations) already wins more than its fair share against ``random``
    from the first and from the last seat (one-sided binomial tests)."""
    fair = 1 / players
    bots = ["random"] * (players - 1)
    first = simulate(["ismcts[iterations=100]", *bots], 300, variant, seed=31)
    last = simulate([*bots, "ismcts[iterations=100]"], 300, variant, seed=32)
    for wins in (first.wins[0], last.wins[-1]):
        assert binomtest(wins, 300, fair, alternative="greater").pvalue < 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["classic", "huibers"])
def test_default_parameters_beat_random(variant: str) -> None:
    """With the paper's parameters, more than 60% against ``random`` over both seats."""
    first = simulate(["ismcts", "random"], 1000, variant, seed=41)
    last = simulate(["random", "ismcts"], 1000, variant, seed=42)
    wins = first.wins[0] + last.wins[1]
    assert binomtest(wins, 2000, 0.6, alternative="greater").pvalue < 0.01
