"""The ``minimax`` bot (determinized minimax, Omarov et al. 2018): legal answers in every variant
and player count, the obvious wins, hand-worked end-games searched to the end, agreement of the
alpha-beta search with plain minimax, and its strength against the random player.

Deals are written top card first (docs/rules.md): ``deck[0]`` is set aside, in a two-player
``classic`` round ``deck[1..3]`` lie face up, then one card per seat in seat order, then the draw
pile.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from positions import after, deal, random_positions
from scipy.stats import binomtest

from arena.engine.layout import (
    EVENT_WIDTH,
    MAX_ACTIONS,
    N_CARDS,
    S_ALIVE,
    S_DECK,
    S_END,
    S_HAND,
    S_TOP,
    S_TURN,
    S_WINNERS,
    STATE_SIZE,
)
from arena.engine.rules import apply_action, legal_actions
from arena.game import Action, Card, Game
from bots.determinize import determinized
from bots.minimax import CUT_HIGH, CUT_LOW, STEP, best_move_state, search_state
from bots.policy import policies, policy_bot
from bots.simulate import simulate

_NO_EVENTS = np.empty((0, EVENT_WIDTH), dtype=np.int32)


def choice(game: Game, seed: int = 0, **settings: int) -> Action:
    """The minimax bot's play for the seat to move."""
    bot = policy_bot("minimax")(**settings)
    bot.reset(seed)
    return bot.act(game.observation(game.turn))


def values(state: np.ndarray, depth: int = 0) -> dict[str, float]:
    """The exact search value of every legal action of the seat to move, by action."""
    acts = np.empty(MAX_ACTIONS, dtype=np.int32)
    k = legal_actions(state, acts)
    out = np.empty(k, dtype=np.float64)
    search_state(state, acts, k, depth, out)
    return {str(Action.from_int(int(a))): float(v) for a, v in zip(acts[:k], out, strict=True)}


def win(plies: int) -> float:
    """The value of a sole win ``plies`` plies from the decision."""
    return 1.0 - STEP * plies


def loss(plies: int) -> float:
    """The value of a loss ``plies`` plies from the decision."""
    return STEP * plies


# --- registration -------------------------------------------------------------------------------


def test_registered_with_its_parameters() -> None:
    info = policies()["minimax"]
    assert info.params == {"determinizations": 100, "depth": 0}
    assert set(info.variants or ()) == {"classic", "huibers"}
    assert info.players == (2, 3, 4)


# --- legal actions only -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "players", "rounds"),
    [("classic", 2, 60), ("huibers", 2, 60), ("classic", 3, 40), ("classic", 4, 30)],
)
def test_answers_legal_actions_only(variant: str, players: int, rounds: int) -> None:
    bot = policy_bot("minimax")(determinizations=20)
    bot.reset(3)
    seen = 0
    for game, seat in random_positions(variant, players, rounds, seed=17 + players):
        obs = game.observation(seat)
        assert bot.act(obs) in obs.legal_actions
        seen += 1
    assert seen > 150


def test_depth_limited_search_answers_legal_actions_only() -> None:
    bot = policy_bot("minimax")(determinizations=10, depth=2)
    bot.reset(5)
    for game, seat in random_positions("classic", 4, 15, seed=23):
        obs = game.observation(seat)
        assert bot.act(obs) in obs.legal_actions


# --- the obvious wins ---------------------------------------------------------------------------


def test_guard_names_the_card_it_knows() -> None:
    # huibers. Seat 0 (Priest) draws a Handmaid and looks at seat 1's Baron; seat 1 draws the
    # Countess and plays her, keeping the Baron; seat 0 draws a Guard. Naming the Baron wins at
    # once, in every determinization.
    game = after(Game(2, "huibers", deck=deal(8, 2, 3, 4, 7, 1)), "Priest->1", "Countess")
    assert game.hand(0) == (Card.HANDMAID, Card.GUARD)
    assert choice(game) == Action.from_str("Guard->1:Baron")


def test_baron_with_the_princess_against_a_known_lower_card() -> None:
    # huibers. Seat 0 (Priest) draws the Princess and looks at seat 1's Handmaid; seat 1 draws a
    # Guard and misses (Guard->0:Baron); seat 0 draws a Baron: Baron->1 compares the Princess
    # with the Handmaid and wins at once.
    game = after(Game(2, "huibers", deck=deal(7, 2, 4, 8, 1, 3)), "Priest->1", "Guard->0:Baron")
    assert sorted(game.hand(0)) == [Card.BARON, Card.PRINCESS]
    assert choice(game) == Action.from_str("Baron->1")
    assert values(game.state)["Baron->1"] == win(1)


def test_three_players_guard_names_the_last_opponents_known_card() -> None:
    # classic, 3 players. Seat 0 (Guard) draws a Priest and looks at seat 1's King; seat 1 draws
    # a Guard and knocks seat 2 (Baron) out; seat 0 draws a Handmaid. Naming the King wins now.
    game = after(Game(3, "classic", deck=deal(7, 1, 6, 3, 2, 1, 4)), "Priest->1", "Guard->2:Baron")
    assert game.alive == (True, True, False)
    assert game.hand(0) == (Card.GUARD, Card.HANDMAID)
    assert choice(game, determinizations=30) == Action.from_str("Guard->1:King")
    assert values(game.state)["Guard->1:King"] == win(1)


