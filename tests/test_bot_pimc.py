"""The ``pimc`` bot (Perfect Information Monte Carlo, Omarov et al. 2018): legal answers
everywhere, the obvious win found in hand-built deals, the per-deal UCT tree on full engine
states, the vote, the time budget, and its strength against the random player.

Deals are written top card first (docs/rules.md): ``deck[0]`` is set aside, in a two-player
``classic`` round ``deck[1..3]`` lie face up, then one card per seat in seat order, then the draw
pile. ``deal(*top)`` puts the given cards on top and the rest of the 16 below them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest
from positions import after, bot_choice, deal, random_positions
from scipy.stats import binomtest

from arena.engine.layout import S_TURN, STATE_SIZE, VIEW_SIZE
from arena.engine.rng import new_rng
from arena.game import Action, Card, Game
from bots.guard_rule import GUARDS_DRAWN, GUARDS_RULE, GUARDS_WHOLE, draw_guess, played_guess
from bots.mcts_tree import (
    F_ACTION,
    F_AVAIL,
    F_PLAYER,
    F_VISITS,
    best_child,
    new_scratch,
    new_tree,
)
from bots.mcts_tree import (
    children as tree_children,
)
from bots.pimc import pimc_policy, pimc_search, uct_search
from bots.policy import policies, policy_bot
from bots.simulate import simulate

CONFIGS = [("classic", 2), ("classic", 3), ("classic", 4), ("huibers", 2)]
#: The ``table`` argument of a policy that reads none.
NO_TABLE = np.zeros(0, dtype=np.int16)
SMALL = {"determinizations": 6, "iterations": 20}


def choice(game: Game, seed: int = 0, **settings: float) -> Action:
    """What ``pimc`` (default parameters unless ``settings``) plays for the seat to move."""
    return bot_choice("pimc", game, seed, **settings)


def positions(variant: str, players: int, rounds: int, seed: int) -> Iterator[Game]:
    """Every decision of ``rounds`` rounds of uniformly random play."""
    return (game for game, _ in random_positions(variant, players, rounds, seed))


def uct(
    state: np.ndarray, iterations: int, seed: int, guards: int = GUARDS_WHOLE
) -> tuple[np.ndarray, np.ndarray, int]:
    """One perfect-information UCT search (``c`` = 0.7) on the full engine state ``state``, its
    Guards guessing as ``guards`` says (:mod:`bots.guard_rule`)."""
    nodes, value = new_tree(iterations + 1)
    acts, childof, path, shares, ev = new_scratch()
    count = uct_search(
        state, int(state[S_TURN]), new_rng(seed), nodes, value, iterations, 0.7,
        np.empty(STATE_SIZE, dtype=np.int32), np.zeros(VIEW_SIZE, dtype=np.int32),
        acts, childof, path, shares, ev, guards, False,
    )  # fmt: skip
    return nodes, value, count


# --- registration ---------------------------------------------------------------------------------


def test_registered_with_the_papers_parameters() -> None:
    info = policies()["pimc"]
    assert info.params == {
        "determinizations": 50,
        "iterations": 160,
        "c": 0.7,
        "seconds": 0.0,
        "guard_rule": True,
        "code_playouts": True,
        "code_rules": True,
        "guard_draw": True,
    }
    assert info.variants == ("classic", "huibers") and info.players == (2, 3, 4)


# --- legal answers --------------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "players"), CONFIGS)
def test_answers_legal_actions_only(variant: str, players: int) -> None:
    bot = policy_bot("pimc")(**SMALL)
    bot.reset(3)
    seen = 0
    for game in positions(variant, players, 40, seed=60 + players):
        obs = game.observation(game.turn)
        assert bot.act(obs) in obs.legal_actions
        seen += 1
    assert seen > 150


def test_default_parameters_answer_legal_actions_in_every_configuration() -> None:
    bot = policy_bot("pimc")()
    for variant, players in CONFIGS:
        for i, game in enumerate(positions(variant, players, 2, seed=80 + players)):
            bot.reset(i)
            obs = game.observation(game.turn)
            assert bot.act(obs) in obs.legal_actions


def test_same_seed_same_choice() -> None:
    game = Game(3, "classic", seed=8)
    assert len({choice(game, seed=5, **SMALL) for _ in range(3)}) == 1


# --- one perfect-information tree -----------------------------------------------------------------


def test_uct_on_the_true_state_sees_the_hidden_card() -> None:
    """On the full state (what PIMC searches after a determinization), seat 1's Priest is
    visible: the tree's most visited root action is the Guard naming it, although seat 0 never
    looked (its Guard against an unknown card would otherwise name anything)."""
    game = Game(2, "huibers", deck=deal(8, 1, 2, 4))
    assert game.hand(0) == (Card.GUARD, Card.HANDMAID) and game.hand(1) == (Card.PRIEST,)
    nodes, value, _ = uct(game.state, 200, seed=1)
    best = best_child(nodes, value, 0)
    assert Action.from_int(int(nodes[best, F_ACTION])) == Action.from_str("Guard->1:Priest")
    assert value[best] == nodes[best, F_VISITS]  # it wins every time


def test_with_the_guard_rule_a_guard_names_what_the_seat_could_guess() -> None:
    """With ``guard_rule`` (the default) the tree cannot read seat 1's card off the deal: its one
    Guard action names the rule's guess, the Priest (two copies unaccounted for, ties to the
    lowest value), which hits seat 1's Priest here; when seat 1 holds the Baron instead, the
    Guard names the Priest all the same, and misses."""
    game = Game(2, "huibers", deck=deal(8, 1, 2, 4))
    nodes, _, _ = uct(game.state, 200, seed=1, guards=GUARDS_RULE)
    guards = [
        Action.from_int(int(nodes[ch, F_ACTION]))
        for ch in tree_children(nodes, 0)
        if Action.from_int(int(nodes[ch, F_ACTION])).card == Card.GUARD
    ]
    assert guards == [Action.from_str("Guard->1:Priest")]
    baron = Game(2, "huibers", deck=deal(8, 1, 3, 4))
    assert baron.hand(1) == (Card.BARON,)
    nodes, value, _ = uct(baron.state, 200, seed=1, guards=GUARDS_RULE)
    [guard] = [
        ch
        for ch in tree_children(nodes, 0)
        if Action.from_int(int(nodes[ch, F_ACTION])).card == Card.GUARD
    ]
    assert Action.from_int(int(nodes[guard, F_ACTION])) == Action.from_str("Guard->1:Priest")
    assert value[guard] < nodes[guard, F_VISITS]  # it does not always win


def test_with_drawn_guards_a_guard_is_one_node_whose_guess_is_drawn_at_every_play() -> None:
    """With ``guard_draw`` (the default) a Guard at a target is one node (its key, no guess) and
    the guess is drawn each time it is played: against seat 1's Priest it hits in some iterations
    and misses in others (with the rule alone it named the Priest in every iteration, above)."""
    game = Game(2, "huibers", deck=deal(8, 1, 2, 4))
    nodes, value, _ = uct(game.state, 400, seed=1, guards=GUARDS_DRAWN)
    [guard] = [ch for ch in tree_children(nodes, 0) if int(nodes[ch, F_ACTION]) & 15 == Card.GUARD]
    key = int(nodes[guard, F_ACTION])  # the Guard at seat 1 naming nothing, not an Action
    assert key == Card.GUARD | (1 + 1) << 4
    assert 0 < value[guard] < nodes[guard, F_VISITS]


# --- the Guard's guess (the authors' draw) ----------------------------------------------------


def left_counts(**copies: int) -> np.ndarray:
    """Unaccounted copies per value (index 0 unused), from ``Card`` names in lower case."""
    left = np.zeros(9, dtype=np.int32)
    for name, n in copies.items():
        left[Card[name.upper()]] = n
    return left


def test_the_drawn_guess_is_the_known_card_else_after_a_countess_a_prince_or_the_king() -> None:
    rng = new_rng(0)
    many = left_counts(priest=2, baron=2, prince=1, king=1)
    assert draw_guess(Card.BARON, 0, many, rng) == Card.BARON
    assert draw_guess(Card.PRINCESS, Card.COUNTESS, many, rng) == Card.PRINCESS
    assert draw_guess(0, Card.COUNTESS, many, rng) == Card.PRINCE
    assert draw_guess(Card.GUARD, Card.COUNTESS, many, rng) == Card.PRINCE
    no_prince = left_counts(priest=2, baron=2, king=1)
    assert draw_guess(0, Card.COUNTESS, no_prince, rng) == Card.KING
    neither = left_counts(priest=2, baron=1)
    assert draw_guess(0, Card.COUNTESS, neither, rng) == Card.PRIEST


def test_the_drawn_guess_draws_among_the_most_unaccounted_values() -> None:
    """Never the Guard, never a value with fewer copies left; each tied value drawn."""
    rng = new_rng(4)
    left = left_counts(guard=5, priest=2, baron=2, handmaid=1, prince=2, king=1)
    drawn = [draw_guess(0, 0, left, rng) for _ in range(300)]
    assert set(drawn) == {Card.PRIEST, Card.BARON, Card.PRINCE}
    assert min(drawn.count(v) for v in set(drawn)) > 60


def test_played_guess_reads_a_countess_just_played_from_the_view() -> None:
    """Seat 1 plays the Countess beside the King: seat 0's Guard names a Prince."""
    game = after(Game(2, "huibers", deck=deal(8, 1, 7, 4, 6, 3)), "Handmaid", "Countess")
    assert game.turn == 0 and game.hand(0) == (Card.GUARD, Card.BARON)
    assert played_guess(game.view(0), 1, new_rng(0)) == Card.PRINCE


