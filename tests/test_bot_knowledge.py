"""The ``knowledge`` bot (the knowledge-based agent of Omarov et al. 2018) on hand-built deals where
the paper's rules (``code_rules=false``) or the further rules of the authors' code (the default)
dictate the answer, and its strength against the random player.

Deals are written top card first (docs/rules.md): ``deck[0]`` is set aside, in a two-player
``classic`` round ``deck[1..3]`` lie face up, then one card per seat in seat order, then the draw
pile. ``deal(*top)`` puts the given cards on top and the rest of the 16 below them.
"""

from __future__ import annotations

import pytest
from positions import after, deal

from arena.game import Action, Card, Game
from bots.policy import policy_bot
from bots.simulate import simulate


def choice(game: Game, code_rules: bool = False, seed: int = 0) -> Action:
    """What the knowledge-based bot plays for the seat to move (the paper's rules alone unless
    ``code_rules``)."""
    bot = policy_bot("knowledge")(code_rules=code_rules)
    bot.reset(seed)
    return bot.act(game.observation(game.turn))


# --- a move that wins at once -------------------------------------------------------------------
# (the wins every bot must find are in test_obvious_wins.py)


def test_the_paper_example_plays_the_guard() -> None:
    # Omarov et al. figures 1-2: player A holds Guard and Countess, player B a Priest; "the Guard
    # has been selected by the knowledge based agent" (naming the Priest: nothing played yet).
    game = Game(2, "huibers", deck=deal(8, 7, 2, 1))
    assert choice(game) == Action.from_str("Guard->1:Priest")


# --- otherwise the smallest card ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("top", "expected"),
    [
        ((8, 3, 1, 4), "Baron->1"),  # no Baron exception: the smallest card
        ((8, 3, 1, 5), "Baron->1"),
        ((8, 2, 1, 3), "Priest->1"),
        ((8, 4, 1, 6), "Handmaid"),
        ((8, 5, 1, 6), "Prince->1"),
        ((1, 6, 1, 8), "King->1"),
    ],
)
def test_smallest_card(top: tuple[int, ...], expected: str) -> None:
    assert choice(Game(2, "huibers", deck=deal(*top))) == Action.from_str(expected)


def test_a_known_card_that_cannot_be_beaten_leaves_the_smallest_card() -> None:
    # Seat 0 knows seat 1 holds the Countess and holds Handmaid and Baron: the Baron, smallest.
    game = after(Game(2, "huibers", deck=deal(8, 2, 7, 4, 1, 3)), "Priest->1", "Guard->0:Princess")
    assert choice(game) == Action.from_str("Baron->1")


# --- the Guard's guess: least encountered in the played deck -----------------------------------


def test_guess_at_the_start_is_the_priest() -> None:
    # Nothing played: every two-copy card ties, the lowest (the Priest) is named, even though
    # seat 0 holds the other Priest (the played deck is all the rule counts).
    game = Game(2, "huibers", deck=deal(8, 1, 4, 2))
    assert choice(game) == Action.from_str("Guard->1:Priest")


def test_guess_counts_the_played_cards() -> None:
    # A Handmaid and a Priest played: Baron and Prince are played least (twice left each).
    game = after(Game(2, "huibers", deck=deal(8, 3, 1, 4, 2, 1)), "Handmaid", "Priest")
    assert game.hand(0) == (Card.BARON, Card.GUARD)
    assert choice(game) == Action.from_str("Guard->1:Baron")


def test_guess_ignores_the_face_up_cards() -> None:
    # classic: Priest, Priest, Baron face up, nothing played yet: the Priest is named all the same.
    game = Game(2, "classic", deck=deal(8, 2, 2, 3, 1, 4, 6))
    assert choice(game) == Action.from_str("Guard->1:Priest")


# --- the rules enforced, the Prince -------------------------------------------------------------


@pytest.mark.parametrize("other", [Card.KING, Card.PRINCE])
def test_countess_forced(other: Card) -> None:
    game = Game(2, "huibers", deck=deal(8, 7, 1, int(other)))
    assert choice(game) == Action(Card.COUNTESS)