def test_four_players_paranoid_opponents_gang_up() -> None:
    """classic, 4 players: the paranoid search lets every other seat play against seat 0. Seat 0
    (Priest) draws a Handmaid and looks at seat 2's Prince; seats 1, 2, 3 miss with Guards
    (seat 1 keeps a Guard); seat 0 draws a Guard. Knocking seat 2 out with the Guard leaves
    seat 0 holding the Handmaid, which seat 1 names on the next ply; keeping the Handmaid (played
    for protection) loses later. So every Guard is a loss in 2 plies and the Handmaid is played."""
    game = Game(4, "classic", deck=deal(8, 2, 1, 5, 1, 4, 1, 1, 3, 1))
    after(game, "Priest->2", "Guard->0:Princess", "Guard->0:Princess", "Guard->0:Princess")
    assert game.hand(0) == (Card.HANDMAID, Card.GUARD)
    assert game.hand(1) == (Card.GUARD,) and game.hand(2) == (Card.PRINCE,)
    got = values(game.state)
    assert all(v == loss(2) for a, v in got.items() if a.startswith("Guard"))
    assert got["Handmaid"] > loss(2)
    assert choice(game, determinizations=30) == Action(Card.HANDMAID)


# --- a hand-worked end-game ---------------------------------------------------------------------

#: huibers. Set aside the Princess; seat 0 is dealt a Priest and keeps it; seat 1 a Baron.
ENDGAME_DECK = [8, 2, 3, 4, 3, 1, 4, 1, 7, 5, 1, 1, 1, 2, 5, 6]
ENDGAME_PLAY = (
    "Handmaid",  # seat 0 draws a Handmaid and plays it
    "Baron",  # seat 1 (Baron, Baron): no target, no effect
    "Guard->1:Princess",  # miss
    "Handmaid",  # seat 1 (Baron, Handmaid)
    "Guard",  # seat 1 is protected: no effect
    "Countess",  # seat 1 (Baron, Countess) keeps the Baron
    "Prince->1",  # seat 1 discards the Baron and draws a Guard
    "Guard->0:Baron",  # seat 1 (Guard, Guard): miss
    "Guard->1:Priest",  # miss
    "Priest->0",  # seat 1 (Guard, Priest) looks at seat 0's Priest
)


def endgame() -> Game:
    """Seat 0 to move, holding Priest and Prince; seat 1 holds a Guard; one card (the King) is
    left in the draw pile; the Princess is set aside."""
    return after(Game(2, "huibers", deck=ENDGAME_DECK), *ENDGAME_PLAY)


def test_endgame_values_on_the_true_deal() -> None:
    """Priest->1: seat 0 keeps the Prince; seat 1 draws the King and, holding Guard and King,
    names the Prince: seat 0 is out on the next ply. Prince->1: seat 1 discards the Guard and
    draws the last card, the King; the deck is empty: Priest 2 against King 6, a loss now.
    Prince->0: seat 0 discards the Priest and draws the King; King 6 against Guard 1, a win now.
    The strategic rule (the lowest card, the Priest) loses; minimax plays the Prince at itself."""
    game = endgame()
    assert game.hand(0) == (Card.PRIEST, Card.PRINCE) and game.hand(1) == (Card.GUARD,)
    assert values(game.state) == {"Priest->1": loss(2), "Prince->0": win(1), "Prince->1": loss(1)}
    acts = np.array(game.legal_packed(), dtype=np.int32)
    best = best_move_state(game.state, acts, len(acts), 0)
    assert Action.from_int(int(best)) == Action.from_str("Prince->0")


#: Seat 0 has seen Guard 1, King 1, Princess 1 nowhere: they are seat 1's card, the last card of the
#: draw pile and the set-aside card in some order. For each order (seat 1, pile, set aside), the
#: best move worked out by hand as in test_endgame_values_on_the_true_deal and its value.
ENDGAME_TABLE = {
    # Seat 1 holds the Guard: only the Prince at itself wins (it draws King or Princess).
    (1, 6, 8): ("Prince->0", win(1)),
    (1, 8, 6): ("Prince->0", win(1)),
    # Seat 1 holds the King. Pile Guard: Prince->1 makes it draw the Guard (2 > 1), Prince->0
    # draws the Guard (1 < 6), Priest->1 lets it name the Prince.
    (6, 1, 8): ("Prince->1", win(1)),
    # Pile Princess: Prince->0 draws her (8 > 6); Priest->1 also wins, later (seat 1 holding King
    # and Princess must give away the Princess), so the sooner win is chosen.
    (6, 8, 1): ("Prince->0", win(1)),
    # Seat 1 holds the Princess: Prince->1 makes it discard her.
    (8, 1, 6): ("Prince->1", win(1)),
    (8, 6, 1): ("Prince->1", win(1)),
}