def test_the_chosen_guard_names_a_drawn_guess() -> None:
    """Seat 0 holds the Guard and the Princess: the search plays the Guard, and its guess is
    drawn among the values with the most copies seat 0 cannot account for (the Priest, Baron,
    Handmaid and Prince, two each); with ``guard_draw=false`` it is always the lowest of them."""
    game = Game(2, "huibers", deck=deal(3, 1, 6, 8))
    assert game.hand(0) == (Card.GUARD, Card.PRINCESS)
    settings = {**SMALL, "code_rules": False}
    drawn = {choice(game, seed=s, **settings) for s in range(24)}
    assert {a.card for a in drawn} == {Card.GUARD}
    assert len({a.guess for a in drawn}) > 1
    assert {a.guess for a in drawn} <= {Card.PRIEST, Card.BARON, Card.HANDMAID, Card.PRINCE}
    fixed = {choice(game, seed=s, guard_draw=False, **settings) for s in range(8)}
    assert fixed == {Action.from_str("Guard->1:Priest")}


@pytest.mark.parametrize(("variant", "players"), CONFIGS)
def test_uct_tree_invariants(variant: str, players: int) -> None:
    """Root visits sum to the iterations; every legal action is a root child; one node per
    iteration at most; in a perfect-information tree all children of a node are played by the
    same seat (the deck order is fixed, so the state after an action sequence is too)."""
    game = Game(players, variant, seed=23)
    iterations = 300
    nodes, value, count = uct(game.state, iterations, seed=2)
    root = tree_children(nodes, 0)
    assert int(nodes[0, F_VISITS]) == iterations
    assert sum(int(nodes[ch, F_VISITS]) for ch in root) == iterations
    assert {int(nodes[ch, F_ACTION]) for ch in root} == set(game.legal_packed())
    assert count <= iterations + 1
    for node in range(1, count):
        visits = int(nodes[node, F_VISITS])
        assert 1 <= visits <= int(nodes[node, F_AVAIL])
        assert 0 <= value[node] <= visits
        kids = tree_children(nodes, node)
        assert sum(int(nodes[ch, F_VISITS]) for ch in kids) <= visits
        assert len({int(nodes[ch, F_PLAYER]) for ch in kids}) <= 1