@pytest.mark.parametrize("other", range(1, 8))
def test_never_the_princess(other: int) -> None:
    spare = Card.PRIEST if other == Card.GUARD else Card.GUARD
    game = Game(2, "huibers", deck=deal(spare, 8, spare, other))
    assert choice(game).card == Card(other)


def test_prince_targets_itself_when_the_opponent_is_protected() -> None:
    game = after(Game(2, "huibers", deck=deal(8, 6, 4, 1, 2, 5)), "Guard->1:Princess", "Handmaid")
    assert game.hand(0) == (Card.KING, Card.PRINCE)
    assert choice(game) == Action.from_str("Prince->0")


# --- three players ------------------------------------------------------------------------------


def test_three_players_a_seat_it_can_knock_out_first() -> None:
    game = after(
        Game(3, "classic", deck=deal(8, 2, 4, 3, 5, 7, 1, 1)),
        "Priest->2",
        "Countess",
        "Guard->1:Princess",
    )
    assert game.hand(0) == (Card.PRINCE, Card.GUARD)
    assert choice(game) == Action.from_str("Guard->2:Baron")


def test_three_players_the_next_seat_in_turn_order() -> None:
    game = Game(3, "classic", deck=deal(8, 4, 5, 1, 2), first=2)
    assert choice(game) == Action.from_str("Guard->0:Priest")


# --- the authors' further rules (the default) -----------------------------------------------------


def test_by_default_the_authors_rules() -> None:
    assert policy_bot("knowledge")().params.tolist() == [1.0]


def test_the_priest_rather_than_the_guard() -> None:
    game = Game(2, "huibers", deck=deal(8, 1, 4, 2))
    assert choice(game) == Action.from_str("Guard->1:Priest")
    assert choice(game, code_rules=True) == Action.from_str("Priest->1")


def test_a_card_the_opponent_knows_is_played() -> None:
    # Seat 1 looked at seat 0's Prince; seat 0 draws a Handmaid: the paper plays the smaller
    # card, the code the Prince its opponent's Guard would name.
    game = after(Game(2, "huibers", deck=deal(8, 5, 2, 1, 4), first=1), "Priest->0")
    assert game.hand(0) == (Card.PRINCE, Card.HANDMAID)
    assert choice(game) == Action.from_str("Handmaid")
    assert choice(game, code_rules=True) == Action.from_str("Prince->1")


def test_never_a_baron_that_loses() -> None:
    # Seat 0 knows seat 1's Countess and holds Handmaid and Baron: the paper plays the Baron (the
    # smaller card) and loses the round; the code keeps it.
    game = after(Game(2, "huibers", deck=deal(8, 2, 7, 4, 1, 3)), "Priest->1", "Guard->0:Princess")
    assert choice(game) == Action.from_str("Baron->1")
    assert choice(game, code_rules=True) == Action.from_str("Handmaid")


def test_the_code_guess_leaves_out_the_face_up_cards_and_its_own_hand() -> None:
    # classic: Priest, Priest, Baron face up, seat 0 holds Guard and King: Handmaid and Prince
    # have the most copies unaccounted for (two each), one of them drawn with the seed.
    game = Game(2, "classic", deck=deal(8, 2, 2, 3, 1, 4, 6))
    guesses = {choice(game, code_rules=True, seed=seed) for seed in range(20)}
    assert guesses == {Action.from_str("Guard->1:Handmaid"), Action.from_str("Guard->1:Prince")}


@pytest.mark.parametrize("code_rules", [False, True])
def test_a_sure_win_first(code_rules: bool) -> None:
    game = after(Game(2, "huibers", deck=deal(8, 1, 3, 2, 1, 4)), "Priest->1", "Guard->0:Princess")
    assert game.hand(0) == (Card.GUARD, Card.HANDMAID)
    assert choice(game, code_rules) == Action.from_str("Guard->1:Baron")


# --- strength -----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["huibers", "classic"])
def test_knowledge_beats_random_from_either_seat(variant: str) -> None:
    first = simulate(["knowledge", "random"], 150_000, variant, seed=21)
    assert first.first_seat_ci[0] > 0.5
    second = simulate(["random", "knowledge"], 150_000, variant, seed=22)
    assert second.first_seat_ci[1] < 0.5