def test_every_determinization_of_the_endgame_matches_the_hand_worked_table() -> None:
    game = endgame()
    view = game.view(0)
    acts = np.array(game.legal_packed(), dtype=np.int32)
    orders = set()
    for seed in range(60):
        state = determinized(view, seed)
        order = (int(state[S_HAND + 2]), int(state[S_DECK + 15]), int(state[S_DECK]))
        orders.add(order)
        move, value = ENDGAME_TABLE[order]
        got = values(state)
        assert got[move] == value and max(got.values()) == value
        assert Action.from_int(int(best_move_state(state, acts, len(acts), 0))) == Action.from_str(
            move
        )
    assert orders == set(ENDGAME_TABLE)
    # The bot: both Princes collect votes (three orders each), the Priest none.
    picks = Counter(str(choice(game, seed=s, determinizations=40)) for s in range(12))
    assert set(picks) <= {"Prince->0", "Prince->1"}


def test_depth_limit_scores_open_positions_inside_the_band() -> None:
    """With depth 1 the two Princes are decided at once (as above); after the Priest the round is
    open: seat 0 keeps the Prince (5), seat 1 holds Guard and King (6 the higher): the showdown
    estimate is a loss, the lowest value of the band."""
    got = values(endgame().state, depth=1)
    assert got["Prince->0"] == win(1) and got["Prince->1"] == loss(1)
    assert got["Priest->1"] == pytest.approx(CUT_LOW)
    assert loss(16) < CUT_LOW < CUT_HIGH < win(16)


def test_an_immediate_win_is_preferred_to_a_later_one() -> None:
    """classic, 2 players, a Guard knowing the opponent's card wins now; a Handmaid keeping a
    higher card would win later at best: the search values them so and votes the Guard."""
    game = after(Game(2, "huibers", deck=deal(8, 2, 3, 4, 7, 1)), "Priest->1", "Countess")
    got = values(game.state)
    assert got["Guard->1:Baron"] == win(1)
    assert got["Handmaid"] < win(1)


# --- the search itself --------------------------------------------------------------------------


def _share(state: np.ndarray, seat: int) -> float:
    w = int(state[S_WINNERS])
    return 1.0 / bin(w).count("1") if (w >> seat) & 1 else 0.0


def _plain(state: np.ndarray, me: int, ply: int) -> float:
    """Plain minimax without pruning or merging, over the engine's kernels (the reference)."""
    if state[S_END] != 0 or state[S_ALIVE + me] == 0:
        s = _share(state, me) if state[S_END] != 0 else 0.0
        return win(ply) if s == 1.0 else loss(ply) if s == 0.0 else s
    acts = np.empty(MAX_ACTIONS, dtype=np.int32)
    k = legal_actions(state, acts)
    found = []
    for a in acts[:k]:
        child = state.copy()
        apply_action(child, a, _NO_EVENTS)
        found.append(_plain(child, me, ply + 1))
    return max(found) if state[S_TURN] == me else min(found)


@pytest.mark.parametrize(("variant", "players"), [("classic", 2), ("classic", 3), ("classic", 4)])
def test_alpha_beta_agrees_with_plain_minimax(variant: str, players: int) -> None:
    """In the last plies of random rounds, every root move's value equals plain minimax's."""
    checked = 0
    for game, seat in random_positions(variant, players, 60, seed=41 + players):
        if N_CARDS - int(game.state[S_TOP]) > 3:  # more than three cards left to draw
            continue
        state = game.state.copy()
        acts = np.empty(MAX_ACTIONS, dtype=np.int32)
        k = legal_actions(state, acts)
        expected = []
        for a in acts[:k]:
            child = state.copy()
            apply_action(child, a, _NO_EVENTS)
            expected.append(_plain(child, seat, 1))
        got = np.empty(k, dtype=np.float64)
        best = search_state(state, acts, k, 0, got)
        assert list(got) == expected and best == max(expected)
        assert state.shape == (STATE_SIZE,)
        checked += 1
    assert checked > 20


# --- strength -----------------------------------------------------------------------------------


def test_beats_random() -> None:
    """huibers, 300 rounds from each seat (fixed seeds): minimax wins well over half."""
    first = simulate(["minimax", "random"], 300, "huibers", seed=11)
    second = simulate(["random", "minimax"], 300, "huibers", seed=12)
    wins = first.wins[0] + second.wins[1]
    assert binomtest(wins, 600, 0.5, alternative="greater").pvalue < 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 4])
def test_beats_random_with_more_players(players: int) -> None:
    """classic, 3 or 4 players, 300 rounds with minimax in each seat: it wins more than its
    1/players part."""
    wins = 0
    for seat in range(players):
        bots = ["random"] * players
        bots[seat] = "minimax"
        wins += simulate(bots, 300, "classic", seed=50 + seat).wins[seat]
    n = 300 * players
    assert binomtest(wins, n, 1 / players, alternative="greater").pvalue < 1e-3