def test_votes_one_per_determinization() -> None:
    game = Game(2, "classic", seed=5)
    view = game.view(game.turn)
    legal = np.array(game.legal_packed(), dtype=np.int32)
    votes = np.zeros(len(legal), dtype=np.int64)
    visits = np.zeros(len(legal), dtype=np.int64)
    done = pimc_search(
        view, new_rng(3), legal, len(legal), 12, 40, 0.7, 0.0, GUARDS_DRAWN, False, votes, visits
    )
    assert done == 12 and votes.sum() == 12 and visits.sum() == 12 * 40


# --- time budget ----------------------------------------------------------------------------------


@pytest.mark.alone
def test_time_budget_runs_determinizations_for_the_given_seconds() -> None:
    game = Game(2, "classic", seed=5)
    view = game.view(game.turn)
    legal = np.array(game.legal_packed(), dtype=np.int32)
    params = np.array([1.0, 40.0, 0.7, 0.05, 1.0, 0.0, 0.0, 1.0])
    pimc_policy(view, legal, len(legal), new_rng(0), params, NO_TABLE)  # compile or load
    votes = np.zeros(len(legal), dtype=np.int64)
    visits = np.zeros(len(legal), dtype=np.int64)
    begun = time.perf_counter()
    done = pimc_search(
        view, new_rng(1), legal, len(legal), 1, 40, 0.7, 0.05, GUARDS_DRAWN, False, votes, visits
    )
    spent = time.perf_counter() - begun
    assert 0.05 <= spent < 0.5
    assert done > 1 and votes.sum() == done


# --- strength -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "players"), [("classic", 2), ("huibers", 2), ("classic", 4)])
def test_beats_random_from_either_seat(variant: str, players: int) -> None:
    """A small search (10 deals of 20 iterations) already wins more than its fair share against
    ``random`` from the first and from the last seat (one-sided binomial tests)."""
    fair = 1 / players
    bots = ["random"] * (players - 1)
    spec = "pimc[determinizations=10,iterations=20]"
    first = simulate([spec, *bots], 300, variant, seed=51)
    last = simulate([*bots, spec], 300, variant, seed=52)
    for wins in (first.wins[0], last.wins[-1]):
        assert binomtest(wins, 300, fair, alternative="greater").pvalue < 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["classic", "huibers"])
def test_default_parameters_beat_random(variant: str) -> None:
    """With the paper's parameters, more than 60% against ``random`` over both seats."""
    first = simulate(["pimc", "random"], 1000, variant, seed=61)
    last = simulate(["random", "pimc"], 1000, variant, seed=62)
    wins = first.wins[0] + last.wins[1]
    assert binomtest(wins, 2000, 0.6, alternative="greater").pvalue < 0.01
